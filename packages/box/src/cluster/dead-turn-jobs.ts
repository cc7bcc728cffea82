/**
 * Turn jobs out of tries (issue 25). pg-boss keeps a failed job in the turn queue, and in a
 * `key_strict_fifo` queue a failed job holds its key: none of the agent's later jobs would run, so
 * the agent would never answer again. Its copy in the dead letter queue (stores/postgres/turn-queue.ts)
 * is taken here: behind the agent's lease, the agent gets one more try that closes a cut turn with a
 * notice (as a job's last try does) and runs its pending inputs; then the failed job is deleted and
 * the agent's next jobs run. While that try cannot run (the lease still held by a live worker, the
 * bucket or database away), the dead letter job is tried again with a growing delay; on its own last
 * try the failed job is deleted all the same, so the agent's queue moves on.
 */
import type { JobWithMetadata, PgBoss } from 'pg-boss';
import { DEAD_TURN_QUEUE, TURN_QUEUE, type TurnJob } from '../stores/postgres/turn-queue.ts';

export interface DeadTurnJobsOptions {
  boss: PgBoss;
  /** The agent's closing try behind its lease (turn-worker.ts's `runUnderLease` with `lastTry`). */
  closingTry(agentId: string): Promise<void>;
  /** Told when a closing try fails (it is tried again). */
  onError?(agentId: string, error: unknown): void;
  /** The agent's queue moved on: look for its next job now. */
  freed(): void;
}

export async function workDeadTurnJobs(options: DeadTurnJobsOptions): Promise<string> {
  const { boss } = options;
  return boss.work(
    DEAD_TURN_QUEUE,
    { pollingIntervalSeconds: 1, batchSize: 1, includeMetadata: true },
    async ([job]: JobWithMetadata<TurnJob>[]) => {
      if (!job) return;
      const { agentId } = job.data;
      try {
        await options.closingTry(agentId);
      } catch (error) {
        options.onError?.(agentId, error);
        if (job.retryCount < job.retryLimit) throw error;
      }
      // The failed turn job: deleting it frees the agent's key.
      if (job.sourceId) await boss.deleteJob(TURN_QUEUE, job.sourceId);
      options.freed();
    },
  );
}
