/**
 * The byte pass of a scan (byte-filter.ts) over many files, whole or line by line, spread over
 * worker threads: each worker (scan-worker.ts) and this thread claim files
 * one at a time through a shared counter, so a slow file holds up no one.
 * Workers only save time: one that cannot start, fails, or ends before
 * reporting a file it claimed leaves that file to this thread.
 *
 * The worker script: next to the bundle (bin/run-entry.mjs builds it as
 * WORKER_FILE); from the TypeScript sources, scan-worker.ts itself, which
 * Node 22.18+ runs with its type stripping.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { mayHoldAll, readParts } from './byte-filter.ts';

/** The worker script's name next to the bundle; bin/run-entry.mjs builds it under this name. */
export const WORKER_FILE = 'txcript-scan-worker.mjs';
/**
 * Fewer bytes than this are read on this thread alone: a worker takes 20–40 ms to start, in which
 * this thread checks about 20 MB.
 */
export const WORKER_BYTES = 24 * 1024 * 1024;
/** At most this many workers (the reads and the folding are what they share: the disk and memory bandwidth). */
const MAX_WORKERS = 4;

export interface FileCheck {
  path: string;
  /** The files read for it, checked as one (default: `path` alone; see Harness `textFiles`). */
  parts?: readonly string[];
  bytes: number;
  /** The titles (folded) of the file's sessions, which count as part of it. */
  titles: readonly string[];
  /** One line must hold every needle (mayHoldAll `perLine`). */
  perLine?: boolean;
}

export interface ScanFileOptions {
  /** Workers to start (default: one per core but one, at most MAX_WORKERS, none under WORKER_BYTES). */
  workers?: number;
  /** The worker script (default: the bundle's, else scan-worker.ts). */
  url?: URL;
  /** false: this thread claims no file until the workers end (tests of the workers). */
  claimHere?: boolean;
}

function workerUrl(): URL {
  return import.meta.url.endsWith('.ts')
    ? new URL('./scan-worker.ts', import.meta.url)
    : new URL(`./${WORKER_FILE}`, import.meta.url);
}

/** The default number of workers for `bytes` to check. */
export function workersFor(bytes: number): number {
  if (bytes < WORKER_BYTES) return 0;
  return Math.max(1, Math.min(MAX_WORKERS, availableParallelism() - 1));
}

/**
 * For each file, whether it may hold every needle: true, false, or the
 * error met reading it (a file that vanished since it was listed).
 */
export async function checkFiles(
  files: readonly FileCheck[],
  needles: readonly string[],
  options: ScanFileOptions = {},
): Promise<Array<boolean | Error>> {
  const verdicts: Array<boolean | Error | undefined> = files.map(() => undefined);
  const next = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
  const check = (i: number): boolean | Error => {
    const f = files[i]!;
    try {
      return mayHoldAll(readParts(f.parts ?? [f.path]), needles, f.titles, f.perLine === true);
    } catch (err) {
      return err instanceof Error ? err : new Error(String(err));
    }
  };
  const count = options.workers ?? workersFor(files.reduce((s, f) => s + f.bytes, 0));
  const running: Array<Promise<void>> = [];
  for (let w = 0; w < count; w++)
    running.push(runWorker(options.url ?? workerUrl(), next, files, needles, verdicts));
  // This thread claims files too, while the workers start and run.
  if (options.claimHere !== false)
    for (let i = Atomics.add(next, 0, 1); i < files.length; i = Atomics.add(next, 0, 1))
      verdicts[i] = check(i);
  await Promise.all(running);
  // What a worker claimed and never reported (it failed), or could not read (this thread says why).
  return verdicts.map((v, i) => (v === undefined ? check(i) : v));
}

function runWorker(
  url: URL,
  next: Int32Array,
  files: readonly FileCheck[],
  needles: readonly string[],
  verdicts: Array<boolean | Error | undefined>,
): Promise<void> {
  return new Promise((resolve) => {
    let worker: Worker;
    try {
      worker = new Worker(url, { workerData: next });
    } catch {
      resolve();
      return;
    }
    worker.on('message', (report: number[]) => {
      for (let j = 0; j + 1 < report.length; j += 2) {
        const verdict = report[j + 1]!;
        // -1: unreadable there; left undefined, this thread reads it again and keeps the error.
        if (verdict >= 0) verdicts[report[j]!] = verdict === 1;
      }
    });
    worker.on('error', () => resolve());
    worker.on('exit', () => resolve());
    worker.postMessage({
      paths: files.map((f) => f.parts ?? [f.path]),
      titles: files.map((f) => f.titles),
      perLine: files.map((f) => f.perLine === true),
      needles: [...needles],
    });
  });
}
