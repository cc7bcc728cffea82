/**
 * The contract between the host runtime (agents, turns, files) and what
 * drives it (the HTTP gateway, tests, the CLI). The runtime implements
 * `AgentHost`; the gateway only calls these methods and forwards events.
 */
import type { TaskView } from '../tasks/agent-tasks.ts';
import type { RoutineUpdate, RoutineView } from '../routines/routines.ts';
import type { HostEvent } from '../agent/events.ts';
import type { TurnState } from '../agent/turn-state.ts';
import type { ModelStatus } from '../providers/types.ts';
import type { SandboxStatus } from '../sandbox/confinement.ts';
import type { PendingInput } from '../stores/inbox.ts';
import type { SequencedEntry } from '../stores/ledger.ts';
import type { PromptRevision } from '../agent/revisions.ts';
import type { DiskStatus } from '../sandbox/disk-quota.ts';
import type { ModelSettingsInput, ModelSettingsView } from './model-settings.ts';
import type { ConnectionCheck } from '../providers/connection-check.ts';
import type { TodoItem } from '../tools/types.ts';
import type { AgentSettings } from '../profile/agent-settings.ts';
import type { AgentUpdate } from '../profile/agent-update.ts';
import type { MemoryView } from '../memory/memory-view.ts';
import type { MemoryScope } from '../memory/memory-store.ts';
import type { BoxSecretsView } from '../mcp/hub.ts';
import type { ConnectStart } from '../mcp/oauth.ts';
import type { McpSettings } from '../mcp/settings.ts';

/** The settings panel's view: the model's settings, and whether web search is on (or how to turn it on). */
export type SettingsView = ModelSettingsView & { webSearch: { backend: string | null; howToEnable: string } };

/** getStatus's `sandbox.disk`: DiskStatus with each holder named by agent. */
export type SandboxDiskStatus = Omit<DiskStatus, 'holders'> & {
  holders: Array<{ agentId: string; name: string | null; bytes: number; overQuota: boolean }>;
};

/** One row of `listAgents` (grok-bot-format.md §9, the captured v4 roster row). */
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
  /** sendbox extension: a running turn waits on an approval card (approvals/gate.ts). */
  awaitingApproval: boolean;
  /** sendbox extension: inputs accepted whose turn has not started (the UI shows them as pending). */
  pendingInputs: number;
  /** sendbox extension: the live turn state, for the working indicator. */
  state: TurnState;
  /** sendbox extension: true for agents the user cannot prompt (the no-model demo). */
  readOnly: boolean;
}

export interface CreateAgentInput {
  /** Empty or absent: untitled until its first prompt names it. */
  name?: string;
  description?: string;
  /** `box` for agents created through the gateway. */
  harness?: string;
}

export type { SandboxStatus };

export interface UploadInput {
  agentId: string;
  fileName: string;
  bytes: Uint8Array;
  clientNonce?: string;
}

export interface AgentHost {
  readonly dataDir: string;
  /** mcp.json's servers for the settings panel: status and tools, add/edit/remove/test, the sessions switch. */
  readonly mcpSettings: Pick<McpSettings, 'view' | 'set' | 'remove' | 'setSessions' | 'test'>;
  modelStatus(): ModelStatus;
  /** The settings panel's view of the model (never the key). */
  modelSettings(): SettingsView;
  /** "Test connection": one small model call with the settings as typed, and what is wrong, named. */
  testModelSettings(input: ModelSettingsInput): Promise<ConnectionCheck>;
  /** Saves the panel's settings (key 0600 in the data dir) and applies them without a restart. */
  updateModelSettings(input: ModelSettingsInput): Promise<SettingsView>;
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
  /** The agent's task list (its `update_todos` calls, rebuilt from the JSONL when it is loaded). */
  todos(id: string): Promise<TodoItem[]>;
  /** Inputs accepted whose turn has not started, oldest first (shown as pending until their turn). */
  pendingInputs(id: string): Promise<PendingInput[]>;
  /** The ids of the agent's secret requests whose secret its own store does not hold (a duplicate's copied ones). */
  secretRequestsNotHeld(id: string): Promise<string[]>;
  /** Entries with seq > afterSeq, for resuming an event stream. */
  entriesAfter(id: string, afterSeq: number): Promise<SequencedEntry[]>;
  /** The ledger entry with this id (undefined when the agent has none); 404 for an unknown agent. */
  entryById(agentId: string, entryId: string): Promise<SequencedEntry | undefined>;
  /**
   * Brings a stored attachment this machine has no copy of (a cluster worker: from the bucket);
   * false when there is none. Absent: the data dir's copies are all there is.
   */
  fetchAttachment?(agentId: string, sha256: string): Promise<boolean>;
  deleteAgent(id: string): Promise<void>;
  /** The agent's name, description, instructions, network allowlist and model (the settings dialog). */
  agentSettings(id: string): Promise<AgentSettings>;
  /** Rewrites profile.json atomically; a rename writes the `name-changed` event; the roster is told. */
  updateAgent(id: string, update: AgentUpdate): Promise<AgentSettings>;
  /** The box secrets (`${secret:NAME}` in mcp.json): names only, never a value. */
  listBoxSecrets(): Promise<BoxSecretsView>;
  /** Saves a box secret encrypted with the box's key (or removes it: `value` undefined). */
  setBoxSecret(input: { name: string; value: string | undefined }): Promise<BoxSecretsView>;
  /** A Connect card's button: the MCP server's authorization URL (the callback goes to `redirectUrl`). */
  startMcpConnect(input: { agentId?: string; server: string; redirectUrl: string }): Promise<ConnectStart>;
  /** The OAuth callback: trades the code for tokens (kept encrypted) and tells the agent's conversation, if a card started it. */
  finishMcpConnect(input: { state: string; code: string }): Promise<{ server: string; agentId?: string }>;
  /** The agent's memory and the user's (shared by every agent). */
  memory(agentId: string): Promise<MemoryView>;
  /** Deletes the memory entries whose text is exactly `text` (404, naming near matches, when none is). */
  forgetMemory(input: { agentId: string; scope: MemoryScope; text: string }): Promise<MemoryView>;
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
  /** Regenerate the last reply, or edit the last prompt and resend (agent/revisions.ts). */
  revisePrompt(input: {
    agentId: string;
    clientNonce: string;
    revision: PromptRevision;
  }): Promise<{ accepted: true; duplicate: boolean }>;
  /** Removes a prompt that waits for its turn; one that started cannot be (409). */
  removeQueuedPrompt(input: { agentId: string; nonce: string }): Promise<{ removed: true }>;
  /** The agent's background tasks (commands `shell` started with isBackground, subagents `task` started). */
  listTasks(agentId: string): Promise<TaskView[]>;
  /** Stops one background task (a command's whole process tree, or a subagent's turn). */
  stopTask(agentId: string, taskId: string): Promise<{ stopped: boolean }>;
  /** The agent's routines with their next run and latest runs. */
  listRoutines(agentId: string): Promise<RoutineView[]>;
  /** Pauses, resumes, deletes or changes one of the agent's routines. */
  updateRoutine(agentId: string, change: RoutineUpdate): Promise<{ routine: RoutineView | null }>;
  /** A subagent's steps, ledger-entry shaped, read from its transcript. */
  openSubagent(agentId: string, subagentId: string): Promise<SequencedEntry[]>;
  answerWidget(input: {
    agentId: string;
    messageId: string;
    answer: string | string[];
  }): Promise<{ accepted: true }>;
  /** Answers an approval card before a tool runs (allow once, always, or deny). Accepted once per card. */
  answerToolApproval(input: {
    agentId: string;
    entryId: string;
    decision: 'allow' | 'allow-always' | 'deny';
  }): Promise<{ accepted: true; resumed: boolean }>;
  /** Answers a secret-request by its message id; the value goes to the secret store only. Accepted once. */
  submitSecret(input: { agentId: string; messageId: string; value: string }): Promise<{ saved: true }>;
  /** Stages a user file into the agent's sandbox folder and records a `user-attachment` entry. */
  uploadFile(input: UploadInput): Promise<SequencedEntry>;
  /** Subscribes to host events; returns the unsubscribe function. */
  subscribe(listener: (event: HostEvent) => void): () => void;
  /** Waits for running turns to settle and closes every database. */
  close(): Promise<void>;
}
