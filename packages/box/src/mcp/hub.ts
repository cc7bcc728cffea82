/**
 * The box's MCP client side: mcp.json (config.ts), and for each agent its own instance of each
 * server it uses, started on first use (a confined stdio process, or an HTTP session), stopped
 * after ten idle minutes, when its config changes, when the agent is deleted and when the box
 * closes. Each agent reaches it through its ToolContext (`mcp`, access.ts), given by the
 * extension `for(agent)` returns.
 */
import path from 'node:path';
import { mkdir, rm } from 'node:fs/promises';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { AgentExtension } from '../agent/extension.ts';
import type { AgentLifecycleListener } from '../agent/lifecycle.ts';
import type { Confinement } from '../sandbox/confinement.ts';
import type { EgressProxies } from '../sandbox/egress-proxy.ts';
import { SecretStore } from '../secrets/store.ts';
import type { BoxSecretsStore } from '../stores/secrets.ts';
import { agentPaths } from '../stores/files/layout.ts';
import type { Profile } from '../stores/files/profile.ts';
import type { StoredDocument } from '../stores/documents.ts';
import type { McpAccess, McpServerView } from './access.ts';
import {
  configuredApproval,
  McpConfigFile,
  secretNames,
  type McpConfigSource,
  DEFAULT_MCP_TIMEOUT_MS,
  type HttpServerConfig,
  type McpServerConfig,
  type StdioServerConfig,
} from './config.ts';
import { McpCallError, McpConnection, type TransportPlan, type TransportStart } from './connection.ts';
import { hasOwnAuthorization, httpTransport } from './http-transport.ts';
import {
  beginConnect,
  callAuthProvider,
  finishConnect,
  McpAuthRequired,
  type ConnectStart,
} from './oauth.ts';
import { scrubberFor } from '../secrets/scrub.ts';
import { McpOAuthStore, mcpOAuthFile } from './oauth-store.ts';
import { LocalSignInFlags, type SignInFlags } from './sign-in-flags.ts';
import { serverHome, stdioTransport } from './stdio-launch.ts';
import { sessionsServerConfig } from './sessions-server.ts';
import { OutboundClient } from '../net/fetch.ts';
import type { FetchFunction } from '../net/fetch.ts';

export const DEFAULT_MCP_IDLE_MS = 10 * 60_000;

/** `listBoxSecrets`: names only. */
export interface BoxSecretsView {
  names: string[];
  /** Secrets mcp.json names (`${secret:NAME}`) that are not set, with the servers that need them. */
  missing: Array<{ name: string; servers: string[] }>;
}

export interface McpHubOptions {
  dataDir: string;
  secretKey: Buffer;
  confinement: Confinement;
  egress?: EgressProxies;
  /** PATH and LANG for stdio servers (the tools' environment). */
  baseEnv: Readonly<Record<string, string>>;
  /** The box log (the terminal): mcp.json problems, servers' stderr (scrubbed). */
  log?: (line: string) => void;
  /** How long an unused server stays up (default 10 minutes). */
  idleMs?: number;
  /** The home whose transcripts the `sessions` builtin reads (default: the box user's). */
  hostHome?: string;
  /** The box's own transcripts the `sessions` builtin reads (default: the data dir's; a cluster worker's copy). */
  boxTranscripts?: string;
  /** The box secrets (default: `box-secrets.enc` in the data dir; a cluster's: its table). */
  boxSecrets?: BoxSecretsStore;
  /** The servers (default: `mcp.json` in the data dir; a cluster's: its row). */
  config?: McpConfigSource;
  /** The OAuth state (default: `mcp-oauth.enc` in the data dir; a cluster's: its sealed row). */
  oauth?: StoredDocument;
  /** An agent's profile (its `mcp.servers`), from the agents' store. */
  profileOf: (agentId: string) => Promise<Profile>;
  /** The servers that need a sign-in (default: this box's, in memory; a cluster's: its sealed row). */
  signInFlags?: SignInFlags;
}

interface Held {
  connection: McpConnection;
  /** The config it was started with: a changed config starts a new instance. */
  fingerprint: string;
  config: McpServerConfig;
  idle: NodeJS.Timeout | null;
}

export class McpHub implements AgentLifecycleListener {
  readonly config: McpConfigSource;
  /** Box-wide secrets (`${secret:NAME}` in mcp.json), encrypted with the box's key. */
  readonly boxSecrets: BoxSecretsStore;
  /** OAuth clients and tokens of the HTTP servers, sealed with the box's key (oauth.ts). */
  readonly oauth: McpOAuthStore;
  private readonly held = new Map<string, Held>();
  /** One outbound client per HTTP server URL and allowance, closed with the box. */
  private readonly outbound = new Map<string, OutboundClient>();
  /** The tools each server listed last (any agent's instance, or a test), for the settings panel. */
  private readonly knownTools = new Map<string, { fingerprint: string; tools: Tool[] }>();
  /** HTTP servers that asked the user to sign in (a call or a test met McpAuthRequired), until connected. */
  private readonly signInNeeded: SignInFlags;
  private readonly log: (line: string) => void;
  private closed = false;

  constructor(private readonly options: McpHubOptions) {
    this.log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.config =
      options.config ??
      new McpConfigFile(options.dataDir, (problems) => {
        for (const problem of problems) this.log(`sendbox: mcp.json: ${problem}`);
      });
    this.boxSecrets =
      options.boxSecrets ??
      new SecretStore(path.join(options.dataDir, 'box-secrets.enc'), options.secretKey, 'box:secrets');
    this.oauth = new McpOAuthStore(options.oauth ?? mcpOAuthFile(options.dataDir, options.secretKey));
    this.signInNeeded = options.signInFlags ?? new LocalSignInFlags();
  }

  /**
   * Notes that a server asks for a sign-in, or that it is signed in; a flag that cannot be saved is
   * logged, and what the user did stands (the call's error, the tokens).
   */
  private async needsSignIn(server: string, needed = true): Promise<void> {
    await (needed ? this.signInNeeded.add(server) : this.signInNeeded.delete(server)).catch(
      (error: unknown) =>
        this.log(
          `sendbox: MCP ${server}: could not note that it ${needed ? 'needs a sign-in' : 'is signed in'}: ${(error as Error).message}`,
        ),
    );
  }

  /** The extension that gives one agent's tool calls its `mcp`. */
  for(agentId: string): AgentExtension {
    const access = this.access(agentId);
    return { toolServices: () => ({ mcp: access }) };
  }

  /** The servers one agent may use: enabled, and in its profile's `mcp.servers` when it has one. */
  private async allowed(agentId: string): Promise<Map<string, McpServerConfig>> {
    const { servers } = await this.config.current();
    const profile = await this.options.profileOf(agentId).catch(() => null);
    const only = profile?.mcp?.servers;
    const out = new Map<string, McpServerConfig>();
    for (const [name, config] of servers) {
      if (config.disabled) continue;
      if (only && !only.includes(name)) continue;
      out.set(name, config);
    }
    return out;
  }

  access(agentId: string): McpAccess {
    const serverConfig = async (server: string) => {
      const allowed = await this.allowed(agentId);
      const config = allowed.get(server);
      if (!config) {
        const names = [...allowed.keys()];
        throw new McpCallError(
          `There is no MCP server named ${JSON.stringify(server)} for you. ` +
            (names.length ? `Your servers: ${names.join(', ')}.` : 'You have no MCP servers.'),
        );
      }
      return config;
    };
    return {
      servers: async () => {
        const views: McpServerView[] = [];
        for (const [name, config] of await this.allowed(agentId)) {
          const held = this.held.get(key(agentId, name));
          const connection = held?.fingerprint === fingerprint(config) ? held.connection : undefined;
          const own = connection?.serverInfo.instructions?.split('\n')[0]?.trim();
          views.push({
            name,
            description:
              config.description ??
              own ??
              connection?.serverInfo.title ??
              'not started yet: get_mcp_tools with this server lists its tools',
            transport: config.kind,
            state: connection?.state ?? 'stopped',
            ...(connection?.lastError ? { lastError: connection.lastError } : {}),
          });
        }
        return views;
      },
      tools: async (server, signal) => {
        const config = await serverConfig(server);
        const connection = this.connection(agentId, server, config);
        try {
          const tools = await connection.tools(signal);
          this.knownTools.set(server, { fingerprint: fingerprint(config), tools });
          return tools;
        } catch (error) {
          throw await this.failed(error, server);
        } finally {
          this.touch(agentId, server);
        }
      },
      call: async (server, tool, args, signal) => {
        const connection = this.connection(agentId, server, await serverConfig(server));
        try {
          return await connection.call(tool, args, signal);
        } catch (error) {
          throw await this.failed(error, server);
        } finally {
          this.touch(agentId, server);
        }
      },
      approval: async (server, tool) => configuredApproval(await serverConfig(server), tool),
    };
  }

  /** A call's error as the model may read it; a server that asks for sign-in is noted for the panel. */
  private async failed(error: unknown, server: string): Promise<unknown> {
    if (error instanceof McpAuthRequired) await this.needsSignIn(server);
    return this.scrubbed(error, server);
  }

  /**
   * Whether the user has to sign an HTTP server in (`sign-in-needed`: it asked, and no connect has
   * answered since), has signed it in (`signed-in`: tokens are kept for its URL), or neither (null).
   */
  async signIn(server: string, config: McpServerConfig): Promise<'sign-in-needed' | 'signed-in' | null> {
    if (config.kind !== 'http') return null;
    if (await this.signInNeeded.has(server).catch(() => false)) return 'sign-in-needed';
    const kept = await this.oauth.server(server, config.url).catch(() => undefined);
    return kept?.tokens ? 'signed-in' : null;
  }

  /**
   * An error of a server's with the box secrets and the server's OAuth tokens taken out of its
   * message (a remote server's error text may echo a header), before it reaches the model or a log.
   */
  private async scrubbed(error: unknown, server: string): Promise<unknown> {
    if (!(error instanceof Error)) return error;
    const known = new Map(await this.boxSecrets.all().catch(() => new Map<string, string>()));
    const config = (await this.config.current()).servers.get(server);
    if (config?.kind === 'http') {
      const tokens = (await this.oauth.server(server, config.url).catch(() => undefined))?.tokens;
      if (tokens?.access_token) known.set(`${server} access token`, tokens.access_token);
      if (tokens?.refresh_token) known.set(`${server} refresh token`, tokens.refresh_token);
    }
    const text = scrubberFor(known).text(error.message);
    if (text === error.message) return error;
    if (error instanceof McpAuthRequired) return error;
    return new McpCallError(text);
  }

  /** The running instance for an agent's server, or a new one (a changed config replaces it). */
  private connection(agentId: string, server: string, config: McpServerConfig): McpConnection {
    if (this.closed) throw new McpCallError('The box is closing; MCP servers are stopped.');
    const k = key(agentId, server);
    const print = fingerprint(config);
    const held = this.held.get(k);
    if (held?.fingerprint === print) {
      if (held.idle) clearTimeout(held.idle);
      held.idle = null;
      return held.connection;
    }
    if (held) this.drop(k, held);
    const connection = new McpConnection(
      server,
      this.transportFor(agentId, server, config),
      config.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS,
    );
    this.held.set(k, { connection, fingerprint: print, config, idle: null });
    return connection;
  }

  private transportFor(agentId: string, server: string, config: McpServerConfig): TransportStart {
    if (config.kind === 'http') {
      return async () =>
        httpTransport({
          server,
          config,
          boxSecrets: await this.boxSecrets.all(),
          fetch: this.fetchFor(config),
          ...(hasOwnAuthorization(config)
            ? {}
            : { authProvider: await callAuthProvider(this.oauth, server, config.url) }),
        });
    }
    if (config.kind === 'builtin') {
      return async () => {
        const home = serverHome(this.options.dataDir, agentId, server);
        return this.stdio(
          agentId,
          server,
          await sessionsServerConfig(config, {
            dataDir: this.options.dataDir,
            hostHome: this.options.hostHome,
            boxTranscripts: this.options.boxTranscripts,
            serverHome: home,
          }),
          true,
        );
      };
    }
    return () => this.stdio(agentId, server, config, false);
  }

  private async stdio(
    agentId: string,
    server: string,
    config: StdioServerConfig,
    asBoxUser: boolean,
  ): Promise<TransportPlan> {
    const transport = await stdioTransport({
      dataDir: this.options.dataDir,
      agentId,
      sandboxDir: agentPaths(this.options.dataDir, agentId).sandbox,
      server,
      config,
      confinement: this.options.confinement,
      egress: this.options.egress,
      baseEnv: this.options.baseEnv,
      boxSecrets: await this.boxSecrets.all(),
      log: (line) => this.log(`mcp ${server} (agent ${agentId}): ${line}`),
      asBoxUser,
    });
    return 'refused' in transport ? transport : { transport };
  }

  /**
   * The box's outbound fetch for an HTTP server: public addresses only, unless the operator set
   * `allowPrivateHost` (then the host of its `url` only). A request waits as long as a call may.
   */
  private fetchFor(config: HttpServerConfig): FetchFunction {
    const host = new URL(config.url).hostname;
    const timeoutMs = (config.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS) + 5_000;
    const k = `${config.allowPrivateHost === true ? host : ''}\0${timeoutMs}`;
    let client = this.outbound.get(k);
    if (!client) {
      client = new OutboundClient({
        policy: { trustedHosts: config.allowPrivateHost === true ? [host] : [] },
        limits: { responseTimeoutMs: timeoutMs },
      });
      this.outbound.set(k, client);
    }
    return client.fetch;
  }

  /** An HTTP server of mcp.json by name, or a clear error (connects are box-wide: any agent's card). */
  private async httpServer(server: string): Promise<HttpServerConfig> {
    const config = (await this.config.current()).servers.get(server);
    if (!config) throw new McpCallError(`mcp.json has no server named ${JSON.stringify(server)}`);
    if (config.kind !== 'http') throw new McpCallError(`the MCP server ${server} is not an HTTP server`);
    return config;
  }

  /** The box secrets by name (never a value), and the ones mcp.json names that are not set. */
  async boxSecretsView(): Promise<BoxSecretsView> {
    const names = [...(await this.boxSecrets.all()).keys()].sort();
    const wanted = new Map<string, string[]>();
    for (const [server, config] of (await this.config.current()).servers) {
      for (const name of secretNames(config)) wanted.set(name, [...(wanted.get(name) ?? []), server]);
    }
    return {
      names,
      missing: [...wanted]
        .filter(([name]) => !names.includes(name))
        .map(([name, servers]) => ({ name, servers })),
    };
  }

  /** Sets (or with `undefined` removes) a box secret; the servers that use it start again with it. */
  async setBoxSecret(name: string, value: string | undefined): Promise<BoxSecretsView> {
    if (value === undefined) await this.boxSecrets.delete(name);
    else await this.boxSecrets.set(name, value);
    for (const [k, held] of this.held) {
      if (secretNames(held.config).includes(name)) this.drop(k, held);
    }
    return this.boxSecretsView();
  }

  /**
   * "Connect <server>", on a conversation's card (`agentId`: told when it is connected) or in the
   * settings panel: the authorization URL to open (the callback: `redirectUrl`).
   */
  async beginConnect(
    agentId: string | undefined,
    server: string,
    redirectUrl: string,
  ): Promise<ConnectStart> {
    const config = await this.httpServer(server);
    const started = await beginConnect({
      store: this.oauth,
      server,
      url: config.url,
      ...(agentId === undefined ? {} : { agentId }),
      redirectUrl,
      fetch: this.fetchFor(config),
    });
    if ('connected' in started) await this.needsSignIn(server, false);
    return started;
  }

  /** The OAuth callback: stores the tokens; the server's instances start again with them. */
  async finishConnect(state: string, code: string): Promise<{ server: string; agentId?: string }> {
    const configs = (await this.config.current()).servers;
    const done = await finishConnect({
      store: this.oauth,
      state,
      code,
      fetch: (server) => {
        const config = configs.get(server);
        if (config?.kind !== 'http') throw new Error(`the MCP server ${server} is no longer in mcp.json`);
        return this.fetchFor(config);
      },
    });
    await this.needsSignIn(done.server, false);
    for (const [k, held] of this.held) if (k.endsWith(`\0${done.server}`)) this.drop(k, held);
    return done;
  }

  /** Restarts the idle clock of a server after a use. */
  private touch(agentId: string, server: string): void {
    const k = key(agentId, server);
    const held = this.held.get(k);
    if (!held) return;
    if (held.idle) clearTimeout(held.idle);
    held.idle = setTimeout(() => this.drop(k, held), this.options.idleMs ?? DEFAULT_MCP_IDLE_MS);
    held.idle.unref();
  }

  private drop(k: string, held: Held): void {
    if (held.idle) clearTimeout(held.idle);
    if (this.held.get(k) === held) this.held.delete(k);
    void held.connection.close();
  }

  /**
   * One server as the settings panel shows it: its instances for this config (how many agents run
   * it, the state of the last one to fail or start), and the tools it listed last.
   */
  serverStatus(server: string, config: McpServerConfig): McpServerStatus {
    const print = fingerprint(config);
    let running = 0;
    let state: McpServerStatus['state'] = 'stopped';
    let lastError: string | null = null;
    for (const [k, held] of this.held) {
      if (k.split('\0')[1] !== server || held.fingerprint !== print) continue;
      const connection = held.connection;
      if (connection.state === 'ready') running++;
      if (connection.state === 'failed') lastError = connection.lastError;
      if (STATE_RANK[connection.state] > STATE_RANK[state]) state = connection.state;
    }
    const known = this.knownTools.get(server);
    return { running, state, lastError, tools: known?.fingerprint === print ? known.tools : null };
  }

  /**
   * "Test" in the settings panel: starts the server as mcp.json would (a stdio one confined in a
   * scratch sandbox of its own, never an agent's), lists its tools and stops it.
   */
  async testServer(server: string, config: McpServerConfig): Promise<McpServerCheck> {
    const started = Date.now();
    const sandbox = agentPaths(this.options.dataDir, SETTINGS_TEST_AGENT).sandbox;
    await mkdir(sandbox, { recursive: true, mode: 0o700 });
    await this.options.confinement.prepare(sandbox);
    const connection = new McpConnection(
      server,
      this.transportFor(SETTINGS_TEST_AGENT, server, config),
      config.timeoutMs ?? DEFAULT_MCP_TIMEOUT_MS,
    );
    try {
      const tools = await connection.tools();
      this.knownTools.set(server, { fingerprint: fingerprint(config), tools });
      const title = connection.serverInfo.title ? ` (${connection.serverInfo.title})` : '';
      return {
        ok: true,
        message: `${server}${title} started and offers ${tools.length} tool${tools.length === 1 ? '' : 's'}.`,
        tools,
        elapsedMs: Date.now() - started,
      };
    } catch (error) {
      if (error instanceof McpAuthRequired) await this.needsSignIn(server);
      return { ok: false, message: (error as Error).message, tools: [], elapsedMs: Date.now() - started };
    } finally {
      await connection.close();
    }
  }

  /** How many server instances run now (status, the benchmark). */
  running(): Array<{ agentId: string; server: string; state: string }> {
    return [...this.held.entries()].map(([k, held]) => {
      const [agentId, server] = k.split('\0') as [string, string];
      return { agentId, server, state: held.connection.state };
    });
  }

  async agentDeleted(agentId: string): Promise<void> {
    const closing: Array<Promise<void>> = [];
    for (const [k, held] of this.held) {
      if (!k.startsWith(`${agentId}\0`)) continue;
      this.held.delete(k);
      if (held.idle) clearTimeout(held.idle);
      closing.push(held.connection.close());
    }
    await Promise.all(closing);
    await rm(path.join(this.options.dataDir, 'mcp-homes', agentId), { recursive: true, force: true });
  }

  async hostClosed(): Promise<void> {
    this.closed = true;
    const clients = [...this.outbound.values()];
    this.outbound.clear();
    const all = [...this.held.values()];
    this.held.clear();
    await Promise.all(
      all.map((held) => {
        if (held.idle) clearTimeout(held.idle);
        return held.connection.close();
      }),
    );
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
  }
}

/** The scratch agent whose sandbox a settings-panel test starts a stdio server in. */
const SETTINGS_TEST_AGENT = 'mcp-settings-test';

const STATE_RANK: Record<McpServerStatus['state'], number> = { stopped: 0, ready: 1, starting: 2, failed: 3 };

export interface McpServerStatus {
  /** Agents with a ready instance of this config. */
  running: number;
  /** The most telling state of its instances: failed, then starting, then ready. */
  state: 'stopped' | 'starting' | 'ready' | 'failed';
  lastError: string | null;
  /** The tools it listed last (null: not started since the box started or the config changed). */
  tools: Tool[] | null;
}

export interface McpServerCheck {
  ok: boolean;
  /** What happened, or what is wrong (the server's own error). */
  message: string;
  tools: Tool[];
  elapsedMs: number;
}

function key(agentId: string, server: string): string {
  return `${agentId}\0${server}`;
}

function fingerprint(config: McpServerConfig): string {
  return JSON.stringify(config);
}
