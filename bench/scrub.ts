/**
 * The scrubber's cost on large outputs (secrets/scrub.ts): `text` on 10 MB of ordinary shell
 * output and on 7 MB of JSON full of escapes, and the file scanner on 10 MB of binary bytes,
 * with 8 secrets set. Prints the median of 5 runs each.
 *
 *   npx tsx bench/scrub.ts
 */
import os from 'node:os';
import { scrubberFor } from '@sendbox/box';

const secrets = new Map<string, string>();
for (let i = 0; i < 8; i++) secrets.set(`KEY_${i}`, `sk-${i}-${'abcdefghij'.repeat(3)}-${i}`);
const scrub = scrubberFor(secrets);

const line = 'total 48 drwxr-xr-x 2 user user 4096 Jan  1 12:00 some-file-name.txt and some more words\n';
const shell = line.repeat(Math.ceil(10_000_000 / line.length));
const json = JSON.stringify(
  Array.from({ length: 120_000 }, (_, i) => ({ path: `/home/u/f${i}.txt`, note: 'café %20 \\ "q"' })),
).replace(/\//g, '\\/');
const binary = Buffer.alloc(10_000_000);
for (let i = 0; i < binary.length; i++) binary[i] = (i * 2654435761) >>> 24;

function median(run: () => void): number {
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    run();
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[2]!;
}

const mb = (n: number) => (n / 1e6).toFixed(1);
console.log(
  `load average ${os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')}`,
);
console.log(`text, shell output ${mb(shell.length)} MB: ${median(() => scrub.text(shell)).toFixed(0)} ms`);
console.log(`text, escaped JSON ${mb(json.length)} MB: ${median(() => scrub.text(json)).toFixed(0)} ms`);
console.log(
  `scanner, binary ${mb(binary.length)} MB: ${median(() => scrub.scanner().push(binary)).toFixed(0)} ms`,
);
