/**
 * The scan's read worker (scan-reads.ts): claims sessions through the counter
 * it shares with the caller, reads each as `view` reads it and checks its
 * rows against the query, reports each read, then ends. bin/run-entry.mjs
 * bundles it next to the CLI bundle as `txcript-read-worker.mjs`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadHarness } from '../harness/catalog.ts';
import type { ReadJob, ReadReport } from './scan-reads.ts';
import { readForScan } from './session-read.ts';

const port = parentPort;
if (port === null) throw new Error('read-worker.ts runs as a worker thread (see scan-reads.ts)');
const next = workerData as Int32Array;

port.once('message', (job: ReadJob) => {
  void (async () => {
    for (;;) {
      const i = Atomics.add(next, 0, 1);
      if (i >= job.sessions.length) break;
      const { harness, summary } = job.sessions[i]!;
      let report: ReadReport;
      try {
        const found = { harness: await loadHarness(harness), summary };
        report = [[i, await readForScan(job.env, found, job.query, job.phrases)]];
      } catch {
        report = [[i, null]];
      }
      port.postMessage(report);
    }
    port.close();
  })();
});
