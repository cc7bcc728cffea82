/**
 * At a worker's start: the subagents a previous process of its name left running (marked lost by
 * `interruptOwnLeftovers`, stores/postgres/task-book.ts) get their transcripts closed, as a reader
 * that marks a child lost closes it (subagents/agent-background.ts): every open call its interrupted
 * result, written by this worker, which marked them (`lost_by`), outside any turn.
 */
import { noScrub } from '../secrets/scrub.ts';
import { childTranscripts } from '../stores/agent-stores.ts';
import type { Database } from '../stores/postgres/database.ts';
import { childrenClosed, type LeftoverTask } from '../stores/postgres/task-book.ts';
import { PgTranscript } from '../stores/postgres/transcript.ts';
import type { WritePoints } from '../stores/write-points.ts';
import { closeInterruptedChildren } from '../subagents/child-closer.ts';
import type { TaskRecord } from '../tasks/task-book.ts';

/** Closes the children among `leftovers`, agent by agent; an agent whose close failed is named in the error. */
export async function closeLeftoverChildren(
  db: Database,
  worker: string,
  leftovers: readonly LeftoverTask[],
  points: WritePoints,
): Promise<void> {
  const byAgent = new Map<string, TaskRecord[]>();
  for (const { agentId, task } of leftovers)
    if (task.kind === 'subagent') byAgent.set(agentId, [...(byAgent.get(agentId) ?? []), task]);
  const failed: string[] = [];
  for (const [agentId, children] of byAgent) {
    const transcript = childTranscripts(
      (childId) => new PgTranscript(db, { agentId, epoch: null }, { childId, worker }),
    );
    try {
      // Nothing to scrub: the closing records hold the interrupted result's fixed text and the names
      // of the open calls, which the transcript holds already.
      await closeInterruptedChildren(transcript, children, noScrub, points, (task) =>
        childrenClosed(db, agentId, [task.id]),
      );
    } catch (error) {
      failed.push(`agent ${agentId}: ${(error as Error).message}`);
    }
  }
  if (failed.length > 0)
    throw new Error(
      `the subagents a previous process of worker ${worker} ran were not all closed: ${failed.join('; ')}`,
    );
}
