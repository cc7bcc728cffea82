/**
 * The contract between the host runtime (agents, turns, files) and what
 * drives it (the HTTP gateway, tests, the CLI). The runtime implements
 * `AgentHost`; the gateway only calls these methods and forwards events.
 */
import type { SandboxStatus } from '../sandbox/confinement.ts';
import type { DiskStatus } from '../sandbox/disk-quota.ts';
import type { LedgerEntry } from '@sendbox/protocol';
import type { PendingInput } from './inbox.ts';
import type { ModelSettingsInput, ModelSettingsView } from './model-settings.ts';

export type { PendingInput } from './inbox.ts';

export type TurnState = 'idle' | 'working' | 'awaiting-user';

/** One row of `listAgents` (grok-bot-format.md §9, the captured v4 roster row). */
/** getStatus's `sandbox.disk`: DiskStatus with each holder named by agent. */
export type SandboxDiskStatus = Omit<DiskStatus, 'holders'> & {
  holders: Array<{ agentId: string; name: string | null; bytes: number; overQuota: boolean }>;
};

export interface RosterRow {
  id: string;
  name: string;
  description: string;
  harness: string;
  /** Epoch ms. */
  updatedAt: number;
  lastActivityAt: number;
  lastEntry: { kind: string; text: string } | null;
  unreadCount: number;
  hasUnread: boolean;
  awaitingUserResponse: boolean;
  /** sendbox extension: inputs accepted whose turn has not started (the UI shows them as pending). */
  pendingInputs: number;
  /** sendbox extension: the live turn state, for the working indicator. */
  state: TurnState;
  /** sendbox extension: true for agents the user cannot prompt (the no-model demo). */
  readOnly: boolean;
}

export interface CreateAgentInput {
  name: string;
  description?: string;
  /** `box` for agents created through the gateway. */
  harness?: string;
}

/** A ledger entry as stored: always carries its `seq`. */
export type SequencedEntry = LedgerEntry & { seq: number };

export type HostEvent =
  | { type: 'entry'; agentId: string; entry: SequencedEntry }
  | { type: 'state'; agentId: string; state: TurnState }
  | { type: 'roster'; agentId: string; change: 'created' | 'deleted' | 'updated' }
  /** The agent's pending inputs changed (one was accepted, or its turn started): the whole list. */
  | { type: 'inbox'; agentId: string; pending: PendingInput[] }
  /**
   * A `send_message` text as the model writes it (`text` so far), not yet checked nor stored;
   * `text: null` when the call is over (delivered: its entry came first; refused: it vanishes).
   */
  | { type: 'draft'; agentId: string; toolCallId: string; text: string | null };

export type { SandboxStatus };

export interface ModelStatus {
  configured: boolean;
  /** e.g. `xai`, `openai-compatible`, `scripted`. */
  provider: string | null;
  model: string | null;
  /** Exact steps to configure a model, shown in the terminal and the UI when not configured. */
  howToConfigure: string;
}

export interface UploadInput {
  agentId: string;
  fileName: string;
  bytes: Uint8Array;
  clientNonce?: string;
}

/** Errors the host raises for bad requests; the gateway maps `status` onto HTTP. */
export class HostError extends Error {
  constructor(
    message: string,
    readonly status: 400 | 403 | 404 | 409 | 413 | 423 | 507,
  ) {
    super(message);
    this.name = 'HostError';
  }
}

const DISK_FULL_CODES = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL']);

/**
 * A write to one of an agent's stores failed as a whole (nothing of it stays
 * on disk). `diskFull` when the disk or quota is full: the gateway answers 507
 * and the write can succeed once space returns.
 */
export class StoreWriteError extends Error {
  readonly code: string | undefined;
  readonly diskFull: boolean;

  constructor(
    readonly store: 'jsonl' | 'ledger' | 'inbox' | 'upload',
    readonly what: string,
    cause: unknown,
  ) {
    const code = errorCode(cause);
    const full = code !== undefined && DISK_FULL_CODES.has(code);
    const detail = cause instanceof Error ? cause.message : String(cause);
    super(
      full
        ? `the disk of the data dir is full, so ${what} was not saved (${code}); free some space and try again`
        : `${what} could not be written (${detail})`,
      { cause },
    );
    this.name = 'StoreWriteError';
    this.code = code;
    this.diskFull = full;
  }
}

/** The errno or SQLite code of an error, also when a wrapper (LedgerError) carries it. */
function errorCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

export interface AgentHost {
  readonly dataDir: string;
  modelStatus(): ModelStatus;
  /** The settings panel's view of the model (never the key). */
  modelSettings(): ModelSettingsView;
  /** Saves the panel's settings (key 0600 in the data dir) and applies them without a restart. */
  updateModelSettings(input: ModelSettingsInput): Promise<ModelSettingsView>;
  /** Whether tool processes run confined (docs/sandbox.md); the UI warns when they do not. */
  sandboxStatus(): SandboxStatus;
  /** The sandboxes' disk: quota, free space, and the agents holding it (over quota, or largest when full). */
  sandboxDisk(): Promise<SandboxDiskStatus>;
  createAgent(input: CreateAgentInput): Promise<RosterRow>;
  listAgents(): Promise<RosterRow[]>;
  /** Focuses the agent (takes its store lock, releasing the previous one), marks it read, returns its ledger. */
  openAgent(id: string): Promise<SequencedEntry[]>;
  /** `openAgent`, with the entries as the JSON text of the array (kept serialized between calls). */
  openAgentJson(id: string): Promise<string>;
  /** Inputs accepted whose turn has not started, oldest first (shown as pending until their turn). */
  pendingInputs(id: string): Promise<PendingInput[]>;
  /** Entries with seq > afterSeq, for resuming an event stream. */
  entriesAfter(id: string, afterSeq: number): Promise<SequencedEntry[]>;
  /** The ledger entry with this id (undefined when the agent has none); 404 for an unknown agent. */
  entryById(agentId: string, entryId: string): Promise<SequencedEntry | undefined>;
  deleteAgent(id: string): Promise<void>;
  duplicateAgent(id: string): Promise<RosterRow>;
  /** Starts a turn; idempotent per clientNonce (a repeat returns the first result without a second turn). */
  sendPrompt(input: {
    agentId: string;
    prompt: string;
    clientNonce: string;
  }): Promise<{ accepted: true; duplicate: boolean }>;
  /** Answers a widget send by its message id; accepted once. */
  /** Aborts the running turn (model call, tool processes); the turn ends with a notice. */
  cancelTurn(agentId: string): Promise<{ cancelled: boolean }>;
  /** A new turn on the conversation as it stands (a hidden user message), e.g. after a model failure. */
  retryTurn(agentId: string): Promise<{ accepted: true }>;
  answerWidget(input: {
    agentId: string;
    messageId: string;
    answer: string | string[];
  }): Promise<{ accepted: true }>;
  /** Answers a secret-request by its message id; the value goes to the secret store only. Accepted once. */
  submitSecret(input: { agentId: string; messageId: string; value: string }): Promise<{ saved: true }>;
  /** Stages a user file into the agent's sandbox folder and records a `user-attachment` entry. */
  uploadFile(input: UploadInput): Promise<SequencedEntry>;
  /** Subscribes to host events; returns the unsubscribe function. */
  subscribe(listener: (event: HostEvent) => void): () => void;
  /** Waits for running turns to settle and closes every database. */
  close(): Promise<void>;
}
