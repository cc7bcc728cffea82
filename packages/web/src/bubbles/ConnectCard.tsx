/**
 * A "Connect <server>" card (docs/mcp-client.md, "OAuth"): an MCP server asked the user to sign in.
 * Connect opens the server's sign-in in a new tab (mcp-connect.tsx); it ends on the box's own
 * callback, which adds a "Connected" notice here.
 */
import type { NoticeEntry } from '@sendbox/protocol';
import { useContext } from 'react';
import { ConversationContext } from '../conversation-context.ts';
import { ConnectStatus, connectLabel, useMcpConnect } from '../mcp-connect.tsx';
import { ErrorAlert } from '../ErrorAlert.tsx';

/** The server a notice asks the user to connect (`connect: {server}`), if it is such a card. */
export function connectServerOf(entry: NoticeEntry): string | null {
  const connect = (entry as { connect?: unknown }).connect;
  const server =
    typeof connect === 'object' && connect !== null ? (connect as { server?: unknown }).server : null;
  return typeof server === 'string' ? server : null;
}

export function ConnectCard({ entry, server }: { entry: NoticeEntry; server: string }) {
  const context = useContext(ConversationContext);
  const { state, link, error, connect } = useMcpConnect(
    context?.client ?? null,
    context?.agentId ?? null,
    server,
  );

  return (
    <div className="connect-card" role="group" aria-label={`Connect ${server}`} data-testid="connect-card">
      <p className="connect-text">{entry.text}</p>
      {context && !context.readOnly && state !== 'connected' && (
        <button
          type="button"
          className="primary"
          disabled={state === 'busy'}
          onClick={connect}
          data-testid="connect-button"
        >
          {connectLabel(state, server)}
        </button>
      )}
      <ConnectStatus
        state={state}
        link={link}
        after="this conversation says when it is connected."
        connected={`${server} is connected. Ask the agent to try again.`}
      />
      <ErrorAlert message={error} />
    </div>
  );
}
