/** Entry point: reads the token the gateway injected into the page and mounts the app. */
import './zod-config.ts';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createApiClient } from './api/client.ts';
import { App } from './App.tsx';
import { prefetchLedger, rememberedAgentId } from './focused-agent.ts';
import { TOKEN_PLACEHOLDER } from './token.ts';
import './styles.css';

function pageToken(): string | null {
  const token = document.querySelector<HTMLMetaElement>('meta[name="sendbox-token"]')?.content ?? '';
  return token === '' || token === TOKEN_PLACEHOLDER ? null : token;
}

const root = createRoot(document.getElementById('root')!);
const token = pageToken();
const client = token ? createApiClient({ token }) : null;
// The focused agent's ledger is the biggest answer the page waits for: ask for it now, while
// React mounts and the roster loads.
const focused = client ? rememberedAgentId() : null;
const prefetch = client && focused ? prefetchLedger(client, focused) : undefined;
root.render(
  <StrictMode>
    {client ? (
      <App client={client} prefetch={prefetch} />
    ) : (
      <p className="fatal" role="alert">
        This page has no access token. Open it from the address that <code>sendbox</code> prints when it
        starts (the gateway injects the token into the page); a copy of the built files cannot talk to the
        gateway on its own.
      </p>
    )}
  </StrictMode>,
);
