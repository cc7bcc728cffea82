/**
 * The dispatch sequence of a tool call (every tool but send_message, which has its send gate):
 *
 *   record the call (JSONL tool_use) → check its input (Zod) → the gates → run → record the result
 *   (JSONL tool_result, scrubbed) and the ledger's tool-call entry.
 *
 * The call is recorded before anything else, so a crash or a wait leaves a call without a result
 * that the turn closer answers. A gate sees a checked call before it runs and may answer it instead
 * (an approval card waits for the user here; a denied call gets the gate's error), and hears when
 * the call's result is recorded. Nothing a gate or a tool throws ends the turn: it becomes the
 * call's error result.
 */
import type { LedgerEntry } from '@sendbox/protocol';
import type { JsonObject } from '@sendbox/txcript';
import { modelOutputFor, toolReaders } from '../context/model-view.ts';
import type { ModelToolCall } from '../providers/types.ts';
import {
  describeZodError,
  errorOutcome,
  statusOf,
  type DiskRoom,
  type HostTool,
  type ToolOutcome,
  type ToolStatus,
} from '../tools/types.ts';
import { toolCallDetails, type ToolCallDetails } from './tool-details.ts';
import type { LiveTool } from './live-tool.ts';
import type { Scrubber } from '../secrets/scrub.ts';
import type { SecretsStore } from '../stores/secrets.ts';
import type { TodoItem, ToolContext } from '../tools/types.ts';
import type { ToolCallReport } from './turn.ts';
import type { TurnStateMachine } from './turn-state.ts';

/** A tool call whose input passed its check, about to run. */
export interface GatedCall {
  agentId: string;
  /** The agent's turn the call is made in. */
  turn: number;
  toolCallId: string;
  tool: HostTool;
  input: unknown;
  signal: AbortSignal;
  /** Scrubs what a gate shows (an approval card's arguments). */
  scrub: Scrubber;
  /** Commits an entry to the agent's ledger (an approval card); absent where no user can be asked. */
  appendEntry?: (entry: LedgerEntry) => void;
  /** The turn's state: a gate that waits on the user moves it to `awaiting-user` meanwhile. */
  turnState?: TurnStateMachine;
}

/** Runs before every checked tool call: null lets it run; an outcome answers it instead. */
export interface ToolGate {
  readonly name: string;
  beforeRun(call: GatedCall): Promise<ToolOutcome | null>;
  /** After the call's result is recorded (in the JSONL and the ledger), whether it ran or not. */
  afterRecorded?(call: GatedCall): Promise<void>;
}

/** What dispatch needs from the agent (TurnContext has it all). */
export interface DispatchContext {
  readonly id: string;
  readonly paths: { readonly sandbox: string };
  readonly toolEnv: Readonly<Record<string, string>>;
  readonly todos: TodoItem[];
  readonly secrets: SecretsStore;
  /** What runs before every checked tool call: approvals plug in here. */
  readonly toolGates: readonly ToolGate[];
  scrubber(): Scrubber;
  /** Hosts the agent's commands may reach (the profile's sandbox.allowDomains, as it is now). */
  allowDomains(): Promise<readonly string[]>;
  /** The sandbox's disk quota, when the host keeps one. */
  readonly disk?: DiskRoom;
  now(): number;
  /** What capabilities add to a call's ToolContext (background work: its registry, its children, the call's ids). */
  toolServices?(call: ToolCallRef): Partial<ToolContext>;
}

/** Which call of which turn a tool runs for. */
export interface ToolCallRef {
  turn: number;
  toolCallId: string;
}

export interface DispatchDeps {
  ctx: DispatchContext;
  turn: number;
  /** Every tool name the model has, for the unknown-tool error. */
  knownNames(): string[];
  recordCall(name: string, input: JsonObject): void;
  recordResult(name: string, result: JsonObject): void;
  /** The ledger's tool-call entry (the driver gives it its id). */
  recordEntry(
    entry: {
      kind: 'tool-call';
      name: string;
      status: ToolStatus;
      summary: string;
      toolCallId: string;
      timestampMs: number;
      stopped?: true;
    } & ToolCallDetails,
  ): void;
  signal: AbortSignal;
  /** The page's live row of a call that runs (agent/live-tool.ts); absent, none is shown. */
  live?: (call: { toolCallId: string; name: string; title: string; startedAt: number }) => LiveTool;
  /** Commits an entry of a gate's (an approval card) to the ledger. */
  appendEntry?: (entry: LedgerEntry) => void;
  /** The turn's state, for a gate that waits on the user. */
  turnState?: TurnStateMachine;
}

export async function dispatchToolCall(
  call: ModelToolCall,
  tool: HostTool | undefined,
  deps: DispatchDeps,
): Promise<ToolCallReport> {
  const { ctx } = deps;
  const parsed = tool?.input.safeParse(call.input);
  // One time for the recorded input and the run (update_todos stamps its input with it).
  const startedAt = ctx.now();
  const recorded =
    tool?.recordedInput && parsed?.success
      ? {
          ...tool.recordedInput(parsed.data, { todos: ctx.todos, now: () => startedAt }),
          toolCallId: call.id,
        }
      : callInput(call);
  // The name on disk: update_state's Grok Bot name, a dynamic MCP tool's own (tools/mcp), else the call's.
  const own = tool?.recordedName;
  const recordedName =
    typeof own === 'function' ? (parsed?.success ? own(parsed.data) : call.name) : (own ?? call.name);
  deps.recordCall(recordedName, tool?.wrapRecorded ? tool.wrapRecorded(recorded) : recorded);
  let outcome: ToolOutcome;
  let gated: GatedCall | undefined;
  if (!tool || !parsed) {
    outcome = errorOutcome(
      `There is no tool named ${call.name}. Your tools are: ${deps.knownNames().join(', ')}.`,
      `unknown tool ${call.name}`,
    );
  } else if (!parsed.success) {
    outcome = errorOutcome(describeZodError(tool.name, parsed.error), 'invalid input');
  } else {
    gated = {
      agentId: ctx.id,
      turn: deps.turn,
      toolCallId: call.id,
      tool,
      input: parsed.data,
      signal: deps.signal,
      scrub: ctx.scrubber(),
      ...(deps.appendEntry ? { appendEntry: deps.appendEntry } : {}),
      ...(deps.turnState ? { turnState: deps.turnState } : {}),
    };
    const answered = await passGates(ctx.toolGates, gated);
    if (answered) outcome = answered;
    else {
      const live = deps.live?.({
        toolCallId: call.id,
        name: call.name,
        title: ctx.scrubber().text(callTitle(parsed.data)),
        startedAt: ctx.now(),
      });
      try {
        outcome = await runTool(
          ctx,
          tool,
          parsed.data,
          startedAt,
          deps.signal,
          {
            turn: deps.turn,
            toolCallId: call.id,
          },
          live,
          deps.appendEntry,
        );
      } finally {
        live?.end();
      }
    }
  }
  const scrubber = ctx.scrubber();
  const envelope = scrubber.value(outcome.envelope);
  deps.recordResult(recordedName, envelope);
  const rawInput = isObject(call.input) ? (call.input as JsonObject) : {};
  deps.recordEntry({
    // The tool's own fields (edit's diff, update_todos' list) first: the common ones below win.
    ...tool?.entryFields?.(envelope),
    kind: 'tool-call',
    name: call.name,
    status: statusOf(envelope),
    summary: scrubber.text(outcome.summary),
    // Hook (web tool rows): description, scrubbed input/output and duration.
    ...toolCallDetails(rawInput, envelope, ctx.now() - startedAt, scrubber),
    // The UI finds the background task a call started by it (tasks' toolCallId).
    toolCallId: call.id,
    // Stop ended it: the page says "stopped", not "failed" (the envelope stays the tool's own).
    ...(deps.signal.aborted ? { stopped: true } : {}),
    timestampMs: ctx.now(),
  });
  if (gated) await afterRecorded(ctx.toolGates, gated);
  // The model reads its call back as recorded (a restart rebuilds it from the JSONL).
  const { toolCallId: _id, ...modelInput } = recorded;
  return {
    output: modelOutputFor(call.name, envelope, tool && toolReaders([tool])),
    delivered: false,
    modelInput,
  };
}

async function passGates(gates: readonly ToolGate[], call: GatedCall): Promise<ToolOutcome | null> {
  for (const gate of gates) {
    try {
      const answer = await gate.beforeRun(call);
      if (answer) return answer;
    } catch (error) {
      return errorOutcome(`${call.tool.name} was not run: ${gate.name} failed: ${(error as Error).message}`);
    }
  }
  return null;
}

async function afterRecorded(gates: readonly ToolGate[], call: GatedCall): Promise<void> {
  for (const gate of gates) {
    // What a gate does after the record is its own bookkeeping: the call's result stands.
    await gate.afterRecorded?.(call).catch(() => undefined);
  }
}

async function runTool(
  ctx: DispatchContext,
  tool: HostTool,
  input: unknown,
  startedAt: number,
  signal: AbortSignal,
  ref: ToolCallRef,
  live?: LiveTool,
  appendEntry?: (entry: LedgerEntry) => void,
): Promise<ToolOutcome> {
  const secrets = await ctx.secrets.all();
  try {
    return await tool.run(input, {
      sandboxDir: ctx.paths.sandbox,
      ...(ctx.disk ? { disk: ctx.disk } : {}),
      env: { ...ctx.toolEnv, HOME: ctx.paths.sandbox, ...Object.fromEntries(secrets) },
      allowDomains: await ctx.allowDomains(),
      scrub: ctx.scrubber(),
      todos: ctx.todos,
      signal,
      ...(live ? { onOutput: (chunk: string) => live.output(chunk) } : {}),
      ...(appendEntry ? { appendEntry } : {}),
      now: () => startedAt,
      ...ctx.toolServices?.(ref),
    });
  } catch (error) {
    return errorOutcome(`${tool.name} failed: ${(error as Error).message}`);
  }
}

/** The live row's line: the model's description of the call, else its command, path or pattern. */
function callTitle(input: unknown): string {
  if (!isObject(input)) return '';
  for (const key of ['description', 'command', 'path', 'pattern', 'url', 'query']) {
    const value = input[key];
    if (typeof value === 'string' && value.trim() !== '') return value.trim().split('\n')[0]!.slice(0, 200);
  }
  return '';
}

/** A call's JSONL `tool_use` input: its arguments with its id, or their raw text when they did not parse. */
export function callInput(call: ModelToolCall): JsonObject {
  if (isObject(call.input)) return { ...(call.input as JsonObject), toolCallId: call.id };
  return call.rawArguments === undefined
    ? { toolCallId: call.id }
    : { rawArguments: call.rawArguments, toolCallId: call.id };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
