/**
 * One agent's stores, as the turn engine sees them: the host picks a backend (the files backend
 * today: stores/files/agent-stores.ts) and the session reaches its data only through these
 * interfaces, never through a file of its own choosing.
 */
import { isSubagentId, type AgentPaths } from './files/layout.ts';
import type { AgentFence } from './postgres/leases.ts';
import type { Profile } from './files/profile.ts';
import type { AttachmentsStore } from './attachments.ts';
import type { InboxStore } from './inbox.ts';
import type { LedgerStore } from './ledger.ts';
import type { SecretsStore } from './secrets.ts';
import type { TranscriptLog } from './transcript.ts';

/** The agent's profile (name, switches, sandbox policy); the operator may change it while the box runs. */
export interface ProfileSource {
  /** Reads it again, and notes the version read. */
  read(): Promise<Profile>;
  /** True when it changed since the last `read`. */
  changed(): boolean;
  /** Replaces it whole, atomically (`updateAgent`, `update_state profile`); the next `read` gets it. */
  write(profile: Profile): Promise<void>;
}

/**
 * Held while the agent is the focused one (grok-bot-format.md §9: a created agent is left with its
 * store locked); writes of the host's own pass it.
 */
export interface FocusLock {
  hold(): void;
  release(): void;
}

export interface AgentStores {
  readonly ledger: LedgerStore;
  readonly transcript: TranscriptLog;
  readonly inbox: InboxStore;
  readonly attachments: AttachmentsStore;
  readonly secrets: SecretsStore;
  readonly profile: ProfileSource;
  readonly focus: FocusLock;
  /**
   * Where the agent's files are on this machine: its sandbox (tools run there) and the local copies
   * tools and the model view read (attachments).
   */
  readonly local: AgentPaths;
  /**
   * A cluster's: the lease fence the stores write behind (its epoch moved by the turn worker; null
   * outside a turn). What a turn writes beside these stores (task rows, memory) passes it too.
   */
  readonly fence?: AgentFence;
  /**
   * The transcript of a subagent this agent started (`sand-subagent-<uuid>`), written by its
   * TranscriptWriter as the agent's own is: on files the JSONL at
   * `agent-transcripts/<child>/<child>.jsonl`; a cluster's rows, written behind this agent's fence.
   * Any other id is refused (a rejection): every backend's goes through `childTranscripts`.
   */
  childTranscript(childId: string): Promise<TranscriptLog>;
  /** True when the ledger was replaced under the session (another file in its place): read it all again. */
  replaced(): boolean;
  /** Closes every store (the focus lock is released). */
  close(): void;
}

/**
 * `AgentStores.childTranscript` over a backend's own opener, behind the check every backend relies
 * on: only a subagent id names a child's log (on files it is a folder name under
 * `agent-transcripts/`, in a cluster a key of the parent's rows), so another agent's id or a path
 * never opens one.
 */
export function childTranscripts(
  open: (childId: string) => TranscriptLog,
): (childId: string) => Promise<TranscriptLog> {
  return (childId) =>
    isSubagentId(childId)
      ? Promise.resolve().then(() => open(childId))
      : Promise.reject(new Error(`not a subagent id: ${JSON.stringify(childId)}`));
}

/** What opens an agent's stores (created when missing). */
export interface StoreBackend {
  open(agentId: string): Promise<AgentStores>;
  /** Whether the agent exists (absent: its profile.json in the data dir says). */
  exists?(agentId: string): Promise<boolean>;
  /**
   * Every agent the backend holds, wherever it was made (a cluster's other workers). Absent: the
   * agents of the data dir.
   */
  agentIds?(): Promise<string[]>;
  /**
   * Every agent the backend holds, with a mark that changes whenever what a session's refresh reads
   * (its profile, ledger rows, transcript, unread state) changes, read in one query: a roster list refreshes only
   * the agents whose mark moved. Absent: every listed agent is refreshed.
   */
  rosterMarks?(): Promise<Map<string, string>>;
  /**
   * Brings a stored attachment this machine has no copy of into the agent's local copies (the
   * cluster's bucket); false when the backend has none either. Absent: the local copies are all.
   */
  fetchAttachment?(agentId: string, sha256: string): Promise<boolean>;
  /**
   * Deletes what the agent has beyond this machine's folders (the cluster's rows and bucket
   * objects), before its folders go; a refusal (the agent is working elsewhere) leaves everything.
   * Absent: its folders are all there is.
   */
  remove?(agentId: string): Promise<void>;
  /**
   * Copies the attachments the backend holds beyond this machine (the cluster's bucket objects) to
   * another agent (duplicateAgent). Absent: the data dir's folder is copied.
   */
  copyAttachments?(fromId: string, toId: string): Promise<void>;
  /**
   * The agent's profile as stored now, without opening its stores (approval rules, MCP servers).
   * Absent: its profile.json in the data dir.
   */
  readProfile?(agentId: string): Promise<Profile>;
}
