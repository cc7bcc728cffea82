/**
 * The reads of a scan (scan.ts): each session left by the byte pass is read
 * as `view` reads it and its rows checked against the query. From
 * READ_WORKER_BYTES of sources on, the reads are spread over worker threads
 * (read-worker.ts): the workers and this thread claim sessions in order
 * through a shared counter, and the results are taken in that order, so the
 * scan's stop at a broad query's bound, its counts and its warnings are
 * those of one thread reading one session after another. Below the bound no
 * worker starts: a worker loads the codecs, about 50 ms, which a small home
 * would only pay for; and workers start only once this thread has read
 * READ_WORKER_WARMUP of sources, so that a broad query whose newest sessions
 * are enough starts none.
 *
 * Workers only save time: one that cannot start, fails, or ends before
 * reporting a session it claimed leaves that session to this thread.
 *
 * The worker script: next to the bundle (bin/run-entry.mjs builds it as
 * READ_WORKER_FILE); from the TypeScript sources, read-worker.ts itself,
 * run by Node with `--experimental-transform-types` (tests).
 */
import { availableParallelism, loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { FoundSession } from '../cli/sessions.ts';
import { envValue } from '../harness/env.ts';
import type { SessionSummary } from '../harness/types.ts';
import type { Query } from './query.ts';
import { sourceBytes } from './refresh.ts';
import { type SessionRead, readForScan } from './session-read.ts';

/** The worker script's name next to the bundle; bin/run-entry.mjs builds it under this name. */
export const READ_WORKER_FILE = 'txcript-read-worker.mjs';
/**
 * Sources of fewer bytes than this are read on this thread alone. A worker takes about 50 ms to
 * start and load the codecs, in which this thread reads about 5 MB of Claude Code sessions; with
 * one worker beside it, the scan saves half of what is left.
 */
export const READ_WORKER_BYTES = 16 * 1024 * 1024;
/** Sources this thread reads before workers start (a broad query's bound is often met by then). */
export const READ_WORKER_WARMUP = 4 * 1024 * 1024;
/** At most this many workers. */
const MAX_WORKERS = 4;

export interface ScanReadOptions {
  /** Workers to start (default: readWorkersFor the sources' bytes). */
  readWorkers?: number;
  /** The worker script (default: the bundle's, else read-worker.ts). */
  readWorkerUrl?: URL;
  /** Unless `readWorkers` is given: sources read on this thread before workers may start (default READ_WORKER_WARMUP). */
  readWorkerWarmup?: number;
  /** Unless `readWorkers` is given: how many workers for the bytes left then (default readWorkersFor). */
  readWorkersFor?: (bytes: number) => number;
}

/** Whether every session's harness is the catalog's own, which a worker loads. */
async function catalogHarnesses(sessions: readonly FoundSession[]): Promise<boolean> {
  const { loadHarness } = await import('../harness/catalog.ts');
  const ids = new Map(sessions.map((s) => [s.harness.id, s.harness]));
  for (const [id, harness] of ids)
    if ((await loadHarness(id).catch(() => undefined)) !== harness) return false;
  return true;
}

/**
 * The default number of read workers for sources of `bytes`: one per core
 * that the machine's load leaves free (`load`: the 1-minute load average,
 * this scan included), at most MAX_WORKERS. On a machine whose cores are
 * all busy a worker cannot run beside this thread: it would only add its
 * start-up and its own warm-up to the CPU time.
 */
export function readWorkersFor(bytes: number, load: number = loadavg()[0]!): number {
  if (bytes < READ_WORKER_BYTES) return 0;
  const free = Math.floor(availableParallelism() - Math.max(1, load));
  return Math.max(0, Math.min(MAX_WORKERS, free));
}

/** `TXCRIPT_SCAN_READ_WORKERS`: a number of read workers (0: none), whatever the sources' size; unset: by size. */
export function workersFromEnv(env: NodeJS.ProcessEnv): number | undefined {
  const v = envValue(env, 'TXCRIPT_SCAN_READ_WORKERS');
  if (v === undefined || !/^[0-9]+$/.test(v)) return undefined;
  return Math.min(Number(v), MAX_WORKERS);
}

function workerUrl(): URL {
  return import.meta.url.endsWith('.ts')
    ? new URL('./read-worker.ts', import.meta.url)
    : new URL(`./${READ_WORKER_FILE}`, import.meta.url);
}

/** What a read worker is given: the sessions in order, and what to check them for. */
export interface ReadJob {
  env: NodeJS.ProcessEnv;
  sessions: Array<{ harness: string; summary: SessionSummary }>;
  query: Query;
  phrases: string[];
}

/** A worker's report: the index of a session and its read, or null when it failed there (this thread reads it again). */
export type ReadReport = Array<[number, SessionRead | null]>;

/**
 * Read `sessions` in order, handing each read to `take` in that order until
 * `take` returns false (the scan has what it needs: no later session is
 * read). Workers start once this thread has read READ_WORKER_WARMUP bytes
 * of sources and READ_WORKER_BYTES are left: a broad query, whose newest
 * sessions are often enough, starts none. Returns how many were started.
 */
export async function readInOrder(
  env: NodeJS.ProcessEnv,
  sessions: readonly FoundSession[],
  query: Query,
  phrases: readonly string[],
  take: (read: SessionRead) => boolean,
  options: ScanReadOptions = {},
): Promise<number> {
  const forced = options.readWorkers ?? workersFromEnv(env);
  const next = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
  const results = new Map<number, SessionRead>();
  const failed = new Set<number>();
  let wake: () => void = () => {};
  const workers: Worker[] = [];
  let running = 0;
  const start = (count: number): void => {
    const job: ReadJob = {
      env,
      sessions: sessions.map((s) => ({ harness: s.harness.id, summary: s.summary })),
      query,
      phrases: [...phrases],
    };
    const url = options.readWorkerUrl ?? workerUrl();
    const execArgv = url.pathname.endsWith('.ts') ? ['--experimental-transform-types', '--no-warnings'] : [];
    for (let w = 0; w < count; w++) {
      let worker: Worker;
      try {
        worker = new Worker(url, { workerData: next, execArgv, env });
      } catch {
        continue;
      }
      running++;
      workers.push(worker);
      worker.on('message', (report: ReadReport) => {
        for (const [i, read] of report) {
          if (read === null) failed.add(i);
          else results.set(i, read);
        }
        wake();
      });
      worker.on('error', () => {});
      worker.on('exit', () => {
        running--;
        wake();
      });
      worker.postMessage(job);
    }
  };
  // A worker loads each harness from the catalog: sessions of another harness object (a test's) are read here.
  const startIfCan = async (count: number) => {
    if (count > 0 && sessions.length > 1 && (await catalogHarnesses(sessions))) start(count);
  };
  let started = forced !== undefined;
  if (forced !== undefined) await startIfCan(forced);
  // The sources read here (each one's size taken once read: a broad query that stops early stats no more).
  let readHere = 0;
  const here = async (i: number) => {
    results.set(i, await readForScan(env, sessions[i]!, query, phrases));
    if (!started) readHere += sourceBytes(sessions[i]!.summary.locator);
  };
  try {
    for (let at = 0; at < sessions.length; at++) {
      while (!results.has(at)) {
        if (failed.has(at) || (running === 0 && Atomics.load(next, 0) > at)) {
          // A worker failed on it, or claimed it and is gone.
          await here(at);
          continue;
        }
        // The next unclaimed session (`at` itself when no worker has it yet), or a wait for a worker's report.
        const i = Atomics.add(next, 0, 1);
        if (i < sessions.length) await here(i);
        else await new Promise<void>((resolve) => (wake = resolve));
      }
      const read = results.get(at)!;
      results.delete(at);
      if (!take(read)) break;
      if (!started && readHere >= (options.readWorkerWarmup ?? READ_WORKER_WARMUP)) {
        started = true;
        let left = 0;
        for (let i = at + 1; i < sessions.length && left < READ_WORKER_BYTES; i++)
          left += sourceBytes(sessions[i]!.summary.locator);
        await startIfCan((options.readWorkersFor ?? readWorkersFor)(left));
      }
    }
  } finally {
    // No later session is claimed; the workers are not needed any more.
    Atomics.store(next, 0, sessions.length);
    for (const w of workers) void w.terminate();
  }
  return workers.length;
}
