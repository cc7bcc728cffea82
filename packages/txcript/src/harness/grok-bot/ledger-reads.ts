/**
 * The ledger reads of a listing: many reads of what one `store.db` tells the
 * list (`readLedgerOutcome`, ledger-facts.ts), shared with a worker thread.
 *
 * A cold list of a box with many profile-only agents spends much of its time
 * in SQLite. When WORKER_THRESHOLD reads or more are expected, a
 * `worker_threads` Worker (ledger-worker.ts) is started before the caller
 * knows which ledgers to read (it reads the profiles meanwhile); the worker
 * reads them while the caller scans the JSONL transcripts, then the caller
 * joins in with what is left. Each ledger is claimed once through a shared
 * counter, so exactly one thread reads it, and both threads read with the
 * same `readLedgerOutcome`.
 *
 * The worker only saves time, it never decides an outcome: when it cannot
 * start, fails, or exits before reporting a ledger it claimed, the caller
 * reads that ledger itself.
 *
 * The worker script: the bundled CLI (bin/run-entry.mjs) builds
 * WORKER_FILE next to its bundle, which is where this module's code runs
 * then. From the TypeScript sources (tsx, vitest) there is none (Node 20
 * starts no `.ts` worker, even under tsx) and every ledger is read in-process.
 */
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import { envValue } from '../env.ts';
import type { Warning } from '../types.ts';
import { errorMessage } from '../../error-text.ts';
/**
 * Fewer ledger reads than this are not worth a worker. Measured on 2 slow cores (`txcript list
 * --no-cache`, boxes of N profile-only and N JSONL agents): a worker takes about 240 ms to be
 * ready (mostly loading zod), by which time the caller alone has read a few hundred ledgers;
 * it saves nothing at N = 150, 300 or 500, and about 100 ms at N = 1,000.
 */
export const WORKER_THRESHOLD = 500;
/** The worker script's name next to the bundle; bin/run-entry.mjs builds it under this name. */
export const WORKER_FILE = 'txcript-ledger-worker.mjs';
/** Outcomes the worker sends per message. */
const REPORT_EVERY = 32;
/** Ledgers read on the calling thread between two turns of its event loop (progress, worker reports). */
const YIELD_EVERY = 64;

/** What the list takes from a profile-only agent's ledger. */
export interface LedgerFacts {
  /** The Common messages of the ledger: the count `view` shows. */
  messages: number;
  lastActivityMs?: number;
  /** Looked for only when the profile has no name. */
  title?: string;
}

/** One ledger the list wants read. */
export interface LedgerRequest {
  path: string;
  /** The profile has no name: look for a title in the first entries. */
  needTitle: boolean;
}

/** A read's outcome: the facts (none when there is no `store.db`), or why the ledger could not be read. */
export type LedgerOutcome = { facts: LedgerFacts | undefined } | { error: string };

/** A time as epoch ms (a number, digits or ISO); none at or before the epoch (a fresh box writes 0). */
export function epochMs(v: unknown): number | undefined {
  let n: number | undefined;
  if (typeof v === 'number') n = v;
  else if (typeof v === 'string') n = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
  return n !== undefined && Number.isFinite(n) && n > 0 ? n : undefined;
}

/*
 * The protocol: the worker is started with a counter shared with the caller (`workerData`, an
 * Int32Array on a SharedArrayBuffer; `Atomics.add` hands out the next index), receives the requests
 * in one message, and reports outcomes as `[index, outcome]` pairs.
 */
type WorkerReport = [number, LedgerOutcome][];

/** Claim the next unread request, or undefined when none is left. */
function claim(next: Int32Array, total: number): number | undefined {
  const i = Atomics.add(next, 0, 1);
  return i < total ? i : undefined;
}

/** The worker's side (ledger-worker.ts): once the requests come, claim, read and report until none is left. */
export function serveLedgerReads(
  port: MessagePort,
  next: Int32Array,
  readLedgerOutcome: (request: LedgerRequest) => LedgerOutcome,
): void {
  port.once('message', (requests: LedgerRequest[]) => {
    let report: WorkerReport = [];
    for (let i = claim(next, requests.length); i !== undefined; i = claim(next, requests.length)) {
      report.push([i, readLedgerOutcome(requests[i]!)]);
      if (report.length >= REPORT_EVERY) {
        port.postMessage(report);
        report = [];
      }
    }
    if (report.length > 0) port.postMessage(report);
  });
}

/** The worker script next to the bundle; none from the TypeScript sources. */
export function bundledWorkerUrl(moduleUrl: string = import.meta.url): URL | undefined {
  return moduleUrl.endsWith('.ts') ? undefined : new URL(`./${WORKER_FILE}`, moduleUrl);
}

export interface LedgerWorkerOptions {
  /**
   * `auto` (default): a worker for WORKER_THRESHOLD requests or more, when there is a worker script.
   * `on`: a worker for any request, which reads them all (the caller only waits); a worker that
   * cannot be used is a warning (`TXCRIPT_LEDGER_WORKER=1`, for tests and diagnosis). `off`: none.
   */
  mode?: 'auto' | 'on' | 'off';
  /** The worker script. Default: bundledWorkerUrl(). */
  url?: URL;
}

/** Whether `total` reads get a worker: in `on` mode any number, even with no script (then reported). */
export function wantsWorker(
  mode: NonNullable<LedgerWorkerOptions['mode']>,
  total: number,
  url: URL | undefined,
): boolean {
  return mode === 'on' ? total > 0 : mode === 'auto' && total >= WORKER_THRESHOLD && url !== undefined;
}

/** `TXCRIPT_LEDGER_WORKER`: `0` off, `1` on, anything else (unset) auto. */
export function ledgerWorkerMode(env: NodeJS.ProcessEnv): NonNullable<LedgerWorkerOptions['mode']> {
  const v = envValue(env, 'TXCRIPT_LEDGER_WORKER');
  return v === '0' ? 'off' : v === '1' ? 'on' : 'auto';
}

export interface LedgerReads {
  /** The ledgers to read (call once): the worker begins on them at once (started now if not yet). */
  request(requests: readonly LedgerRequest[]): void;
  /**
   * Read on this thread what the worker has not claimed (in `on` mode: nothing), wait for the
   * worker's outcomes, read what it left unreported, and return the outcomes in request order.
   * `onRead` is called once per outcome. Call once, after `request`.
   */
  finish(onRead?: () => void): Promise<{ outcomes: LedgerOutcome[]; warnings: Warning[] }>;
}

/**
 * Get ready to read about `expected` ledgers: a worker, when that many are worth one, starts now,
 * so that its start-up overlaps what the caller does before it knows which ledgers to read. Never
 * throws.
 */
export function startLedgerReads(expected: number, options: LedgerWorkerOptions = {}): LedgerReads {
  const mode = options.mode ?? 'auto';
  const url = options.url ?? bundledWorkerUrl();
  const next = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
  let requests: readonly LedgerRequest[] = [];
  let outcomes: (LedgerOutcome | undefined)[] = [];
  let onRead: (() => void) | undefined;
  let filled = 0;
  const put = (i: number, outcome: LedgerOutcome): void => {
    if (outcomes[i] !== undefined) return;
    outcomes[i] = outcome;
    filled++;
    onRead?.();
  };

  let worker: Worker | undefined;
  /** Why the worker stopped before reporting everything it claimed. */
  let failure: string | undefined;
  let running = false;
  let wake = (): void => {};
  let tried = false;
  /** Start the worker (once) when `count` reads are worth one. */
  const spawn = (count: number): void => {
    if (tried || !wantsWorker(mode, count, url)) return;
    tried = true;
    if (url === undefined) {
      failure = 'no worker script when running from the TypeScript sources';
      return;
    }
    try {
      worker = new Worker(url, { workerData: next });
      // Not waited for yet: a caller that fails before `finish` must not be kept alive by it.
      worker.unref();
      running = true;
      worker.on('message', (report: WorkerReport) => {
        for (const [i, outcome] of report) put(i, outcome);
        wake();
      });
      worker.on('error', (e) => {
        failure ??= errorMessage(e);
      });
      worker.on('messageerror', (e) => {
        failure ??= `unreadable report: ${errorMessage(e)}`;
      });
      worker.on('exit', (code) => {
        if (code !== 0) failure ??= `exited with code ${code}`;
        running = false;
        wake();
      });
    } catch (e) {
      failure = errorMessage(e);
    }
  };
  spawn(expected);
  const stop = (): void => {
    if (worker === undefined) return;
    worker.unref();
    void worker.terminate(); // idle or still starting: not needed any more
  };

  /** Read what `pick` hands out on this thread, yielding now and then. */
  const readHere = async (pick: () => number | undefined): Promise<void> => {
    let sinceYield = 0;
    let read: ((request: LedgerRequest) => LedgerOutcome) | undefined;
    for (let i = pick(); i !== undefined; i = pick()) {
      // SQLite and the ledger schemas load only when this thread has a ledger to read.
      read ??= (await import('./ledger-facts.ts')).readLedgerOutcome;
      put(i, read(requests[i]!));
      if (++sinceYield >= YIELD_EVERY) {
        sinceYield = 0;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  };

  return {
    request(list) {
      requests = list;
      outcomes = new Array<LedgerOutcome | undefined>(list.length);
      spawn(list.length); // more than expected: a worker may pay now
      if (list.length === 0) stop();
      else if (running) worker?.postMessage(list);
    },
    async finish(callback) {
      const total = requests.length;
      onRead = callback;
      for (let i = 0; i < filled; i++) callback?.(); // outcomes the worker reported already
      if (worker === undefined || mode !== 'on') await readHere(() => claim(next, total));
      worker?.ref(); // waited for now
      while (filled < total && running) await new Promise<void>((resolve) => (wake = resolve));
      // Claimed by a worker that stopped before reporting them.
      if (worker !== undefined && filled < total)
        failure ??= `ended without reporting ${total - filled} ledgers`;
      let hole = 0;
      await readHere(() => {
        while (hole < total && outcomes[hole] !== undefined) hole++;
        return hole < total ? hole : undefined;
      });
      stop();
      const warnings: Warning[] =
        mode === 'on' && failure !== undefined && total > 0
          ? [
              {
                source: url === undefined ? WORKER_FILE : fileURLToPath(url),
                message: `ledger worker not used (${failure}); its ledgers were read in-process`,
              },
            ]
          : [];
      return { outcomes: outcomes as LedgerOutcome[], warnings };
    },
  };
}
