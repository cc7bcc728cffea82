/**
 * A "Connect <server>" card (docs/mcp-client.md, "OAuth"): an MCP server asked the user to sign in.
 * Connect asks the box for the server's authorization URL (`startMcpConnect`) and opens it in a new
 * tab; the sign-in there ends on the box's own callback, which adds a "Connected" notice here. The
 * tab is opened on the click itself (a tab opened after a network answer would be blocked as a
 * popup) and then sent to the URL; if the browser blocks it anyway, a link takes its place.
 */
import type { NoticeEntry } from '@sendbox/protocol';
import { useContext, useState } from 'react';
import { ConversationContext } from '../conversation-context.ts';

/** The server a notice asks the user to connect (`connect: {server}`), if it is such a card. */
export function connectServerOf(entry: NoticeEntry): string | null {
  const connect = (entry as { connect?: unknown }).connect;
  const server =
    typeof connect === 'object' && connect !== null ? (connect as { server?: unknown }).server : null;
  return typeof server === 'string' ? server : null;
}

export function ConnectCard({ entry, server }: { entry: NoticeEntry; server: string }) {
  const context = useContext(ConversationContext);
  const [state, setState] = useState<'idle' | 'busy' | 'opened' | 'connected'>('idle');
  const [link, setLink] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  function connect(): void {
    if (!context) return;
    setState('busy');
    setError(null);
    const tab = window.open('about:blank', '_blank');
    context.client.startMcpConnect(context.agentId, server).then(
      (started) => {
        const url = started.authorizationUrl;
        if (url !== undefined) {
          if (tab) {
            // The sign-in page gets no handle on this page.
            tab.opener = null;
            tab.location.href = url;
          } else setLink(url);
          setState('opened');
        } else {
          tab?.close();
          setState('connected');
        }
      },
      (cause: unknown) => {
        tab?.close();
        setState('idle');
        setError(cause instanceof Error ? cause.message : String(cause));
      },
    );
  }

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
          {state === 'busy'
            ? 'Opening…'
            : state === 'opened'
              ? `Connect ${server} again`
              : `Connect ${server}`}
        </button>
      )}
      {state === 'opened' && (
        <p className="connect-status" role="status" data-testid="connect-status">
          {link ? (
            <>
              Your browser blocked the new tab:{' '}
              <a href={link} target="_blank" rel="noopener noreferrer">
                open the sign-in page
              </a>
              .
            </>
          ) : (
            'Sign in in the new tab; this conversation says when it is connected.'
          )}
        </p>
      )}
      {state === 'connected' && (
        <p className="connect-status" role="status" data-testid="connect-status">
          {server} is connected. Ask the agent to try again.
        </p>
      )}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
