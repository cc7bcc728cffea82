/**
 * How long `txcript list` takes, end to end, on a box of 2,000 Grok Bot
 * agents: 1,000 with a JSONL transcript (and a profile), 1,000 with a
 * profile and a store.db ledger only. Runs the real CLI as a subprocess,
 * five times per case, and prints the medians. Target: under 1 s.
 *
 * Cases: `--help` (start-up alone); `list` cold (the summary cache removed
 * before each run, so every source is read and the cache written);
 * `list --no-cache` (every source read, nothing written); `list` warm (the
 * cache filled by an untimed run once every file is older than the racy window).
 *
 *   npx tsx bench/cli-list.ts [--agents N] [--runs N]
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RACY_WINDOW_MS } from '../packages/txcript/src/harness/summary-cache-file.ts';
import { generateBox } from '../packages/txcript/test/fixtures/grok-bot/generate.ts';

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  const value = at < 0 ? undefined : Number(process.argv[at + 1]);
  return value !== undefined && Number.isInteger(value) && value > 0 ? value : fallback;
}

const agents = flag('--agents', 2_000);
const runs = flag('--runs', 5);
const bin = fileURLToPath(new URL('../packages/txcript/bin/txcript.mjs', import.meta.url));
const home = mkdtempSync(join(tmpdir(), 'txcript-bench-'));
const cacheDir = join(home, '.cache', 'txcript');

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

try {
  const built = performance.now();
  generateBox(home, { agents, withJsonl: Math.floor(agents / 2) });
  const boxWritten = Date.now();
  console.log(
    `box: ${agents} agents (${Math.floor(agents / 2)} with JSONL) in ${Math.round(performance.now() - built)} ms`,
  );

  const env = { ...process.env, HOME: home, NO_COLOR: '1' };
  // GNU time adds the child's CPU time (user + sys), which a busy machine inflates far less than wall time.
  const gnuTime = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;
  const time = (args: string[]): { ms: number; cpuMs?: number; rows: number } => {
    const [command, argv] =
      gnuTime === undefined
        ? [process.execPath, [bin, ...args]]
        : [gnuTime, ['-f', 'TXCRIPT_CPU %U %S', process.execPath, bin, ...args]];
    const t0 = performance.now();
    const r = spawnSync(command, argv, { env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    const ms = performance.now() - t0;
    if (r.status !== 0) throw new Error(`txcript ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
    const cpu = /TXCRIPT_CPU ([\d.]+) ([\d.]+)/.exec(r.stderr);
    const rows = args.includes('--json')
      ? (JSON.parse(r.stdout) as unknown[]).length
      : r.stdout.split('\n').length - 2;
    return { ms, rows, ...(cpu !== null && { cpuMs: (Number(cpu[1]) + Number(cpu[2])) * 1000 }) };
  };

  // One untimed run warms tsx's transform cache and the page cache, as on a machine in use.
  const warm = time(['list', '--json', '--no-cache']);
  if (warm.rows !== agents) throw new Error(`expected ${agents} sessions, listed ${warm.rows}`);

  const removeCache = (): void => rmSync(cacheDir, { recursive: true, force: true });
  const measure = (args: string[], name = '', before = (): void => {}): number => {
    const results = Array.from({ length: runs }, () => {
      before();
      return time(args);
    });
    const wall = results.map((r) => r.ms);
    const cpu = results.flatMap((r) => (r.cpuMs === undefined ? [] : [r.cpuMs]));
    const label = `txcript ${args.join(' ')}${name === '' ? '' : ` (${name})`}`.padEnd(30);
    const cpuText = cpu.length === 0 ? '' : `, cpu median ${Math.round(median(cpu))} ms`;
    const runsText = wall.map((x) => Math.round(x)).join(', ');
    console.log(`${label} wall median ${Math.round(median(wall))} ms${cpuText} (wall runs: ${runsText})`);
    return median(wall);
  };
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  console.log(`load average ${load} on ${availableParallelism()} cores`);
  measure(['--help']);
  const cold = measure(['list'], 'cold', removeCache);
  measure(['list', '--no-cache']);

  // Files changed within the racy window are not cached: let the box age past it, then fill the cache.
  const age = Date.now() - boxWritten;
  if (age < RACY_WINDOW_MS + 100) await new Promise((r) => setTimeout(r, RACY_WINDOW_MS + 100 - age));
  removeCache();
  time(['list']);
  if (!existsSync(cacheDir) || readdirSync(cacheDir).length !== 1) throw new Error('the list wrote no cache');
  const warmList = measure(['list'], 'warm');
  measure(['list', '--json'], 'warm');
  const verdict = (ms: number): string => (ms < 1000 ? 'met' : 'NOT met');
  console.log(`target: list under 1000 ms wall — cold ${verdict(cold)}, warm ${verdict(warmList)}`);
} finally {
  rmSync(home, { recursive: true, force: true });
}
