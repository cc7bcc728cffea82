/**
 * A worker's local copies of the cluster's agents (its data dir: `agents/<id>` with the attachment
 * copies, `agent-transcripts/<id>`, `sandboxes/<id>`). The rows and the bucket hold an agent; these
 * are caches of the worker that served or ran it. An agent deleted through any gateway loses them on
 * every worker that hears the roster event; a worker that was down then clears them at its next
 * start, for every agent the cluster no longer has (no `profiles` row).
 */
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { agentPaths, isSafeAgentId } from '../stores/files/layout.ts';
import type { Database } from '../stores/postgres/database.ts';

/** The folders of the data dir that hold a folder per agent, named by its id. */
const PER_AGENT_ROOTS = ['agents', 'agent-transcripts', 'sandboxes'];

/** Removes this worker's local copies of one agent. */
export async function removeLocalCopies(dataDir: string, agentId: string): Promise<void> {
  const paths = agentPaths(dataDir, agentId);
  for (const dir of [paths.agentDir, paths.transcriptDir, paths.sandbox])
    await rm(dir, { recursive: true, force: true });
}

/**
 * Removes the local copies of every agent the cluster does not have (deleted while this worker was
 * down); returns their ids. Run at start, before the worker serves or takes a turn.
 */
export async function removeDeletedAgentsCopies(db: Database, dataDir: string): Promise<string[]> {
  const local = new Set<string>();
  for (const root of PER_AGENT_ROOTS) {
    const names = await readdir(path.join(dataDir, root)).catch(() => [] as string[]);
    for (const name of names) if (isSafeAgentId(name)) local.add(name);
  }
  if (local.size === 0) return [];
  const { rows } = await db.pool.query<{ agent_id: string }>(
    `SELECT agent_id FROM ${db.table('profiles')} WHERE agent_id = ANY($1)`,
    [[...local]],
  );
  for (const { agent_id: id } of rows) local.delete(id);
  for (const id of local) await removeLocalCopies(dataDir, id);
  return [...local];
}
