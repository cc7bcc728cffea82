/**
 * The cluster's turn worker (issue 25 §2): any worker process takes the next turn job of the queue
 * (pg-boss, `key_strict_fifo` by agent: one job of an agent at a time, in accept order), claims the
 * agent's lease (waiting out a dead holder's), and runs the agent's pending inputs behind that lease
 * epoch. The lease is renewed while the turns run; when a renewal finds it taken over, the turns are
 * stopped (the signal aborts: their tools are killed) and every later write of theirs is refused by
 * the fence. pg-boss's heartbeat brings the job of a worker that died back to another one; a job out
 * of tries gets one more, closing try (dead-turn-jobs.ts), so it never holds the agent's queue.
 */
import type { PgBoss } from 'pg-boss';
import { SupersededError, type Leases } from '../stores/postgres/leases.ts';
import { DEAD_TURN_QUEUE, TURN_QUEUE, type TurnJob } from '../stores/postgres/turn-queue.ts';
import { workDeadTurnJobs } from './dead-turn-jobs.ts';
import { startTurnSlots } from './turn-slots.ts';

export interface TurnWorkerOptions {
  boss: PgBoss;
  leases: Leases;
  /** False when the agent has nothing to run (agentHasWork): the job ends at once, its lease let go. */
  hasWork(agentId: string): Promise<boolean>;
  /**
   * Runs the agent's pending inputs (LocalAgentHost.runQueuedTurns) behind the lease `job.epoch`;
   * stops when `signal` aborts. The lease is let go only after it returns. `job.lastTry`: the job
   * has no retry left, so a turn a dead worker cut is closed, not resumed.
   */
  run(agentId: string, signal: AbortSignal, job: { epoch: number; lastTry: boolean }): Promise<void>;
  /** Told when a job ends in an error (pg-boss retries it). */
  onError?(agentId: string, error: unknown): void;
  /**
   * A Stop stored for the agent, read at a renewal of the lease (Leases.askStop): stops its turn
   * if that turn's user entry is at or before `seq`.
   */
  stopAsked?(agentId: string, seq: number): void;
  /**
   * A prompt accepted through another gateway while a call of the agent's turn waits on an approval
   * card, stored (approval-waits.ts) and read at a renewal of the lease: the wait ends, as on its note.
   */
  yieldAsked?(agentId: string): void;
}

export interface TurnWorker {
  /** Looks for a job now rather than at the next poll (an input was just accepted somewhere). */
  wake(): void;
  stop(): Promise<void>;
}

/**
 * How many agents' turns one worker runs at once (`SENDBOX_TURN_CONCURRENCY`): the slots of one
 * fetcher (turn-slots.ts), so an agent's long turn does not hold every other agent's turns on this
 * machine (the queue's key keeps one job per agent at a time).
 */
export const DEFAULT_TURN_CONCURRENCY = 8;

/** How often an idle worker asks for turn jobs. */
const POLL_MS = 500;

export function turnConcurrency(env: NodeJS.ProcessEnv): number {
  const raw = env.SENDBOX_TURN_CONCURRENCY;
  if (raw === undefined || raw === '') return DEFAULT_TURN_CONCURRENCY;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > 256)
    throw new Error(`SENDBOX_TURN_CONCURRENCY=${raw}: give a whole number of turns at once, 1 to 256`);
  return value;
}

export async function startTurnWorker(
  options: TurnWorkerOptions & { concurrency?: number },
): Promise<TurnWorker> {
  const { boss } = options;
  // One fetcher for every slot, woken at once after a job ends (issue 25: LISTEN mode delayed a
  // same-agent successor by 27 s).
  const slots = startTurnSlots<TurnJob>({
    boss,
    queue: TURN_QUEUE,
    slots: options.concurrency ?? DEFAULT_TURN_CONCURRENCY,
    pollMs: POLL_MS,
    run: async (job) => {
      const { agentId } = job.data;
      try {
        await runUnderLease(options, agentId, job.retryCount >= job.retryLimit);
      } catch (error) {
        options.onError?.(agentId, error);
        throw error;
      }
    },
  });
  const deadId = await workDeadTurnJobs({
    boss,
    closingTry: (agentId) => runUnderLease(options, agentId, true),
    onError: (agentId, error) => options.onError?.(agentId, error),
    freed: slots.wake,
  });
  return {
    wake: slots.wake,
    stop: async () => {
      await slots.stop();
      await boss.offWork(DEAD_TURN_QUEUE, { id: deadId });
    },
  };
}

async function runUnderLease(options: TurnWorkerOptions, agentId: string, lastTry: boolean): Promise<void> {
  const { leases } = options;
  const lease = await leases.claimWhenFree(agentId);
  const lost = new AbortController();
  const renewal = setInterval(
    () => {
      leases.renew(lease).then(
        (held) => {
          if (!held) {
            lost.abort(new SupersededError(agentId, lease.epoch));
            return;
          }
          if (lease.stopSeq !== undefined) options.stopAsked?.(agentId, lease.stopSeq);
          if (lease.yieldAsked) options.yieldAsked?.(agentId);
        },
        () => undefined, // the database is unreachable for now: the next renewal tries again
      );
    },
    Math.max(100, leases.ttlMs / 3),
  );
  try {
    // Asked under the lease: an input accepted after this has a job of its own, after this one.
    if (!(await options.hasWork(agentId))) return;
    await options.run(agentId, lost.signal, { epoch: lease.epoch, lastTry });
    if (lost.signal.aborted) throw lost.signal.reason;
  } finally {
    clearInterval(renewal);
    if (!lost.signal.aborted) await leases.release(lease).catch(() => undefined);
  }
}
