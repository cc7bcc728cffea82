/**
 * "Connect <server>" (docs/mcp-client.md, "OAuth"), on a conversation's card or on a server's row
 * in the Connectors panel: asks the box for the server's authorization URL (`startMcpConnect`) and
 * opens it in a new tab; the sign-in there ends on the box's own callback. The tab is opened on the
 * click itself (a tab opened after a network answer would be blocked as a popup) and then sent to
 * the URL, without a handle on this page; if the browser blocks it anyway, a link takes its place.
 */
import { useState } from 'react';
import type { ApiClient } from './api/client.ts';

export type ConnectState = 'idle' | 'busy' | 'opened' | 'connected';

export function useMcpConnect(client: ApiClient | null, agentId: string | null, server: string) {
  const [state, setState] = useState<ConnectState>('idle');
  const [link, setLink] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  function connect(): void {
    if (!client) return;
    setState('busy');
    setError(null);
    const tab = window.open('about:blank', '_blank');
    client.startMcpConnect(agentId, server).then(
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

  return { state, link, error, connect };
}

/** The Connect button's words. */
export function connectLabel(state: ConnectState, server: string): string {
  if (state === 'busy') return 'Opening…';
  return state === 'opened' ? `Connect ${server} again` : `Connect ${server}`;
}

/**
 * What a Connect says after the click: sign in in the new tab (`after` says where success shows),
 * or the link the browser blocked; then `connected` once the server needed no sign-in.
 */
export function ConnectStatus({
  state,
  link,
  after,
  connected,
}: {
  state: ConnectState;
  link: string | null;
  after: string;
  connected: string;
}) {
  if (state !== 'opened' && state !== 'connected') return null;
  return (
    <p className="connect-status" role="status" data-testid="connect-status">
      {state === 'connected' ? (
        connected
      ) : link ? (
        <>
          Your browser blocked the new tab:{' '}
          <a href={link} target="_blank" rel="noopener noreferrer">
            open the sign-in page
          </a>
          .
        </>
      ) : (
        `Sign in in the new tab; ${after}`
      )}
    </p>
  );
}
