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
import { agentPaths } from '../stores/files/layout.ts';
import { readProfile } from '../stores/files/profile.ts';
import type { McpAccess, McpServerView } from './access.ts';
import {
  configuredApproval,
  McpConfigFile,
  DEFAULT_MCP_TIMEOUT_MS,
  type McpServerConfig,
  type StdioServerConfig,
} from './config.ts';
import { McpCallError, McpConnection, type TransportStart } from './connection.ts';
import { serverHome, stdioTransport } from './stdio-launch.ts';
import { sessionsServerConfig } from './sessions-server.ts';

export const DEFAULT_MCP_IDLE_MS = 10 * 60_000;

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
  /** How an HTTP or builtin server is reached (http.ts, builtin.ts); absent: they are refused. */
  remote?: (
    server: string,
    config: Exclude<McpServerConfig, { kind: 'stdio' }>,
    agentId: string,
  ) => TransportStart;
}

interface Held {
  connection: McpConnection;
  /** The config it was started with: a changed config starts a new instance. */
  fingerprint: string;
  idle: NodeJS.Timeout | null;
}

export class McpHub implements AgentLifecycleListener {
  readonly config: McpConfigFile;
  /** Box-wide secrets (`${secret:NAME}` in mcp.json), encrypted with the box's key. */
  readonly boxSecrets: SecretStore;
  private readonly held = new Map<string, Held>();
  /** The tools each server listed last (any agent's instance, or a test), for the settings panel. */
  private readonly knownTools = new Map<string, { fingerprint: string; tools: Tool[] }>();
  private readonly log: (line: string) => void;
  private closed = false;

  constructor(private readonly options: McpHubOptions) {
    this.log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
    this.config = new McpConfigFile(options.dataDir, (problems) => {
      for (const problem of problems) this.log(`sendbox: mcp.json: ${problem}`);
    });
    this.boxSecrets = new SecretStore(
      path.join(options.dataDir, 'box-secrets.enc'),
      options.secretKey,
      'box:secrets',
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
    const profile = await readProfile(agentPaths(this.options.dataDir, agentId).profile).catch(() => null);
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
        } finally {
          this.touch(agentId, server);
        }
      },
      call: async (server, tool, args, signal) => {
        const connection = this.connection(agentId, server, await serverConfig(server));
        try {
          return await connection.call(tool, args, signal);
        } finally {
          this.touch(agentId, server);
        }
      },
      approval: async (server, tool) => configuredApproval(await serverConfig(server), tool),
    };
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
    this.held.set(k, { connection, fingerprint: print, idle: null });
    return connection;
  }

  private transportFor(agentId: string, server: string, config: McpServerConfig): TransportStart {
    if (config.kind === 'builtin') {
      return async () => {
        const home = serverHome(this.options.dataDir, agentId, server);
        return this.stdio(
          agentId,
          server,
          await sessionsServerConfig(config, {
            dataDir: this.options.dataDir,
            hostHome: this.options.hostHome,
            serverHome: home,
          }),
          true,
        );
      };
    }
    if (config.kind !== 'stdio') {
      const remote = this.options.remote?.(server, config, agentId);
      return (
        remote ??
        (() => Promise.resolve({ refused: `The MCP server ${server} cannot be reached from this box.` }))
      );
    }
    return () => this.stdio(agentId, server, config, false);
  }

  private async stdio(agentId: string, server: string, config: StdioServerConfig, asBoxUser: boolean) {
    return stdioTransport({
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
    const all = [...this.held.values()];
    this.held.clear();
    await Promise.all(
      all.map((held) => {
        if (held.idle) clearTimeout(held.idle);
        return held.connection.close();
      }),
    );
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
