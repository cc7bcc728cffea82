/**
 * MCP authorization (the spec's OAuth 2.1 flow) through the SDK's client auth (`auth()` with an
 * `OAuthClientProvider`): protected-resource metadata, authorization-server discovery, dynamic
 * client registration, authorization code with PKCE, and refresh. Tokens are box-wide per server
 * (oauth-store.ts, sealed with the box's key); they travel only in the Authorization header of the
 * server's own requests and never reach a transcript, a log, an event or the model.
 *
 * Two uses of one provider:
 * - in a call (`mode: 'call'`): the stored tokens; on a 401 the SDK refreshes them with the stored
 *   client; when that cannot be done (never connected, refresh refused) the call ends with
 *   McpAuthRequired and the conversation gets a "Connect <server>" card;
 * - the card's connect (`mode: 'connect'`): registers the client for the box's own callback URL
 *   when needed and builds the authorization URL (state, PKCE challenge); the callback
 *   (`/oauth/mcp/callback` on the gateway) trades the code for tokens.
 */
import { randomBytes } from 'node:crypto';
import {
  auth,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FetchFunction } from '../net/fetch.ts';
import { McpCallError } from './connection.ts';
import type { McpOAuthStore, ServerAuth } from './oauth-store.ts';

/** The path of the box's OAuth callback on the gateway (docs/gateway.md). */
export const OAUTH_CALLBACK_PATH = '/oauth/mcp/callback';
/** How long a connect may take from the card to the callback. */
export const CONNECT_TTL_MS = 10 * 60_000;

/** A server needs the user to connect it (sign in); the message is model-readable. */
export class McpAuthRequired extends McpCallError {
  constructor(readonly server: string) {
    super(
      `The MCP server ${server} needs the user to sign in before it can be used. A "Connect ${server}" ` +
        'card was shown to the user: tell them to use it, then try again once they say it is done.',
    );
  }
}

type Mode = { kind: 'call' } | { kind: 'connect'; state: string; redirectUrl: string };

function clientMetadata(redirectUrl: string): OAuthClientMetadata {
  return {
    client_name: 'sendbox',
    redirect_uris: [redirectUrl],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

/** A placeholder while nothing was registered: a call never registers a client (it needs the user). */
const UNREGISTERED = 'http://127.0.0.1/oauth/mcp/callback';

class ServerOAuthProvider implements OAuthClientProvider {
  /** The authorization URL the SDK built (connect). */
  authorizationUrl: URL | null = null;

  constructor(
    private readonly store: McpOAuthStore,
    private readonly server: string,
    private readonly url: string,
    /** What was kept when the provider was made (the sync getters read it). */
    private readonly kept: ServerAuth | undefined,
    private readonly mode: Mode,
  ) {}

  get redirectUrl(): string {
    return this.mode.kind === 'connect' ? this.mode.redirectUrl : (this.kept?.redirectUrl ?? UNREGISTERED);
  }

  get clientMetadata(): OAuthClientMetadata {
    return clientMetadata(this.redirectUrl);
  }

  state(): string {
    if (this.mode.kind === 'connect') return this.mode.state;
    throw new McpAuthRequired(this.server);
  }

  async clientInformation(): Promise<OAuthClientInformationMixed | undefined> {
    const client = (await this.store.server(this.server, this.url))?.client;
    if (this.mode.kind === 'call') {
      // Registering needs the box's callback URL, which only a connect from the page knows.
      if (!client) throw new McpAuthRequired(this.server);
      return client;
    }
    // A client registered for another callback URL (the box moved to another port) registers again.
    const uris = (client as { redirect_uris?: unknown } | undefined)?.redirect_uris;
    return Array.isArray(uris) && uris.includes(this.mode.redirectUrl) ? client : undefined;
  }

  async saveClientInformation(client: OAuthClientInformationMixed): Promise<void> {
    const redirectUrl = this.redirectUrl;
    await this.store.updateServer(this.server, this.url, (kept) => ({ ...kept, client, redirectUrl }));
  }

  async tokens(): Promise<OAuthTokens | undefined> {
    return (await this.store.server(this.server, this.url))?.tokens;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    await this.store.updateServer(this.server, this.url, (kept) => ({ ...kept, tokens }));
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    if (this.mode.kind === 'call') throw new McpAuthRequired(this.server);
    this.authorizationUrl = authorizationUrl;
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    if (this.mode.kind === 'connect') await this.store.setCodeVerifier(this.mode.state, codeVerifier);
  }

  async codeVerifier(): Promise<string> {
    const pending = this.mode.kind === 'connect' ? await this.store.pending(this.mode.state) : undefined;
    if (!pending?.codeVerifier) throw new McpAuthRequired(this.server);
    return pending.codeVerifier;
  }

  async invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): Promise<void> {
    if (scope === 'verifier') return;
    await this.store.updateServer(this.server, this.url, (kept) => {
      const next = { ...kept };
      if (scope === 'all' || scope === 'tokens') delete next.tokens;
      if (scope === 'all' || scope === 'client') delete next.client;
      if (scope === 'all' || scope === 'discovery') delete next.discovery;
      return next;
    });
  }

  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    return (await this.store.server(this.server, this.url))?.discovery;
  }

  async saveDiscoveryState(discovery: OAuthDiscoveryState): Promise<void> {
    await this.store.updateServer(this.server, this.url, (kept) => ({ ...kept, discovery }));
  }
}

/** The provider a server's transport uses in calls: stored tokens, refreshed on a 401. */
export async function callAuthProvider(
  store: McpOAuthStore,
  server: string,
  url: string,
): Promise<OAuthClientProvider> {
  return new ServerOAuthProvider(store, server, url, await store.server(server, url), { kind: 'call' });
}

export type ConnectStart = { connected: true } | { authorizationUrl: string };

/**
 * The card's "Connect": registers the box as a client when needed and returns the authorization
 * URL to open (or `connected` when stored credentials already work).
 */
export async function beginConnect(input: {
  store: McpOAuthStore;
  server: string;
  url: string;
  /** The agent whose card started it (absent: the settings panel). */
  agentId?: string;
  redirectUrl: string;
  fetch: FetchFunction;
  now?: () => number;
}): Promise<ConnectStart> {
  const { store, server, url } = input;
  const state = randomBytes(32).toString('base64url');
  await store.addPending(state, {
    server,
    ...(input.agentId === undefined ? {} : { agentId: input.agentId }),
    url,
    redirectUrl: input.redirectUrl,
    expiresAt: (input.now ?? Date.now)() + CONNECT_TTL_MS,
  });
  const provider = new ServerOAuthProvider(store, server, url, await store.server(server, url), {
    kind: 'connect',
    state,
    redirectUrl: input.redirectUrl,
  });
  const result = await auth(provider, { serverUrl: url, fetchFn: input.fetch });
  if (result === 'AUTHORIZED' || !provider.authorizationUrl) {
    await store.takePending(state);
    return { connected: true };
  }
  return { authorizationUrl: provider.authorizationUrl.href };
}

/** The callback: trades the code for tokens. Throws a user-readable message when it cannot. */
export async function finishConnect(input: {
  store: McpOAuthStore;
  state: string;
  code: string;
  fetch: (server: string) => FetchFunction;
}): Promise<{ server: string; agentId?: string }> {
  const pending = await input.store.pending(input.state);
  if (!pending) {
    throw new Error(
      'This sign-in link is unknown, used or older than ten minutes. Use Connect (in the conversation or the Connectors panel) again.',
    );
  }
  const provider = new ServerOAuthProvider(
    input.store,
    pending.server,
    pending.url,
    await input.store.server(pending.server, pending.url),
    { kind: 'connect', state: input.state, redirectUrl: pending.redirectUrl },
  );
  try {
    await auth(provider, {
      serverUrl: pending.url,
      authorizationCode: input.code,
      fetchFn: input.fetch(pending.server),
    });
  } finally {
    await input.store.takePending(input.state);
  }
  return { server: pending.server, ...(pending.agentId === undefined ? {} : { agentId: pending.agentId }) };
}
