/**
 * What the box keeps of its MCP servers' OAuth (mcp/oauth.ts), box-wide, in
 * `<data-dir>/mcp-oauth.enc` sealed with the box's key (secrets/sealed-file.ts), or in a cluster
 * in one row every worker shares, sealed with the cluster's secrets key
 * (stores/postgres/sealed-documents.ts): tokens are never readable at rest. Per server: the URL they are for (a changed `url` starts over), the
 * client the authorization server registered, the tokens, the discovery state and the redirect URL
 * the client was registered with; and the connects in progress, by their `state`, for ten minutes.
 */
import path from 'node:path';
import type { OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { SealedFileDocument } from '../secrets/sealed-file.ts';
import type { StoredDocument } from '../stores/documents.ts';

export const MCP_OAUTH_FILE = 'mcp-oauth.enc';
/** The associated data of the sealed file, and the name of a cluster's sealed document. */
export const MCP_OAUTH_DOCUMENT = 'box:mcp-oauth';

/** `<data-dir>/mcp-oauth.enc`, sealed with the box's key. */
export function mcpOAuthFile(dataDir: string, key: Buffer): StoredDocument {
  return new SealedFileDocument(path.join(dataDir, MCP_OAUTH_FILE), key, MCP_OAUTH_DOCUMENT);
}

export interface ServerAuth {
  /** The server URL these are for. */
  url: string;
  redirectUrl?: string;
  client?: OAuthClientInformationMixed;
  tokens?: OAuthTokens;
  discovery?: OAuthDiscoveryState;
}

export interface PendingConnect {
  server: string;
  /** The agent whose card started it: told when the server is connected (absent: the settings panel). */
  agentId?: string;
  url: string;
  redirectUrl: string;
  codeVerifier?: string;
  /** Epoch ms. */
  expiresAt: number;
}

interface Sealed {
  servers: Record<string, ServerAuth>;
  pending: Record<string, PendingConnect>;
}

export class McpOAuthStore {
  constructor(
    /** The sealed document (mcpOAuthFile, or a cluster's row). */
    private readonly document: StoredDocument,
    private readonly now: () => number = Date.now,
  ) {}

  private async load(): Promise<Sealed> {
    return normalized(await this.document.read());
  }

  /** What is kept for `server` at `url` (nothing when it was kept for another URL). */
  async server(server: string, url: string): Promise<ServerAuth | undefined> {
    const kept = (await this.load()).servers[server];
    return kept?.url === url ? kept : undefined;
  }

  /** Changes what is kept for `server` at `url` (starting over when it was for another URL). */
  updateServer(server: string, url: string, change: (auth: ServerAuth) => ServerAuth): Promise<void> {
    return this.update((sealed) => {
      const kept = sealed.servers[server];
      sealed.servers[server] = change(kept?.url === url ? kept : { url });
    });
  }

  /** Forgets a server's client and tokens (the settings panel's "Disconnect"). */
  forget(server: string): Promise<boolean> {
    return this.update((sealed) => {
      const had = server in sealed.servers;
      delete sealed.servers[server];
      return had;
    });
  }

  /** Whether a server at `url` holds tokens. */
  async connected(server: string, url: string): Promise<boolean> {
    return (await this.server(server, url))?.tokens !== undefined;
  }

  addPending(state: string, pending: PendingConnect): Promise<void> {
    return this.update((sealed) => {
      this.prune(sealed);
      sealed.pending[state] = pending;
    });
  }

  async pending(state: string): Promise<PendingConnect | undefined> {
    const found = (await this.load()).pending[state];
    return found && found.expiresAt > this.now() ? found : undefined;
  }

  setCodeVerifier(state: string, codeVerifier: string): Promise<void> {
    return this.update((sealed) => {
      const pending = sealed.pending[state];
      if (pending) pending.codeVerifier = codeVerifier;
    });
  }

  /** Takes a connect in progress out (a `state` is used once); undefined when unknown or expired. */
  takePending(state: string): Promise<PendingConnect | undefined> {
    return this.update((sealed) => {
      this.prune(sealed);
      const pending = sealed.pending[state];
      delete sealed.pending[state];
      return pending;
    });
  }

  private prune(sealed: Sealed): void {
    for (const [state, pending] of Object.entries(sealed.pending)) {
      if (pending.expiresAt <= this.now()) delete sealed.pending[state];
    }
  }

  private update<T>(change: (sealed: Sealed) => T): Promise<T> {
    return this.document.update((current) => {
      const next = normalized(current);
      const result = change(next);
      return { value: next, result };
    });
  }
}

function normalized(raw: unknown): Sealed {
  const kept = (raw ?? {}) as Partial<Sealed>;
  return { servers: kept.servers ?? {}, pending: kept.pending ?? {} };
}
