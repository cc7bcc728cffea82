/**
 * `<data-dir>/mcp.json`: the MCP servers of the box, in the `mcpServers` shape Claude Desktop,
 * Cursor and Claude Code share (`{command, args, env}` for stdio, `{url, headers}` for HTTP), with
 * sendbox's keys beside them (docs/mcp-client.md). Each server is checked on its own: a bad one is
 * reported (file, server, field, what to do) and left out, and the valid ones still work.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../fs/atomic.ts';
import { isNotFound } from '../sandbox/paths.ts';

export const MCP_CONFIG_FILE = 'mcp.json';
export const DEFAULT_MCP_TIMEOUT_MS = 60_000;

/** A server name: what the model passes as `server`, and a folder name for its home. */
export const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

const approvalMode = z.enum(['auto', 'ask'], { message: 'an approval is "auto" or "ask"' });
export type ApprovalMode = z.output<typeof approvalMode>;

/** `"ask"`, or per tool: `{"*": "auto", "delete_repo": "ask"}` (`*` is every other tool). */
const approval = z.union([approvalMode, z.record(z.string().min(1), approvalMode)], {
  message: 'approval is "auto", "ask", or an object of tool name → "auto" | "ask" ("*" for the rest)',
});

const sendboxKeys = {
  /** What the settings panel and `get_mcp_tools` show beside the server's name. */
  description: z.string().optional(),
  approval: approval.optional(),
  timeoutMs: z.number().int().positive().max(3_600_000).optional(),
  disabled: z.boolean().optional(),
};

/** A value, or `${secret:NAME}`: a box-wide secret (`setBoxSecret`), resolved when the server starts. */
const stringMap = z.record(z.string(), z.string());

const stdioServer = z.strictObject({
  command: z.string().min(1, 'command must name a program'),
  args: z.array(z.string()).default([]),
  env: stringMap.default({}),
  /** Hosts the server may reach through the agent's egress proxy (none: no network). */
  allowDomains: z.array(z.string().min(1)).default([]),
  /** Host folders the server reads (its program files), mounted read-only; absolute paths. */
  readOnly: z
    .array(z.string().refine((p) => path.isAbsolute(p), 'readOnly paths must be absolute'))
    .default([]),
  ...sendboxKeys,
});

const httpServer = z.strictObject({
  url: z.url({ protocol: /^https?$/, message: 'url must be an http:// or https:// URL' }),
  headers: stringMap.default({}),
  /** `sse`: the older HTTP+SSE transport only; default: Streamable HTTP, falling back to SSE. */
  transport: z.enum(['streamable-http', 'sse']).optional(),
  /**
   * The operator's allowance for a server on this machine or the local network: the host of `url`
   * is reached even at a loopback or private address (every other host, an OAuth server's
   * included, keeps the public-only rule).
   */
  allowPrivateHost: z.boolean().optional(),
  ...sendboxKeys,
});

const builtinServer = z.strictObject({
  builtin: z.literal('sessions', { message: 'the only builtin server is "sessions"' }),
  ...sendboxKeys,
});

export type StdioServerConfig = z.output<typeof stdioServer> & { kind: 'stdio' };
export type HttpServerConfig = z.output<typeof httpServer> & { kind: 'http' };
export type BuiltinServerConfig = z.output<typeof builtinServer> & { kind: 'builtin' };
export type McpServerConfig = StdioServerConfig | HttpServerConfig | BuiltinServerConfig;

export interface McpConfig {
  /** The valid servers, by name, in the file's order (disabled ones included). */
  servers: ReadonlyMap<string, McpServerConfig>;
  /** What is wrong with the file, one line each: the file, the server and the field, and what to do. */
  problems: readonly string[];
}

/** Parses the text of an mcp.json; `file` names it in problems. Never throws. */
export function parseMcpConfig(text: string, file: string): McpConfig {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return {
      servers: new Map(),
      problems: [`${file}: not valid JSON (${(error as Error).message}); fix the file or remove it`],
    };
  }
  if (!isObject(json) || !isObject(json.mcpServers)) {
    return {
      servers: new Map(),
      problems: [`${file}: expected {"mcpServers": {"<name>": {...}}}; no servers were loaded`],
    };
  }
  const servers = new Map<string, McpServerConfig>();
  const problems: string[] = [];
  for (const [name, raw] of Object.entries(json.mcpServers)) {
    if (!SERVER_NAME.test(name)) {
      problems.push(
        `${file}: server ${JSON.stringify(name)}: a name is letters, digits, '_', '.' or '-' (at most 64); rename it`,
      );
      continue;
    }
    const parsed = parseServer(raw);
    if ('problem' in parsed) problems.push(`${file}: server "${name}": ${parsed.problem}`);
    else servers.set(name, parsed.config);
  }
  return { servers, problems };
}

/** One server's entry checked as mcp.json's loader checks it: its config, or the problem (field and what to do). */
export function parseServer(raw: unknown): { config: McpServerConfig } | { problem: string } {
  if (!isObject(raw)) return { problem: 'expected an object with `command` (stdio) or `url` (HTTP)' };
  const [kind, schema] =
    'builtin' in raw
      ? (['builtin', builtinServer] as const)
      : 'url' in raw
        ? (['http', httpServer] as const)
        : 'command' in raw
          ? (['stdio', stdioServer] as const)
          : [null, null];
  if (!kind || !schema) {
    return { problem: 'has neither `command` (a stdio server) nor `url` (an HTTP server); add one' };
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length ? issue.path.join('.') : issueKeys(issue);
    return { problem: `field ${field}: ${issue.message}` };
  }
  return { config: { ...parsed.data, kind } as McpServerConfig };
}

function issueKeys(issue: z.core.$ZodIssue): string {
  return issue.code === 'unrecognized_keys' ? issue.keys.join(', ') : '(server)';
}

/** The approval a server's config gives one of its tools (default `auto`). */
export function configuredApproval(config: McpServerConfig, tool: string): ApprovalMode {
  const setting = config.approval;
  if (setting === undefined) return 'auto';
  if (typeof setting === 'string') return setting;
  return setting[tool] ?? setting['*'] ?? 'auto';
}

const SECRET_REF = /\$\{secret:([A-Za-z_][A-Za-z0-9_]{0,127})\}/g;

/** The box secrets a server's env or headers name (`${secret:NAME}`). */
export function secretNames(config: McpServerConfig): string[] {
  const values = config.kind === 'stdio' ? config.env : config.kind === 'http' ? config.headers : {};
  const names = new Set<string>();
  for (const value of Object.values(values)) for (const m of value.matchAll(SECRET_REF)) names.add(m[1]!);
  return [...names];
}

/** What the model reads when a server needs box secrets that are not set (it is not started). */
export function missingSecretsProblem(server: string, missing: readonly string[]): string {
  const many = missing.length > 1;
  return (
    `The MCP server ${server} needs the box secret${many ? 's' : ''} ${missing.join(', ')}, ` +
    `which ${many ? 'are' : 'is'} not set. Ask the user to enter ${many ? 'them' : 'it'} in the settings ` +
    'panel (MCP servers, box secrets); then try again.'
  );
}

/** `values` with each `${secret:NAME}` replaced, or the names that are not set. */
export function resolveSecrets(
  values: Readonly<Record<string, string>>,
  secrets: ReadonlyMap<string, string>,
): { values: Record<string, string> } | { missing: string[] } {
  const missing = new Set<string>();
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(values)) {
    out[key] = value.replace(SECRET_REF, (_all, name: string) => {
      const secret = secrets.get(name);
      if (secret === undefined) missing.add(name);
      return secret ?? '';
    });
  }
  return missing.size ? { missing: [...missing] } : { values: out };
}

/**
 * Where the box's MCP servers are kept: `mcp.json` in the data dir (McpConfigFile), or a cluster's
 * row (stores/postgres/mcp-config.ts). Both hold the same document and check it the same way.
 */
export interface McpConfigSource {
  /** What the problems and the settings panel name it by (the file's path). */
  readonly file: string;
  /** The servers as they are now (an edit elsewhere applies to the next call without a restart). */
  current(): Promise<McpConfig>;
  /** The raw `mcpServers` (unknown keys kept), for an edit; `{}` when there is none. */
  rawServers(): Promise<Record<string, unknown>>;
  /**
   * Sets (or with `undefined` removes) one server, checked first, keeping the rest of the document
   * as it is (other servers, unknown keys, the order); `previousName` renames it in the same write.
   */
  setServer(name: string, raw: unknown, previousName?: string): Promise<void>;
}

/**
 * The whole document (`{..., mcpServers}`) with one server set, removed or renamed, after the
 * same checks for every source; throws with what to do. `label` names the document in errors.
 */
export function withServer(
  whole: Record<string, unknown>,
  label: string,
  name: string,
  raw: unknown,
  previousName?: string,
): Record<string, unknown> {
  if (!SERVER_NAME.test(name)) {
    throw new Error(`server name ${JSON.stringify(name)}: use letters, digits, '_', '.' or '-'`);
  }
  if (raw !== undefined) {
    const parsed = parseServer(raw);
    if ('problem' in parsed) throw new Error(`server "${name}": ${parsed.problem}`);
  }
  const before = serversOf(whole, label);
  const renamed = previousName !== undefined && previousName !== name;
  if (renamed && name in before) {
    throw new Error(`a server named "${name}" exists already; choose another name or remove it first`);
  }
  const servers: Record<string, unknown> = {};
  // A renamed server keeps its place in the document.
  for (const [key, value] of Object.entries(before))
    servers[renamed && key === previousName ? name : key] = value;
  if (raw === undefined) delete servers[name];
  else servers[name] = raw;
  return { ...whole, mcpServers: servers };
}

/** The raw `mcpServers` of a parsed document (`{}` when it has none); throws when it is not an object. */
export function serversOf(whole: unknown, label: string): Record<string, unknown> {
  if (isObject(whole) && whole.mcpServers === undefined) return {};
  if (isObject(whole) && isObject(whole.mcpServers)) return { ...whole.mcpServers };
  throw new Error(`${label}: expected {"mcpServers": {...}}; fix it by hand first`);
}

/** A parsed config kept while its text is the same, its problems told once per new text. */
export class ParsedMcpConfig {
  private cached: { stamp: string; config: McpConfig } | null = null;

  constructor(
    private readonly label: string,
    private readonly onProblems: (problems: readonly string[]) => void,
  ) {}

  /** `stamp` identifies the text (null: no document); `text` reads it when the stamp is new. */
  async of(stamp: string | null, text: () => Promise<string>): Promise<McpConfig> {
    const key = stamp ?? 'absent';
    if (this.cached?.stamp === key) return this.cached.config;
    const config =
      stamp === null ? { servers: new Map(), problems: [] } : parseMcpConfig(await text(), this.label);
    this.cached = { stamp: key, config };
    if (config.problems.length) this.onProblems(config.problems);
    return config;
  }
}

/**
 * The mcp.json of a data dir, read again when it changes on disk (its size or time), so an edit
 * by hand or by the settings panel applies to the next call without a restart.
 */
export class McpConfigFile implements McpConfigSource {
  readonly file: string;
  private readonly parsed: ParsedMcpConfig;

  constructor(
    dataDir: string,
    /** Told each new set of problems once (the terminal). */
    onProblems: (problems: readonly string[]) => void = () => {},
  ) {
    this.file = path.join(dataDir, MCP_CONFIG_FILE);
    this.parsed = new ParsedMcpConfig(this.file, onProblems);
  }

  async current(): Promise<McpConfig> {
    let stamp: string | null;
    try {
      const info = await stat(this.file);
      stamp = `${info.size}:${info.mtimeMs}:${info.ino}`;
    } catch (error) {
      if (!isNotFound(error)) {
        return { servers: new Map(), problems: [`${this.file}: ${(error as Error).message}`] };
      }
      stamp = null;
    }
    return this.parsed.of(stamp, () => readFile(this.file, 'utf8').catch(() => '{}'));
  }

  async rawServers(): Promise<Record<string, unknown>> {
    const whole = await this.whole();
    return whole === null ? {} : serversOf(whole, this.file);
  }

  async setServer(name: string, raw: unknown, previousName?: string): Promise<void> {
    const whole = withServer((await this.whole()) ?? {}, this.file, name, raw, previousName);
    await writeFileAtomic(this.file, `${JSON.stringify(whole, null, 2)}\n`, { mode: 0o600 });
  }

  /** The file's JSON (null when absent); throws naming the file when it is not JSON. */
  private async whole(): Promise<Record<string, unknown> | null> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
    try {
      const json: unknown = JSON.parse(text);
      if (isObject(json)) return json;
    } catch (error) {
      throw new Error(`${this.file}: ${(error as Error).message}; fix it by hand first`);
    }
    throw new Error(`${this.file}: expected {"mcpServers": {...}}; fix it by hand first`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
