/**
 * The scan's worker thread (scan-files.ts): claims files through the counter
 * it shares with the caller, reads each and reports whether it may hold the
 * needles, then ends. bin/run-entry.mjs bundles it next to the CLI bundle as
 * `txcript-scan-worker.mjs`; from the sources Node runs it as TypeScript.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { mayHoldAll, readParts } from './byte-filter.ts';

interface Job {
  /** Per file: the files read for it, checked as one. */
  paths: string[][];
  /** Per path: the titles (folded) of its sessions, which count as part of it. */
  titles: string[][];
  /** Per path: whether one line must hold every needle. */
  perLine: boolean[];
  needles: string[];
}

const port = parentPort;
if (port === null) throw new Error('scan-worker.ts runs as a worker thread (see scan-files.ts)');
const next = workerData as Int32Array;
const REPORT_EVERY = 64;

port.once('message', (job: Job) => {
  // [index, 1 may hold, 0 does not, -1 unreadable: the caller reads it again and says why]
  let report: number[] = [];
  for (;;) {
    const i = Atomics.add(next, 0, 1);
    if (i >= job.paths.length) break;
    let verdict: number;
    try {
      verdict = mayHoldAll(readParts(job.paths[i]!), job.needles, job.titles[i], job.perLine[i]) ? 1 : 0;
    } catch {
      verdict = -1;
    }
    report.push(i, verdict);
    if (report.length >= REPORT_EVERY * 2) {
      port.postMessage(report);
      report = [];
    }
  }
  port.postMessage(report);
});
