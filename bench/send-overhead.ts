/**
 * Per-send overhead of the host, in its durable write order (docs/runtime.md,
 * "Invariants"): validate the send_message input, encode it, append its
 * tool_use record to the JSONL, insert its ledger entry (one SQLite
 * transaction: the commit point), then append its tool_result record, on a
 * real temp data dir and a real SQLite file. Target: p99 < 2 ms.
 *
 *   npx tsx bench/send-overhead.ts [sends=10000]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  sendResultSuccess,
  sendId,
  toJsonlSendInput,
  toStoredMessage,
  validateSendMessage,
} from '@sendbox/protocol';
import { openLedgerForWrite } from '@sendbox/txcript';
import { JsonlFile, TranscriptWriter, noScrub } from '@sendbox/box';
import { runQueueWaitNs, SCHEDSTAT } from './cpu-wait.ts';

const SENDS = Number(process.argv[2] ?? 10_000);

// SENDBOX_BENCH_DIR=/dev/shm separates the CPU cost from the disk's fsync latency.
const dir = await mkdtemp(path.join(process.env.SENDBOX_BENCH_DIR ?? os.tmpdir(), 'sendbox-bench-send-'));
const ledger = openLedgerForWrite(path.join(dir, 'store.db'));
let emitted = 0;
const log = new JsonlFile(path.join(dir, 'bench.jsonl'));
const writer = new TranscriptWriter(
  log,
  ledger,
  () => noScrub,
  (entries) => {
    emitted += entries.length; // the host emits a HostEvent per entry here
  },
);

const samples = new Float64Array(SENDS);
const parts = {
  validate: new Float64Array(SENDS),
  jsonl: new Float64Array(SENDS),
  ledger: new Float64Array(SENDS),
};
const ms = (from: bigint, to: bigint) => Number(to - from) / 1e6;
const schedstat = SCHEDSTAT;
const waited = new Float64Array(SENDS);
for (let i = 0; i < SENDS; i++) {
  const input = {
    type: 'text',
    content: `Progress update ${i}: finished step ${i % 17} of the plan, moving on.`,
  };
  const waitBefore = runQueueWaitNs();
  const started = process.hrtime.bigint();
  const checked = validateSendMessage(input);
  if (!checked.ok) throw new Error(checked.message);
  const stored = toStoredMessage(checked.value);
  const validated = process.hrtime.bigint();
  const messageId = sendId(Math.floor(i / 100), i % 100);
  const now = Date.now();
  writer.appendRecords([
    {
      role: 'assistant',
      blocks: [
        {
          type: 'tool_use',
          name: 'send_message',
          input: { ...toJsonlSendInput(stored), toolCallId: `call_${i}` },
        },
      ],
    },
  ]);
  const appended = process.hrtime.bigint();
  writer.appendEntries([{ id: messageId, kind: 'send-message', message: stored, timestampMs: now }]);
  const committed = process.hrtime.bigint();
  writer.appendRecords([
    {
      role: 'tool',
      blocks: [{ type: 'tool_result', name: 'send_message', result: sendResultSuccess(messageId, now) }],
    },
  ]);
  const done = process.hrtime.bigint();
  samples[i] = ms(started, done);
  const waitAfter = runQueueWaitNs();
  waited[i] = waitBefore === undefined || waitAfter === undefined ? 0 : (waitAfter - waitBefore) / 1e6;
  parts.validate[i] = ms(started, validated);
  parts.jsonl[i] = ms(validated, appended) + ms(committed, done);
  parts.ledger[i] = ms(appended, committed);
}
log.close();
ledger.close();
await rm(dir, { recursive: true, force: true });
if (emitted !== SENDS) throw new Error(`expected ${SENDS} entries, saw ${emitted}`);

const sorted = [...samples].sort((a, b) => a - b);
const p99Of = (xs: Float64Array) => [...xs].sort((a, b) => a - b)[Math.floor(0.99 * xs.length)]!;
const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
console.log(
  `send overhead over ${SENDS} sends in ${path.dirname(dir)} (validate + encode + JSONL tool_use + ledger insert + JSONL tool_result)`,
);
console.log(`  p50  ${at(0.5).toFixed(3)} ms`);
console.log(`  p90  ${at(0.9).toFixed(3)} ms`);
console.log(`  p99  ${at(0.99).toFixed(3)} ms   (target < 2 ms: ${at(0.99) < 2 ? 'met' : 'NOT met'})`);
console.log(
  `  p99 by part: validate+encode ${p99Of(parts.validate).toFixed(3)} ms, JSONL appends ${p99Of(parts.jsonl).toFixed(3)} ms, ledger insert ${p99Of(parts.ledger).toFixed(3)} ms`,
);
console.log(`  max  ${sorted.at(-1)!.toFixed(3)} ms, mean ${mean.toFixed(3)} ms`);
// Slow sends come in bursts around SQLite's WAL checkpoints (every ~1000 WAL pages, with an fsync):
// their count next to the p99 shows whether the tail is the checkpoints or the send path itself.
const over = (xs: Float64Array, ms: number) => xs.reduce((n, x) => n + (x > ms ? 1 : 0), 0);
console.log(
  `  sends over 2 ms: ${over(samples, 2)} (ledger insert over 2 ms: ${over(parts.ledger, 2)}, JSONL append: ${over(parts.jsonl, 2)})`,
);
if (runQueueWaitNs() !== undefined) {
  const own = samples.map((sample, i) => Math.max(0, sample - waited[i]!));
  console.log(
    `  without time spent waiting for a CPU (${schedstat}): p99 ${p99Of(own).toFixed(3)} ms, ` +
      `sends over 2 ms: ${over(own, 2)}; sends that waited for a CPU: ${over(waited, 0)}`,
  );
}
console.log(
  `  (machine: ${os.cpus().length} cores, load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')})`,
);
