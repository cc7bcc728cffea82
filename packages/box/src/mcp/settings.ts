/**
 * The MCP part of the settings panel (docs/gateway.md, "MCP servers"): every entry of mcp.json
 * with its status and the tools it offers, the file's problems (file, server, field), and the
 * edits: add, change, rename, remove (mcp.json rewritten atomically, the rest of it kept), test,
 * and the `sessions` switch (`"sessions": {"builtin": "sessions"}`).
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { HostError } from '../agent/errors.ts';
import { parseServer, SERVER_NAME } from './config.ts';
import type { McpHub, McpServerCheck } from './hub.ts';

export const SESSIONS_SERVER = 'sessions';

export interface McpToolSummary {
  name: string;
  description: string;
}

export interface McpServerRow {
  name: string;
  /** null while the entry is not valid. */
  transport: 'stdio' | 'http' | 'builtin' | null;
  /** The entry as mcp.json holds it (secrets stay `${secret:NAME}` references). */
  entry: unknown;
  /** What is wrong with the entry (it is left out until fixed), else null. */
  problem: string | null;
  disabled: boolean;
  /** `invalid` and `disabled` first; else the state of its instances. */
  status: 'invalid' | 'disabled' | 'stopped' | 'starting' | 'ready' | 'failed';
  /** Agents running it now. */
  running: number;
  lastError: string | null;
  /** What it offered when it last started (null: not started since its config changed). */
  tools: McpToolSummary[] | null;
  /** An HTTP server's sign-in (McpHub.signIn): the panel offers Connect when it is needed. */
  signIn: 'sign-in-needed' | 'signed-in' | null;
}

export interface McpSettingsView {
  file: string;
  /** Every problem of the file, one line each (also on the terminal and in getStatus). */
  problems: string[];
  servers: McpServerRow[];
  /** Whether the `sessions` builtin is on (the switch). */
  sessions: boolean;
}

export interface McpServerCheckView extends Omit<McpServerCheck, 'tools'> {
  tools: McpToolSummary[];
}

export class McpSettings {
  constructor(private readonly hub: McpHub) {}

  async view(): Promise<McpSettingsView> {
    const { servers, problems } = await this.hub.config.current();
    const raw = await this.hub.config.rawServers().catch(() => ({}));
    const rows: McpServerRow[] = [];
    for (const [name, entry] of Object.entries(raw)) {
      const config = servers.get(name);
      if (!config) {
        const parsed = SERVER_NAME.test(name) ? parseServer(entry) : null;
        rows.push({
          name,
          transport: null,
          entry,
          problem:
            parsed === null
              ? "the name may hold letters, digits, '_', '.' or '-' only (at most 64); rename it"
              : 'problem' in parsed
                ? parsed.problem
                : 'not loaded',
          disabled: false,
          status: 'invalid',
          running: 0,
          lastError: null,
          tools: null,
          signIn: null,
        });
        continue;
      }
      const status = this.hub.serverStatus(name, config);
      rows.push({
        name,
        transport: config.kind,
        entry,
        problem: null,
        disabled: config.disabled === true,
        status: config.disabled ? 'disabled' : status.state,
        running: status.running,
        lastError: status.lastError,
        tools: status.tools && summaries(status.tools),
        signIn: await this.hub.signIn(name, config),
      });
    }
    return {
      file: this.hub.config.file,
      problems: [...problems],
      servers: rows,
      sessions: servers.get(SESSIONS_SERVER)?.kind === 'builtin' && !servers.get(SESSIONS_SERVER)?.disabled,
    };
  }

  /** Adds or changes a server (`previousName`: renames it); a bad entry is refused, the file untouched. */
  async set(name: string, entry: unknown, previousName?: string): Promise<McpSettingsView> {
    await this.edit(() => this.hub.config.setServer(name, entry, previousName));
    return this.view();
  }

  async remove(name: string): Promise<McpSettingsView> {
    const raw = await this.hub.config.rawServers();
    if (!(name in raw)) throw new HostError(`mcp.json has no server named ${JSON.stringify(name)}`, 404);
    await this.edit(() => this.hub.config.setServer(name, undefined));
    return this.view();
  }

  /** The `sessions` switch: on adds `"sessions": {"builtin": "sessions"}`, off removes it. */
  async setSessions(enabled: boolean): Promise<McpSettingsView> {
    const raw = await this.hub.config.rawServers();
    const current = raw[SESSIONS_SERVER];
    if (current !== undefined && !isBuiltinSessions(current)) {
      throw new HostError(
        `mcp.json has a server named "${SESSIONS_SERVER}" that is not the builtin one; rename it first`,
        409,
      );
    }
    if (enabled) await this.edit(() => this.hub.config.setServer(SESSIONS_SERVER, { builtin: 'sessions' }));
    else if (current !== undefined)
      await this.edit(() => this.hub.config.setServer(SESSIONS_SERVER, undefined));
    return this.view();
  }

  /** Starts the entry as given (saved or not), lists its tools and stops it. */
  async test(name: string, entry: unknown): Promise<McpServerCheckView> {
    if (!SERVER_NAME.test(name)) {
      throw new HostError(`server name ${JSON.stringify(name)}: use letters, digits, '_', '.' or '-'`, 400);
    }
    const parsed = parseServer(entry);
    if ('problem' in parsed) throw new HostError(`server "${name}": ${parsed.problem}`, 400);
    const check = await this.hub.testServer(name, parsed.config);
    return { ...check, tools: summaries(check.tools) };
  }

  private async edit(write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (error) {
      if (error instanceof HostError) throw error;
      throw new HostError((error as Error).message, 400);
    }
  }
}

function isBuiltinSessions(entry: unknown): boolean {
  return (
    typeof entry === 'object' && entry !== null && (entry as { builtin?: unknown }).builtin === 'sessions'
  );
}

function summaries(tools: readonly Tool[]): McpToolSummary[] {
  return tools.map((tool) => ({
    name: tool.name,
    description: (tool.description ?? tool.title ?? '').split('\n')[0]!.trim(),
  }));
}
