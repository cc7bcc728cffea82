/**
 * Entry point: mounts the app. The gateway serves this page to a signed-in browser only,
 * and the page holds no token: its API calls ride on the HttpOnly session cookie.
 */
import './zod-config.ts';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createApiClient } from './api/client.ts';
import { App } from './App.tsx';
import { prefetchLedger, rememberedAgentId } from './focused-agent.ts';
import './styles.css';

const root = createRoot(document.getElementById('root')!);
const client = createApiClient();
// The focused agent's ledger is the biggest answer the page waits for: ask for it now, while
// React mounts and the roster loads.
const focused = rememberedAgentId();
const prefetch = focused ? prefetchLedger(client, focused) : undefined;
root.render(
  <StrictMode>
    <App client={client} prefetch={prefetch} />
  </StrictMode>,
);
