/**
 * Entry point: finds this tab's half of the browser session, then mounts the app. The
 * gateway serves this page to a browser with the session cookie; the page holds no token,
 * and its API calls carry the tab proof (api/tab-session.ts) with the HttpOnly cookie.
 */
import './zod-config.ts';
import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { createApiClient, type ApiClient } from './api/client.ts';
import { claimTabSession, type TabSession } from './api/tab-session.ts';
import { App } from './App.tsx';
import { prefetchLedger, rememberedAgentId, type LedgerPrefetch } from './focused-agent.ts';
import { registerServiceWorker } from './pwa.ts';
import { SignedOut } from './SignedOut.tsx';
import './styles.css';

function Root({
  session,
  client,
  prefetch,
}: {
  session: TabSession;
  client: ApiClient;
  prefetch: LedgerPrefetch | undefined;
}) {
  const [signedOut, setSignedOut] = useState<'no-proof' | 'signed-out' | null>(
    session.proof() === null ? 'no-proof' : null,
  );
  // Another tab of this browser signed out: so did this one.
  useEffect(() => session.onSignedOut(() => setSignedOut('signed-out')), [session]);
  if (signedOut !== null) return <SignedOut reason={signedOut} />;
  return (
    <App
      client={client}
      prefetch={prefetch}
      onSignOut={async () => {
        await client.signOut();
        session.signOut();
        setSignedOut('signed-out');
      }}
    />
  );
}

async function start(): Promise<void> {
  const root = createRoot(document.getElementById('root')!);
  const session = await claimTabSession();
  const client = createApiClient({ session });
  // The focused agent's ledger is the biggest answer the page waits for: ask for it now, while
  // React mounts and the roster loads.
  const focused = session.proof() === null ? null : rememberedAgentId();
  const prefetch = focused ? prefetchLedger(client, focused) : undefined;
  root.render(
    <StrictMode>
      <Root session={session} client={client} prefetch={prefetch} />
    </StrictMode>,
  );
}

registerServiceWorker();
void start();
