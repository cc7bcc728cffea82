/**
 * A worker's turn slots (issue 25): up to `slots` turn jobs at once, fed by one fetcher. Idle, it asks
 * PostgreSQL for jobs once per poll (0.5 s) for all its free slots together (pg-boss `fetch` with a
 * `batchSize` of the free slots), where one pg-boss worker per slot asked once per slot. A job's end,
 * or `wake()`, makes it fetch at once, so an agent's next job (held back by the queue's key while
 * this one ran) starts without waiting for the poll.
 *
 * The `key_strict_fifo` queue still gives out one job per agent at a time: a fetch returns the head
 * job of each key, and none of a key whose job is active. Each job's pg-boss heartbeat is kept while
 * it runs (half its `heartbeatSeconds`, as pg-boss's own workers do), and its end is written fenced
 * to the attempt fetched (its id and retry count): a job whose claim lapsed and went to another
 * worker is not completed or failed by this one.
 */
import type { JobWithMetadata, PgBoss } from 'pg-boss';

export interface TurnSlotsOptions<T extends object> {
  boss: PgBoss;
  queue: string;
  slots: number;
  /** How long an idle fetcher waits before asking again. */
  pollMs: number;
  /** Runs a job; throwing fails it (pg-boss retries it while it has tries left). */
  run(job: JobWithMetadata<T>): Promise<void>;
  /** A fetch, or a job's completion, could not reach the database (tried again at the next poll). */
  onQueueError?(error: unknown): void;
}

export interface TurnSlots {
  /** Fetches now rather than at the next poll. */
  wake: () => void;
  /** Fetches no more, and resolves once the running jobs have ended. */
  stop: () => Promise<void>;
}

export function startTurnSlots<T extends object>(options: TurnSlotsOptions<T>): TurnSlots {
  const { boss, queue } = options;
  const running = new Set<Promise<void>>();
  let stopped = false;
  let woken = false;
  let wakeUp: (() => void) | null = null;
  const wake = () => {
    woken = true;
    wakeUp?.();
  };

  const settle = async (job: JobWithMetadata<T>) => {
    const attempt = { id: job.id, retryCount: job.retryCount };
    const heartbeat = job.heartbeatSeconds ?? 0;
    const beat =
      heartbeat > 0
        ? setInterval(
            () => void boss.touch(queue, [attempt]).catch((error: unknown) => options.onQueueError?.(error)),
            (heartbeat * 1000) / 2,
          )
        : undefined;
    try {
      try {
        await options.run(job);
      } catch (error) {
        const failure = error instanceof Error ? { message: error.message, stack: error.stack } : { error };
        await boss.fail(queue, [attempt], failure);
        return;
      } finally {
        clearInterval(beat);
      }
      await boss.complete(queue, [attempt]);
    } catch (error) {
      // Not settled: its heartbeat lapses, and pg-boss fails it and gives it to a worker again.
      options.onQueueError?.(error);
    }
  };

  const fetchLoop = (async () => {
    while (!stopped) {
      woken = false;
      const free = options.slots - running.size;
      let fetched = 0;
      if (free > 0) {
        try {
          const jobs = await boss.fetch<T>(queue, { batchSize: free, includeMetadata: true });
          fetched = jobs.length;
          for (const job of jobs) {
            const done: Promise<void> = settle(job).finally(() => {
              running.delete(done);
              wake();
            });
            running.add(done);
          }
        } catch (error) {
          options.onQueueError?.(error);
        }
      }
      // Every free slot filled: there may be more. Woken meanwhile: something ended or came in.
      if (stopped || (free > 0 && fetched === free) || woken) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.pollMs);
        wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wakeUp = null;
    }
  })();

  return {
    wake,
    stop: async () => {
      stopped = true;
      wakeUp?.();
      await fetchLoop;
      await Promise.allSettled([...running]);
    },
  };
}
