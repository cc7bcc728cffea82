/**
 * What a host tool is: a name under Grok Bot's on-disk names, a model-facing
 * description, a Zod input schema (the JSON Schema the model sees comes from
 * it), and a `run` that returns the result envelope written to the JSONL.
 */
import type { LedgerEntry } from '@sendbox/protocol';
import type { JsonValue } from '@sendbox/txcript';
import type { z } from 'zod';
import type { McpAccess } from '../mcp/access.ts';
import type { Scrubber } from '../secrets/scrub.ts';
import type { AgentTasks, SubagentLauncher } from '../tasks/agent-tasks.ts';
import type { MemoryCommand, ProfileCommand, RoutineCommand, StateHandler } from './update-state/schema.ts';

/**
 * The result envelopes on disk (grok-bot-format.md §5), with the keys real files use: `error`
 * holds `{error}` for most tools and `{errorMessage}` for `read`; shell results carry
 * `isBackground` beside the envelope, and a command that could not start is `spawnError`.
 */
export type ToolEnvelope = (
  | { success: { [key: string]: JsonValue } }
  | { failure: { [key: string]: JsonValue } }
  | { error: { error: string; [key: string]: JsonValue } | { errorMessage: string } }
  | { spawnError: { command: string; error: string } }
) & { isBackground?: boolean };

export type ToolStatus = 'success' | 'failure' | 'error';

export interface ToolOutcome {
  envelope: ToolEnvelope;
  /** A short line for the ledger's `tool-call` entry. */
  summary: string;
}

export interface TodoItem {
  id: string;
  content: string;
  status: 'pending' | 'in_progress' | 'completed' | 'cancelled';
  createdAt: number;
  updatedAt: number;
}

/** The agent's disk quota (sandbox/disk-quota.ts): host-side writes into the sandbox ask it first. */
export interface DiskRoom {
  /** Resolves when `bytes` more fit; rejects with a message for the model when they do not. */
  reserve(bytes: number): Promise<void>;
}

export interface ToolContext {
  sandboxDir: string;
  /** The sandbox's quota, when the host keeps one. */
  disk?: DiskRoom;
  /** Environment variables for processes the tool runs (secrets included); never shown to the model. */
  env: Readonly<Record<string, string>>;
  /** Hosts the agent's commands may reach through the sandbox's proxy (the profile's sandbox.allowDomains). */
  allowDomains?: readonly string[];
  /** Applied to every output before it leaves the tool. */
  scrub: Scrubber;
  /** The agent's todo list, kept by the host across turns. */
  todos: TodoItem[];
  signal?: AbortSignal;
  /** Told the output as it comes (stdout and stderr), for the page's live row; raw: the host scrubs it. */
  onOutput?: (chunk: string) => void;
  now(): number;
  /** The agent's background work (`shell` isBackground, `task`, `await`); absent, none can start. */
  tasks?: AgentTasks;
  /** Starts child agents (`task`); absent where no child may start (a child at the depth limit). */
  subagents?: SubagentLauncher;
  /**
   * The call being run: background work records which call of which turn started it, and which
   * subagent made it (`subagentId`; absent: the agent's own turn), whose run its record is fenced on.
   */
  call?: { turn: number; toolCallId: string; subagentId?: string };
  /** Commits an entry of the tool's own to the ledger (the MCP tools' "Connect <server>" card). */
  appendEntry?: (entry: LedgerEntry) => void;
  /** The agent's MCP servers (mcp/hub.ts); absent, `get_mcp_tools` and `mcp` say there are none. */
  mcp?: McpAccess;
  /** `update_state`'s parts, each from the room that owns it (routines/, memory/, the profile); absent: not offered. */
  routines?: StateHandler<RoutineCommand>;
  memory?: StateHandler<MemoryCommand>;
  profile?: StateHandler<ProfileCommand>;
}

/** What the model reads as a tool's result (the AI SDK's tool output forms the box uses). */
export type ToolModelOutput =
  | { type: 'text'; value: string }
  | { type: 'error-text'; value: string }
  | {
      type: 'content';
      value: Array<{ type: 'text'; text: string } | { type: 'image-data'; data: string; mediaType: string }>;
    };

export interface HostTool<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  input: S;
  /**
   * The input as the JSONL records it, when the tool adds to what the model sent (update_todos
   * stamps each todo's times on its input, as real files have them). `now` is the time `run` sees.
   */
  recordedInput?(input: z.output<S>, ctx: Pick<ToolContext, 'todos' | 'now'>): { [key: string]: JsonValue };
  /**
   * The name the JSONL records the call and its result under, when it is not `name`: update_state
   * is a Grok Bot `communicate_update` (tools/communicate-update.ts); a call of `mcp` is recorded
   * under the MCP tool's bare name, as Grok Bot writes it (grok-bot-format.md §5, tools/mcp/record.ts).
   */
  recordedName?: string | ((input: z.output<S>) => string);
  /** The recorded input (toolCallId included) as the JSONL holds it, whether or not the input passed its check. */
  wrapRecorded?(input: { [key: string]: JsonValue }): { [key: string]: JsonValue };
  run(input: z.output<S>, ctx: ToolContext): Promise<ToolOutcome>;
  /**
   * What the model reads for a result of this tool, live and when the history is rebuilt from the
   * JSONL (so `result` is whatever the file holds). Undefined: the default reading (model-view.ts).
   */
  modelOutput?(result: JsonValue): ToolModelOutput | undefined;
  /**
   * What this tool's ledger `tool-call` entry carries beyond the common fields, from its recorded
   * result (a sendbox extension readers may ignore): edit's `diff`, update_todos' `todos`.
   */
  entryFields?(result: JsonValue): { [key: string]: JsonValue } | undefined;
}

export function statusOf(envelope: ToolEnvelope): ToolStatus {
  if ('success' in envelope) return 'success';
  if ('failure' in envelope) return 'failure';
  return 'error';
}

/** An `error` envelope; `key` is the tool's own (`errorMessage` for read, per real files). */
export function errorOutcome(
  message: string,
  summary = message,
  key: 'error' | 'errorMessage' = 'error',
): ToolOutcome {
  const envelope: ToolEnvelope =
    key === 'error' ? { error: { error: message } } : { error: { errorMessage: message } };
  return { envelope, summary: oneLine(summary) };
}

/** The first line of `text`, capped, for ledger summaries. */
export function oneLine(text: string, max = 160): string {
  const first = text.split('\n', 1)[0] ?? '';
  return first.length > max ? `${first.slice(0, max - 1)}…` : first;
}

/** Model-readable text for a Zod failure: each issue with its field path. */
export function describeZodError(tool: string, error: z.ZodError): string {
  const issues = error.issues.map((issue) => {
    const where = issue.path.length ? issue.path.join('.') : '(input)';
    return `- ${where}: ${issue.message}`;
  });
  return `Invalid ${tool} input:\n${issues.join('\n')}\nFix these fields and call ${tool} again.`;
}

export function defineTool<S extends z.ZodType>(tool: HostTool<S>): HostTool<S> {
  return tool;
}

/** The `success` object of a recorded result, or null (an error, or not an envelope). */
export function successFields(result: JsonValue): { [key: string]: JsonValue } | null {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return null;
  const success = result.success;
  return typeof success === 'object' && success !== null && !Array.isArray(success) ? success : null;
}

export function isJsonObject(value: JsonValue | undefined): value is { [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function jsonArray(value: JsonValue | undefined): JsonValue[] {
  return Array.isArray(value) ? value : [];
}
