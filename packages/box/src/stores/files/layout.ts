/**
 * Where an agent's files live under the data dir. It is Grok Bot's layout
 * (grok-bot-format.md §1), so tools built for Grok Bot read ours:
 *
 *   <dataDir>/agents/<id>/profile.json        name, description, harness, timestamps (atomic writes)
 *   <dataDir>/agents/<id>/store.db            the UI ledger (canonical C11 DDL)
 *   <dataDir>/agents/<id>/attachments/        SHA-256 content-addressed files
 *   <dataDir>/agents/<id>/secrets.enc         AES-256-GCM secret store (0600)
 *   <dataDir>/agents/<id>/memory.json         the agent's memory (0600, atomic; memory/)
 *   <dataDir>/memory.json                     the user's memory, shared by every agent (memory/)
 *   <dataDir>/agent-transcripts/<id>/<id>.jsonl   the model transcript (append-only)
 *   <dataDir>/agent-transcripts/sand-subagent-<uuid>/sand-subagent-<uuid>.jsonl   a subagent's
 *   <dataDir>/sandboxes/<id>/                 the agent's working folder (tools run here)
 *   <dataDir>/keys/secrets.key                the secret-store key, outside every agent folder
 *   <dataDir>/roster.db                       sendbox's index of every agent's list row (a cache)
 *
 * The sandbox is outside `agents/<id>/` on purpose: a tool cannot reach the
 * ledger, the secret store or the attachments through a relative path.
 */
import path from 'node:path';

export interface AgentPaths {
  agentDir: string;
  profile: string;
  storeDb: string;
  attachments: string;
  secrets: string;
  memory: string;
  transcriptDir: string;
  jsonl: string;
  sandbox: string;
}

/** Agent ids are folder names: a UUID-like token, never a path. */
export const AGENT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;

export function isSafeAgentId(id: string): boolean {
  return AGENT_ID_PATTERN.test(id);
}

/** A subagent's id (tools/task newSubagentId): its transcript's folder and file name, as Grok Bot names them. */
export const SUBAGENT_ID_PATTERN = /^sand-subagent-[0-9a-f-]{36}$/;

export function isSubagentId(id: string): boolean {
  return SUBAGENT_ID_PATTERN.test(id);
}

export function agentPaths(dataDir: string, id: string): AgentPaths {
  if (!isSafeAgentId(id)) throw new Error(`not a valid agent id: ${JSON.stringify(id)}`);
  const agentDir = path.join(dataDir, 'agents', id);
  const transcriptDir = path.join(dataDir, 'agent-transcripts', id);
  return {
    agentDir,
    profile: path.join(agentDir, 'profile.json'),
    storeDb: path.join(agentDir, 'store.db'),
    attachments: path.join(agentDir, 'attachments'),
    secrets: path.join(agentDir, 'secrets.enc'),
    memory: path.join(agentDir, 'memory.json'),
    transcriptDir,
    jsonl: path.join(transcriptDir, `${id}.jsonl`),
    sandbox: path.join(dataDir, 'sandboxes', id),
  };
}

export function rosterDb(dataDir: string): string {
  return path.join(dataDir, 'roster.db');
}

/** The user's memory: every agent reads it (memory/). */
export function userMemoryFile(dataDir: string): string {
  return path.join(dataDir, 'memory.json');
}

export function agentsRoot(dataDir: string): string {
  return path.join(dataDir, 'agents');
}
