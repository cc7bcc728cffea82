/**
 * Host overhead of the work tools, each called as the turn calls it (the tool's `run` with a
 * ToolContext; no model: a warm model stub adds nothing to these). Figures are p50 and p99:
 * - `edit` of a 1 MB file (one replacement, read + atomic write with fsync): target < 20 ms;
 * - `grep` over 10,000 files / 100 MB (confined ripgrep, the sandbox as on a box): target < 1.5 s;
 * - `web_fetch` of a 1 MB HTML page from loopback to text (Readability + turndown): target < 300 ms.
 *
 * Each figure is also given without the time this process's main thread waited for a CPU
 * (cpu-wait.ts): on a loaded machine that separates the tool's own cost from its neighbours'
 * (grep's ripgrep runs in its own processes, whose waits are not subtracted).
 *
 *   npx tsx bench/work-tools.ts [editRounds=200] [grepRounds=15] [fetchRounds=40]
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runQueueWaitNs } from './cpu-wait.ts';
import { detectConfinement, editTool, grepTool, noScrub, webFetchTool, type ToolContext } from '@sendbox/box';
import { writeInSandbox } from '../packages/box/src/sandbox/paths.ts';

const arg = (i: number, fallback: number) => Number(process.argv[2 + i] ?? fallback);
const [EDIT_ROUNDS, GREP_ROUNDS, FETCH_ROUNDS] = [arg(0, 200), arg(1, 15), arg(2, 40)];
const root = await mkdtemp(path.join(process.env.SENDBOX_BENCH_DIR ?? os.tmpdir(), 'sendbox-bench-tools-'));
const sandbox = path.join(root, 'sandbox');
await mkdir(sandbox);
const confinement = await detectConfinement();
await confinement.prepare(sandbox);
const ctx: ToolContext = {
  sandboxDir: sandbox,
  env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  scrub: noScrub,
  todos: [],
  now: Date.now,
};

interface Timed {
  wall: number[];
  /** The same runs less the time the main thread waited for a CPU (a loaded machine's share). */
  own: number[] | undefined;
}

function percentiles(times: Timed): string {
  const fmt = (ms: number[]) => {
    const sorted = [...ms].sort((a, b) => a - b);
    const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
    return `p50 ${at(50).toFixed(1)} ms, p99 ${at(99).toFixed(1)} ms`;
  };
  const own = times.own ? `; without waits for a CPU: ${fmt(times.own)}` : '';
  return `${fmt(times.wall)} (${times.wall.length} runs)${own}`;
}

async function time(rounds: number, work: (i: number) => Promise<void>): Promise<Timed> {
  await work(-1); // warm
  const wall: number[] = [];
  const own: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const waitBefore = runQueueWaitNs();
    const started = performance.now();
    await work(i);
    const ms = performance.now() - started;
    const waitAfter = runQueueWaitNs();
    wall.push(ms);
    if (waitBefore !== undefined && waitAfter !== undefined) own.push(ms - (waitAfter - waitBefore) / 1e6);
  }
  return { wall, own: own.length === wall.length ? own : undefined };
}

function expectSuccess(what: string, envelope: object): void {
  if (!('success' in envelope)) throw new Error(`${what} failed: ${JSON.stringify(envelope).slice(0, 300)}`);
}

// edit: a 1 MB source file; each round swaps one unique marker for the next.
const line = 'const value = computeSomething(alpha, beta, gamma); // a line of ordinary code\n';
await writeFile(
  path.join(sandbox, 'big.ts'),
  `${line.repeat(Math.floor((1024 * 1024) / line.length / 2))}MARK_0\n${line.repeat(Math.floor((1024 * 1024) / line.length / 2))}`,
);
const edit = await time(EDIT_ROUNDS, async (i) => {
  const from = i < 0 ? 0 : i + 1;
  const out = await editTool.run(
    { path: 'big.ts', old_string: `MARK_${from}\n`, new_string: `MARK_${from + 1}\n` },
    ctx,
  );
  expectSuccess('edit', out.envelope);
});
console.log(`edit, 1 MB file:              ${percentiles(edit)}`);
// The floor under edit: the same 1 MB written by the writer edit uses (writeInSandbox: a temp file,
// fsync, rename), with no read, match or diff. What edit adds is the difference.
const bytes = Buffer.alloc(1024 * 1024, 'x');
const floor = await time(EDIT_ROUNDS, async () => {
  await writeInSandbox(sandbox, 'floor.bin', bytes);
});
console.log(`  floor, the write alone: ${percentiles(floor)}`);

// grep: 10,000 files of 10 KB in 100 folders; a pattern in one line of every 50th file.
const filler = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor\n'.repeat(130);
for (let d = 0; d < 100; d++) {
  const dir = path.join(sandbox, 'tree', `d${d}`);
  await mkdir(dir, { recursive: true });
  await Promise.all(
    Array.from({ length: 100 }, (_, f) =>
      writeFile(
        path.join(dir, `f${f}.txt`),
        (d * 100 + f) % 50 === 0 ? `${filler}needle_${d}_${f}\n` : filler,
      ),
    ),
  );
}
await confinement.prepare(sandbox);
const grep = grepTool({ confinement });
const grepTimes = await time(GREP_ROUNDS, async () => {
  const out = await grep.run({ pattern: 'needle_\\d+_\\d+', path: 'tree' }, ctx);
  expectSuccess('grep', out.envelope);
});
console.log(`grep, 10,000 files / 100 MB:  ${percentiles(grepTimes)} [${confinement.status.mode}]`);

// web_fetch: a 1 MB article page served on loopback.
const para =
  '<p>Ferns like their soil moist but never soggy; water when the top centimetre is dry, and mist the fronds in dry rooms. <a href="/more">More</a></p>\n';
const page = `<!doctype html><html><head><title>Bench page</title></head><body><nav>${'<a href="/x">nav</a>'.repeat(200)}</nav><article><h1>Ferns</h1>${para.repeat(Math.floor((1024 * 1024) / para.length))}</article></body></html>`;
const server = createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.end(page);
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/page`;
const fetchTool = webFetchTool({ fetch: (u, init) => fetch(u, init) });
const fetchTimes = await time(FETCH_ROUNDS, async () => {
  const out = await fetchTool.run({ url }, ctx);
  expectSuccess('web_fetch', out.envelope);
});
console.log(`web_fetch, 1 MB HTML to text: ${percentiles(fetchTimes)}`);

server.close();
await rm(root, { recursive: true, force: true });
console.log(
  `load: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')} (1/5/15 min), ${os.cpus().length} cores`,
);
