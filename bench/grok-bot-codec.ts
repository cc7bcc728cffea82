/**
 * Grok Bot codec throughput on a ~50 MB JSONL transcript.
 * Run: npx tsx bench/grok-bot-codec.ts [megabytes]
 * Targets: parse+render >= 100 MB/s, full round trip (parse -> toCommon ->
 * fromCommon -> render) >= 40 MB/s.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  decodeJsonlBytes,
  grokBotFromCommon,
  grokBotToCommon,
  parseGrokBotJsonl,
  renderGrokBotJsonl,
} from '../packages/txcript/src/harness/grok-bot/index.ts';
import { generateLargeJsonl } from '../packages/txcript/test/fixtures/grok-bot/generate.ts';

const megabytes = Number(process.argv[2] ?? 50);
const dir = await mkdtemp(join(tmpdir(), 'grok-bench-'));
let peakRss = process.memoryUsage().rss;
const sample = (): void => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
};
const timer = setInterval(sample, 5);

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Best wall time and best process CPU time (seconds) over `runs`; CPU time is less skewed by a busy machine. */
function best(runs: number, f: () => void): { wall: number; cpu: number } {
  let wall = Infinity;
  let cpu = Infinity;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const c0 = cpuMs();
    f();
    wall = Math.min(wall, performance.now() - t0);
    cpu = Math.min(cpu, cpuMs() - c0);
    sample();
  }
  return { wall: wall / 1000, cpu: cpu / 1000 };
}
const rate = (mb: number, t: { wall: number; cpu: number }): string =>
  `${(mb / t.wall).toFixed(0)} MB/s wall (${(t.wall * 1000).toFixed(0)} ms), ${(mb / t.cpu).toFixed(0)} MB/s per CPU-second`;

try {
  const path = join(dir, 'big.jsonl');
  await writeFile(path, generateLargeJsonl(megabytes * 1024 * 1024));
  const bytes = await readFile(path);
  const mb = bytes.length / (1024 * 1024);
  const { text } = decodeJsonlBytes(bytes, path);

  const parseRender = best(3, () => {
    const out = renderGrokBotJsonl(parseGrokBotJsonl(text, path).records);
    if (out.length !== text.length) throw new Error('parse+render is not byte-identical');
  });
  const roundTrip = best(3, () => {
    const records = parseGrokBotJsonl(text, path).records;
    const common = grokBotToCommon(records, { sessionId: 'bench' });
    const out = renderGrokBotJsonl(grokBotFromCommon(common));
    if (out.length === 0) throw new Error('empty output');
  });
  // The floor under any round trip on this machine and load: JSON.parse then JSON.stringify of every line.
  const jsonOnly = best(3, () => {
    const values: unknown[] = [];
    for (const line of text.split('\n')) if (line !== '') values.push(JSON.parse(line));
    let out = '';
    for (const v of values) out += JSON.stringify(v) + '\n';
    if (out.length === 0) throw new Error('empty output');
  });
  sample();
  const roundTripPeakRss = peakRss;
  // Where the round trip's time goes: each step alone, best of 3.
  const records = parseGrokBotJsonl(text, path).records;
  let common = grokBotToCommon(records, { sessionId: 'bench' });
  const messages = common.messages.length;
  const toCommon = best(3, () => {
    common = grokBotToCommon(records, { sessionId: 'bench' });
  });
  let native = grokBotFromCommon(common);
  const fromCommon = best(3, () => {
    native = grokBotFromCommon(common);
  });
  const render = best(3, () => {
    if (renderGrokBotJsonl(native).length === 0) throw new Error('empty output');
  });
  sample();
  clearInterval(timer);
  console.log(`input            ${mb.toFixed(1)} MB, ${records.length} lines, ${messages} Common messages`);
  console.log(`load average     ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} CPUs`);
  console.log(`parse+render     ${rate(mb, parseRender)}; target >= 100 MB/s`);
  console.log(`full round trip  ${rate(mb, roundTrip)}; target >= 40 MB/s`);
  const ms = (t: { wall: number }): string => `${(t.wall * 1000).toFixed(0)} ms`;
  console.log(
    `  steps alone: toCommon ${ms(toCommon)}, fromCommon ${ms(fromCommon)}, render of built records ${ms(render)}`,
  );
  console.log(`JSON parse+stringify of every line alone (reference) ${rate(mb, jsonOnly)}`);
  const mbOf = (bytes: number): string => `${(bytes / (1024 * 1024)).toFixed(0)} MB`;
  console.log(
    `peak RSS         ${mbOf(roundTripPeakRss)} through the round trips; ${mbOf(peakRss)} with the steps alone`,
  );
} finally {
  clearInterval(timer);
  await rm(dir, { recursive: true, force: true });
}
