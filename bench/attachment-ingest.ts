/**
 * Attachment ingest throughput: a 200 MB file streamed into the per-agent
 * content-addressed store (SHA-256 and copy in one pass, atomic rename), then
 * the same file again (hash already stored: the temp copy is dropped, no
 * second file). Target: >= 500 MB/s for the first ingest.
 *
 *   npx tsx bench/attachment-ingest.ts [megabytes=200]
 *   SENDBOX_BENCH_DIR=/dev/shm npx tsx bench/attachment-ingest.ts   (memory, no disk)
 */
import { randomFillSync } from 'node:crypto';
import { mkdtemp, open, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AttachmentStore } from '@sendbox/box';

const MB = Number(process.argv[2] ?? 200);
const bytes = MB * 1024 * 1024;
const dir = await mkdtemp(path.join(process.env.SENDBOX_BENCH_DIR ?? os.tmpdir(), 'sendbox-bench-ingest-'));
const source = path.join(dir, 'big.bin');
const chunk = Buffer.alloc(8 * 1024 * 1024);
const out = await open(source, 'w');
for (let written = 0; written < bytes; written += chunk.length) {
  randomFillSync(chunk);
  await out.write(chunk, 0, Math.min(chunk.length, bytes - written));
}
await out.sync();
await out.close();

const store = new AttachmentStore(path.join(dir, 'attachments'), bytes * 2);
const time = async (label: string) => {
  const started = process.hrtime.bigint();
  const file = await store.ingestFile(source);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const rate = MB / seconds;
  console.log(
    `  ${label.padEnd(28)} ${(seconds * 1000).toFixed(0).padStart(6)} ms  ${rate.toFixed(0).padStart(6)} MB/s  created=${file.created}`,
  );
  return rate;
};
console.log(`attachment ingest of a ${MB} MB file in ${path.dirname(dir)}`);
const first = await time('first ingest (new hash)');
await time('again (hash already stored)');
const stored = await readdir(path.join(dir, 'attachments'));
console.log(
  `  files in the store: ${stored.length}; target >= 500 MB/s: ${first >= 500 ? 'met' : 'NOT met'}`,
);
await rm(dir, { recursive: true, force: true });
console.log(
  `  (machine: ${os.cpus().length} cores, load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')})`,
);
