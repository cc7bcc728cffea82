/**
 * The cluster's turn queue on pg-boss 12 (issue 25 §2): one job per accepted input, in a
 * `key_strict_fifo` queue keyed by agent id, so one worker at a time runs an agent's turns, in the
 * order they were accepted. The job is inserted in the transaction that accepts the input
 * (accept-batch.ts).
 */
import { PgBoss } from 'pg-boss';

export const TURN_QUEUE = 'sendbox-turns';

/**
 * Tries of a turn job after its first (pg-boss's `retryLimit`): a worker that dies fails its job,
 * which another worker then retries. A cut turn is resumed at most MAX_TURN_RESUMES (2) times
 * (agent/turn-resume.ts) and closed at the next try, so a job needs one retry more than that; the
 * last try always closes a cut turn (cluster/turn-worker.ts), since a job that fails with no retry
 * left would hold the agent's queue.
 */
export const TURN_RETRY_LIMIT = 3;

/**
 * Where a turn job goes once it is out of tries (pg-boss's dead letter queue). A failed job holds
 * its agent's key in a `key_strict_fifo` queue, so none of the agent's later jobs would ever run:
 * cluster/dead-turn-jobs.ts gives the agent one more, closing try and then deletes the failed job.
 */
export const DEAD_TURN_QUEUE = 'sendbox-turns-dead';

/**
 * How long a turn job may run (pg-boss's `expireInSeconds`, at most 24 h): a turn is as long as its
 * work, and a dead worker is found by its missed heartbeats (`heartbeatSeconds`), not by this. With
 * pg-boss's default (15 minutes) a longer turn had its job failed under it and retried elsewhere,
 * which took the lease from the worker still running it.
 */
export const TURN_JOB_MAX_SECONDS = 24 * 60 * 60;

export interface TurnJob {
  agentId: string;
  nonce: string;
}

/** Starts pg-boss in its own schema beside the box's (`<schema>_jobs`) and makes the turn queue. */
export async function startTurnQueue(url: string, schema: string): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString: url,
    schema: `${schema}_jobs`,
    // Failover in seconds, not the default minute (issue 25: 57 s with the defaults).
    superviseIntervalSeconds: 1,
    monitorIntervalSeconds: 1,
  });
  boss.on('error', () => undefined);
  await boss.start();
  // Tried again every few seconds while it cannot run (the agent's lease held, the bucket away).
  // Its try runs the agent's pending turns: bounded like a turn job, a dead worker found the same way.
  const deadTurnJobs = { heartbeatSeconds: 10, expireInSeconds: TURN_JOB_MAX_SECONDS };
  await boss.createQueue(DEAD_TURN_QUEUE, {
    retryLimit: 20,
    retryDelay: 2,
    retryBackoff: true,
    retryDelayMax: 30,
    ...deadTurnJobs,
  });
  await boss.updateQueue(DEAD_TURN_QUEUE, deadTurnJobs);
  await boss.createQueue(TURN_QUEUE, {
    policy: 'key_strict_fifo',
    heartbeatSeconds: 10,
    expireInSeconds: TURN_JOB_MAX_SECONDS,
    retryLimit: TURN_RETRY_LIMIT,
    deadLetter: DEAD_TURN_QUEUE,
  });
  // A queue made before the dead letter queue or the turn's bound existed gets them too.
  await boss.updateQueue(TURN_QUEUE, { deadLetter: DEAD_TURN_QUEUE, expireInSeconds: TURN_JOB_MAX_SECONDS });
  return boss;
}
