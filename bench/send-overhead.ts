/**
 * Per-send overhead of the host: validate the send_message input, encode it,
 * append its tool_use and tool_result records to the JSONL and insert its
 * ledger entry (one SQLite transaction),
 * on a real temp data dir and a real SQLite file. Target: p99 < 2 ms.
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
import { TranscriptWriter, noScrub } from '@sendbox/box';

const SENDS = Number(process.argv[2] ?? 10_000);

// SENDBOX_BENCH_DIR=/dev/shm separates the CPU cost from the disk's fsync latency.
const dir = await mkdtemp(path.join(process.env.SENDBOX_BENCH_DIR ?? os.tmpdir(), 'sendbox-bench-send-'));
const ledger = openLedgerForWrite(path.join(dir, 'store.db'));
let emitted = 0;
const writer = new TranscriptWriter(
  path.join(dir, 'bench.jsonl'),
  ledger,
  () => noScrub,
  (entries) => {
    emitted += entries.length; // the host emits a HostEvent per entry here
  },
);

const samples = new Float64Array(SENDS);
for (let i = 0; i < SENDS; i++) {
  const input = {
    type: 'text',
    content: `Progress update ${i}: finished step ${i % 17} of the plan, moving on.`,
  };
  const started = process.hrtime.bigint();
  const checked = validateSendMessage(input);
  if (!checked.ok) throw new Error(checked.message);
  const stored = toStoredMessage(checked.value);
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
    {
      role: 'tool',
      blocks: [{ type: 'tool_result', name: 'send_message', result: sendResultSuccess(messageId, now) }],
    },
  ]);
  writer.appendEntries([{ id: messageId, kind: 'send-message', message: stored, timestampMs: now }]);
  samples[i] = Number(process.hrtime.bigint() - started) / 1e6;
}
writer.close();
ledger.close();
await rm(dir, { recursive: true, force: true });
if (emitted !== SENDS) throw new Error(`expected ${SENDS} entries, saw ${emitted}`);

const sorted = [...samples].sort((a, b) => a - b);
const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const mean = sorted.reduce((a, b) => a + b, 0) / sorted.length;
console.log(
  `send overhead over ${SENDS} sends in ${path.dirname(dir)} (validate + encode + JSONL append + ledger insert)`,
);
console.log(`  p50  ${at(0.5).toFixed(3)} ms`);
console.log(`  p90  ${at(0.9).toFixed(3)} ms`);
console.log(`  p99  ${at(0.99).toFixed(3)} ms   (target < 2 ms: ${at(0.99) < 2 ? 'met' : 'NOT met'})`);
console.log(`  max  ${sorted.at(-1)!.toFixed(3)} ms, mean ${mean.toFixed(3)} ms`);
console.log(
  `  (machine: ${os.cpus().length} cores, load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')})`,
);
