/**
 * What the gateway returns, checked with Zod where it enters the page.
 *
 * `RosterRow`, `ModelStatus` and `TurnState` mirror `packages/box/src/host/types.ts`, `providers/types.ts` and `agent/turn-state.ts`
 * (the web package depends on `@sendbox/protocol` only, so the shapes are restated here):
 * keep the two in sync. Objects are loose so a newer gateway's extra keys pass through.
 */
import '../zod-config.ts';
import { ledgerEntrySchema, type LedgerEntry } from '@sendbox/protocol';
import { z } from 'zod';

export const turnStateSchema = z.enum(['idle', 'working', 'awaiting-user']);
export type TurnState = z.infer<typeof turnStateSchema>;

export const rosterRowSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  description: z.string().default(''),
  harness: z.string().default('box'),
  updatedAt: z.number(),
  lastActivityAt: z.number(),
  lastEntry: z.looseObject({ kind: z.string(), text: z.string() }).nullable().default(null),
  unreadCount: z.number().default(0),
  hasUnread: z.boolean().default(false),
  awaitingUserResponse: z.boolean().default(false),
  awaitingApproval: z.boolean().default(false),
  state: turnStateSchema.default('idle'),
  readOnly: z.boolean().default(false),
});
export type RosterRow = z.infer<typeof rosterRowSchema>;

export const modelStatusSchema = z.looseObject({
  configured: z.boolean(),
  provider: z.string().nullable(),
  model: z.string().nullable(),
  howToConfigure: z.string(),
});
export type ModelStatus = z.infer<typeof modelStatusSchema>;

/** Where a cursor-agent card opens its agent (`{bcId}` is replaced); the box's default when absent. */
export const DEFAULT_CURSOR_AGENT_URL = 'https://cursor.com/agents?id={bcId}';

/** Tool confinement (docs/sandbox.md); absent from older gateways. */
export const sandboxStatusSchema = z.looseObject({
  mode: z.string(),
  confined: z.boolean(),
  detail: z.string(),
  fix: z.string().optional(),
});
export type SandboxStatus = z.infer<typeof sandboxStatusSchema>;

export const statusResponseSchema = z.looseObject({
  model: modelStatusSchema,
  sandbox: sandboxStatusSchema.optional(),
  version: z.string(),
  links: z.looseObject({ cursorAgent: z.string() }).default({ cursorAgent: DEFAULT_CURSOR_AGENT_URL }),
  /** The box's limits the page checks before sending (an older box: none, the box still refuses). */
  limits: z.looseObject({ uploadBytes: z.number().int().positive() }).optional(),
});
export type StatusResponse = z.infer<typeof statusResponseSchema>;

/** A ledger entry as stored: always carries its `seq`. */
export type SequencedEntry = LedgerEntry & { seq: number };

/**
 * An entry this renderer does not understand (a kind or send type from a newer host, or a
 * malformed row). Readers must tolerate those (ledger.ts), so it gets a compact bubble
 * instead of breaking the conversation.
 */
export interface UnrecognizedEntry {
  kind: '$unrecognized';
  id: string;
  seq: number;
  timestampMs: number;
  rawKind: string;
  /** Which field failed, for the bubble's hover text. */
  problem: string;
}

export type TranscriptEntry = SequencedEntry | UnrecognizedEntry;

const entryEnvelopeSchema = z.looseObject({ id: z.string(), seq: z.number() });

/**
 * Checks one raw entry. Returns `null` only when it has no `id` or `seq` (nothing can place it
 * in the conversation); any other failure becomes an `UnrecognizedEntry`.
 */
export function parseEntry(raw: unknown): TranscriptEntry | null {
  const envelope = entryEnvelopeSchema.safeParse(raw);
  if (!envelope.success) return null;
  const parsed = ledgerEntrySchema.safeParse(raw);
  if (parsed.success) return { ...parsed.data, seq: envelope.data.seq };
  const kind = (raw as { kind?: unknown }).kind;
  const sendType = (raw as { message?: { type?: unknown } }).message?.type;
  const timestampMs = (raw as { timestampMs?: unknown }).timestampMs;
  const issue = parsed.error.issues[0];
  return {
    kind: '$unrecognized',
    id: envelope.data.id,
    seq: envelope.data.seq,
    timestampMs: typeof timestampMs === 'number' ? timestampMs : 0,
    rawKind:
      typeof kind !== 'string'
        ? '(no kind)'
        : kind === 'send-message' && typeof sendType === 'string'
          ? `${kind} ${sendType}`
          : kind,
    problem: issue
      ? `${issue.path.join('.') || '(entry)'}: ${issue.message}`
      : 'does not match the ledger schema',
  };
}

/** Entries are checked one by one later (`parseNewest`): here only that they are a list. */
/** One item of the agent's task list (`update_todos`; docs/gateway.md, openAgent). */
export const todoItemSchema = z.looseObject({ id: z.string(), content: z.string(), status: z.string() });
export type TodoItem = z.infer<typeof todoItemSchema>;

export const openAgentResponseSchema = z.looseObject({
  entries: z.custom<unknown[]>(Array.isArray, { message: 'expected an array of ledger entries' }),
  /** Absent from older gateways. */
  todos: z.array(todoItemSchema).default([]),
  /** Answered secret requests whose secret this agent's store lacks; absent from older gateways. */
  secretRequestsNotHeld: z.array(z.string()).default([]),
});
export const agentResponseSchema = z.looseObject({ agent: rosterRowSchema });
export const rosterResponseSchema = z.array(rosterRowSchema);
export const sendPromptResponseSchema = z.looseObject({ accepted: z.literal(true), duplicate: z.boolean() });
export const acceptedResponseSchema = z.looseObject({ accepted: z.literal(true) });
export const cancelTurnResponseSchema = z.looseObject({ cancelled: z.boolean() });
export const savedResponseSchema = z.looseObject({ saved: z.literal(true) });
export const deletedResponseSchema = z.looseObject({ deleted: z.literal(true) });
export const removedResponseSchema = z.looseObject({ removed: z.literal(true) });
export const uploadResponseSchema = z.looseObject({ entry: z.unknown() });
export const imageHostsResponseSchema = z.looseObject({ hosts: z.array(z.string()) });
export const signedOutResponseSchema = z.looseObject({ signedOut: z.literal(true) });

export const stateEventSchema = z.looseObject({ agentId: z.string(), state: turnStateSchema });
export const rosterEventSchema = z.looseObject({ agentId: z.string(), change: z.string() });
/** An agent's routines changed: one was created, edited, paused, deleted, fired, or a run ended. */
export const routinesEventSchema = z.looseObject({ agentId: z.string() });

/** An input the box accepted whose turn has not started (docs/gateway.md, `inbox` event). */
export const pendingInputSchema = z.looseObject({
  nonce: z.string(),
  kind: z.string(),
  text: z.string(),
  acceptedAt: z.number(),
});
export type PendingInput = z.infer<typeof pendingInputSchema>;
export const inboxEventSchema = z.looseObject({ agentId: z.string(), pending: z.array(pendingInputSchema) });
export const modelSettingsSchema = z.looseObject({
  provider: z.enum(['xai', 'openai-compatible']).nullable(),
  baseURL: z.string(),
  model: z.string(),
  hasKey: z.boolean(),
  lockedByEnvironment: z.boolean(),
  /** Whether the model is shown images; SENDBOX_MODEL_VISION locks it. Absent from older boxes. */
  vision: z.boolean().default(true),
  visionLockedByEnvironment: z.boolean().default(false),
  /** The context window of the model in use and where it comes from; absent from older boxes. */
  contextTokens: z.number().optional(),
  contextTokensSource: z
    .enum(['environment', 'settings', 'known model', 'default'])
    .or(z.string())
    .optional(),
  /** The window saved in the panel (the field's value), if any. */
  contextTokensSetting: z.number().nullable().optional(),
  /** Whether the endpoint is asked to stream; SENDBOX_MODEL_STREAM locks it. */
  stream: z.boolean().default(true),
  streamLockedByEnvironment: z.boolean().default(false),
  /** The search backend web_search uses, or how to enable one. */
  webSearch: z.looseObject({ backend: z.string().nullable(), howToEnable: z.string() }).optional(),
});
export type ModelSettings = z.infer<typeof modelSettingsSchema>;
/** "Test connection": whether one small call worked, and what is wrong when it did not. */
export const connectionCheckSchema = z.looseObject({
  ok: z.boolean(),
  message: z.string(),
  streams: z.boolean().nullable(),
  elapsedMs: z.number(),
});

/** A tool call running (its live row: line, start, output tail) or just over (`running: false`). */
export const toolEventSchema = z.looseObject({
  agentId: z.string(),
  toolCallId: z.string(),
  name: z.string(),
  title: z.string(),
  startedAt: z.number(),
  tail: z.string(),
  running: z.boolean(),
});
export type LiveToolView = z.infer<typeof toolEventSchema>;
/** The model call being retried (docs/gateway.md, `retry` event); null: no longer. */
export const retryEventSchema = z.looseObject({
  agentId: z.string(),
  retry: z
    .looseObject({
      attempt: z.number(),
      attempts: z.number(),
      delayMs: z.number(),
      reason: z.string(),
    })
    .nullable(),
});
export type ModelRetryView = NonNullable<z.infer<typeof retryEventSchema>['retry']>;
export const draftEventSchema = z.looseObject({
  agentId: z.string(),
  toolCallId: z.string(),
  text: z.string().nullable(),
});

/**
 * An agent's background task (docs/runtime.md, "Background work"): a command `shell` started with
 * `isBackground`, or a subagent `task` started. Mirrors `TaskView` in packages/box/src/tasks/.
 */
export const taskViewSchema = z.looseObject({
  id: z.string(),
  kind: z.enum(['command', 'subagent']),
  label: z.string(),
  state: z.enum(['running', 'ended', 'interrupted']),
  startedAt: z.number(),
  endedAt: z.number().optional(),
  toolCallId: z.string(),
  outputPath: z.string().optional(),
  outputLength: z.number().optional(),
  exitCode: z.number().nullable().optional(),
  reason: z.string().optional(),
  agentId: z.string().optional(),
  tail: z.string().optional(),
  steps: z.number().optional(),
});
export type TaskView = z.infer<typeof taskViewSchema>;
export const taskEventSchema = z.looseObject({ agentId: z.string(), task: taskViewSchema });
export const listTasksResponseSchema = z.looseObject({ tasks: z.array(taskViewSchema) });
export const stopTaskResponseSchema = z.looseObject({ stopped: z.boolean() });
/** A step of a subagent as it happens (ledger-entry shaped: thinking, tool-call, notice). */
export const subagentEntryEventSchema = z.looseObject({
  agentId: z.string(),
  subagentId: z.string(),
  entry: z.unknown(),
});
export const openSubagentResponseSchema = z.looseObject({
  entries: z.custom<unknown[]>(Array.isArray, { message: 'expected an array of entries' }),
});

/** An agent's settings (`getAgent`, `updateAgent`): mirrors `packages/box/src/profile/agent-settings.ts`. */
export const agentSettingsSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  instructions: z.string(),
  allowDomains: z.array(z.string()),
  /** Whether the agent is offered `web_fetch` (its profile's `web.fetch`). */
  webFetch: z.boolean(),
  model: z.string().nullable(),
  modelApplies: z.boolean(),
  provider: z.string().nullable(),
  defaultModel: z.string().nullable(),
  /** The MCP servers it may use (profile `mcp.servers`); null: all of them. */
  mcpServers: z.array(z.string()).nullable().default(null),
});
export type AgentSettings = z.infer<typeof agentSettingsSchema>;

/** What `updateAgent` takes beside the id (omitted: unchanged; `model: null`: the box's model). */
export interface AgentUpdate {
  name?: string;
  description?: string;
  instructions?: string;
  allowDomains?: string[];
  model?: string | null;
  webFetch?: boolean;
  /** null: every server of mcp.json, also those added later. */
  mcpServers?: string[] | null;
}

/** The agent's memory and the user's (`listMemory`, `forgetMemory`): mirrors `packages/box/src/memory/memory-view.ts`. */
export const memoryViewSchema = z.looseObject({
  scopes: z.array(
    z.looseObject({
      scope: z.enum(['agent', 'user']),
      entries: z.array(z.looseObject({ text: z.string(), createdAt: z.number() })),
      bytes: z.number(),
      cap: z.number(),
      error: z.string().optional(),
    }),
  ),
});
export type MemoryView = z.infer<typeof memoryViewSchema>;

/** A routine and its latest runs (`listRoutines`, `updateRoutine`): mirrors `RoutineView` in packages/box/src/routines/routines.ts. */
export const routineViewSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  schedule: z.string(),
  timezone: z.string(),
  prompt: z.string(),
  silent: z.boolean(),
  paused: z.boolean(),
  createdAt: z.number(),
  updatedAt: z.number(),
  nextRunAt: z.number().nullable(),
  runs: z.array(
    z.looseObject({
      instant: z.number(),
      firedAt: z.number().nullable().optional(),
      status: z.string(),
      turn: z.number().nullable().optional(),
      startedAt: z.number().nullable().optional(),
      endedAt: z.number().nullable().optional(),
      entryId: z.string().nullable(),
    }),
  ),
});
export type RoutineView = z.infer<typeof routineViewSchema>;
export const listRoutinesResponseSchema = z.looseObject({ routines: z.array(routineViewSchema) });
export const updateRoutineResponseSchema = z.looseObject({ routine: routineViewSchema.nullable() });
/** What `updateRoutine` takes beside the agent id. */
export interface RoutineChange {
  id?: string;
  action: 'create' | 'update' | 'pause' | 'resume' | 'delete' | 'run';
  name?: string;
  schedule?: string;
  timezone?: string;
  prompt?: string;
  silent?: boolean;
}

/** One message that matched a content search (docs/gateway.md, `searchMessages`). */
export const messageHitSchema = z.looseObject({
  agentId: z.string(),
  title: z.string().nullable(),
  message: z.number(),
  kind: z.string(),
  snippet: z.object({ text: z.string(), highlights: z.array(z.tuple([z.number(), z.number()])) }),
  place: z.object({ needle: z.string(), occurrence: z.number() }).optional(),
  lastActivity: z.string().nullable(),
});
export type MessageHit = z.infer<typeof messageHitSchema>;
export const searchMessagesResponseSchema = z.looseObject({ hits: z.array(messageHitSchema) });

/** The MCP part of the settings panel (`getMcpSettings`): mirrors `packages/box/src/mcp/settings.ts`. */
export const mcpServerRowSchema = z.looseObject({
  name: z.string(),
  transport: z.enum(['stdio', 'http', 'builtin']).nullable(),
  /** The entry as mcp.json holds it (secrets stay `${secret:NAME}` references). */
  entry: z.unknown(),
  problem: z.string().nullable(),
  disabled: z.boolean(),
  status: z.string(),
  running: z.number(),
  lastError: z.string().nullable(),
  tools: z.array(z.looseObject({ name: z.string(), description: z.string() })).nullable(),
  /** An HTTP server's sign-in: the panel offers Connect when it is needed. */
  signIn: z.enum(['sign-in-needed', 'signed-in']).nullable().default(null),
});
export type McpServerRow = z.infer<typeof mcpServerRowSchema>;
export const mcpSettingsSchema = z.looseObject({
  file: z.string(),
  problems: z.array(z.string()),
  servers: z.array(mcpServerRowSchema),
  sessions: z.boolean(),
});
export type McpSettingsView = z.infer<typeof mcpSettingsSchema>;
/** `testMcpServer`: the entry started, its tools listed, stopped. */
export const mcpServerCheckSchema = z.looseObject({
  ok: z.boolean(),
  message: z.string(),
  tools: z.array(z.looseObject({ name: z.string(), description: z.string() })),
  elapsedMs: z.number(),
});
export type McpServerCheck = z.infer<typeof mcpServerCheckSchema>;
/** The box secrets: names only, never a value (`listBoxSecrets`, `setBoxSecret`, `deleteBoxSecret`). */
export const boxSecretsSchema = z.looseObject({
  names: z.array(z.string()),
  missing: z.array(z.looseObject({ name: z.string(), servers: z.array(z.string()) })),
});
export type BoxSecretsView = z.infer<typeof boxSecretsSchema>;
/** A Connect card's button: the authorization URL to open, or already connected. */
export const connectStartSchema = z.looseObject({
  authorizationUrl: z.string().optional(),
  connected: z.boolean().optional(),
});
export type ConnectStart = z.infer<typeof connectStartSchema>;
