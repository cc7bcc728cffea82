/**
 * Added cost of confinement per `shell` call: the shell tool running `true`
 * in bubblewrap (namespaces, rlimits, the keyring filter, the supervisor as
 * PID 1, the agent's own uid when root, and the disk quota's check around the
 * command, as the box runs it; docs/sandbox.md) against the same tool spawning
 * bash bare on the host (--unsafe-host-tools).
 * Calls alternate so both see the same machine load. Target: ≤ 30 ms added at p50.
 *
 *   npx tsx bench/shell-confinement.ts [calls=300]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { detectConfinement, noScrub, SandboxDisks, shellTool, type ToolContext } from '@sendbox/box';

const CALLS = Number(process.argv[2] ?? 300);

const dir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-bench-shell-'));
const confined = await detectConfinement();
if (!confined.status.confined) throw new Error(`bubblewrap is not usable here: ${confined.status.detail}`);
const bare = await detectConfinement({ bwrap: '/nonexistent/bwrap', unsafeHostTools: true });
await confined.prepare(dir);
const ctx: ToolContext = {
  sandboxDir: dir,
  env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: dir },
  scrub: noScrub,
  todos: [],
  now: Date.now,
};
const tools = {
  bare: shellTool({ confinement: bare }),
  confined: shellTool({ confinement: confined, disk: new SandboxDisks() }),
};
const samples = { bare: [] as number[], confined: [] as number[] };

for (let i = 0; i < CALLS + 10; i++) {
  for (const kind of ['bare', 'confined'] as const) {
    const started = performance.now();
    const out = await tools[kind].run({ command: 'true' }, ctx);
    const ms = performance.now() - started;
    if (!('success' in out.envelope)) throw new Error(`${kind}: ${JSON.stringify(out.envelope)}`);
    if (i >= 10) samples[kind].push(ms); // the first calls warm up caches
  }
}
await rm(dir, { recursive: true, force: true });
await confined.release(dir); // its uid, recorded machine-wide when root
confined.close();

const pct = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
const row = (name: string, values: number[]) =>
  `${name.padEnd(10)} p50 ${pct(values, 50).toFixed(1).padStart(6)} ms   p99 ${pct(values, 99).toFixed(1).padStart(6)} ms`;
console.log(`shell \`true\`, ${CALLS} calls each (${confined.status.detail})`);
console.log(row('bare', samples.bare));
console.log(row('confined', samples.confined));
const added50 = pct(samples.confined, 50) - pct(samples.bare, 50);
const added99 = pct(samples.confined, 99) - pct(samples.bare, 99);
console.log(
  `added      p50 ${added50.toFixed(1).padStart(6)} ms   p99 ${added99.toFixed(1).padStart(6)} ms   (target p50 ≤ 30 ms)`,
);
