/**
 * Whole-command figures of the txcript CLI over Claude Code sessions: the
 * cases of issue 13, each timed as a subprocess with GNU time (user + system
 * CPU, peak RSS), five runs, medians. Beside them, the JSON floor: the CPU
 * time of `JSON.parse` over every line of the same bytes in this process,
 * which no reader that decodes each record can beat.
 *
 * Cases: `--help`; `list --from claude_code --no-cache` over N sessions;
 * the same warm (cache filled); `export` of a ~50 MB session; `convert` of
 * it to Codex, and of that Codex rollout to Simple. `--bin FILE` times another build of the CLI (for example a
 * copy of an older bundle) on the same corpus.
 *
 *   npx tsx bench/cli-claude-code.ts [--sessions N] [--mb N] [--runs N] [--bin FILE]
 */
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RACY_WINDOW_MS } from '../packages/txcript/src/harness/summary-cache-file.ts';
import {
  claudeSessionText,
  generateClaudeProjects,
} from '../packages/txcript/test/fixtures/claude-code/generate.ts';

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(name);
  const value = at < 0 ? undefined : Number(process.argv[at + 1]);
  return value !== undefined && Number.isInteger(value) && value > 0 ? value : fallback;
}
function stringFlag(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at < 0 ? undefined : process.argv[at + 1];
}

const sessions = flag('--sessions', 2_000);
const bigMb = flag('--mb', 50);
const runs = flag('--runs', 5);
const bin =
  stringFlag('--bin') ?? fileURLToPath(new URL('../packages/txcript/bin/txcript.mjs', import.meta.url));
const gnuTime = '/usr/bin/time';
if (!existsSync(gnuTime)) throw new Error('this benchmark needs GNU time at /usr/bin/time');

const home = mkdtempSync(join(tmpdir(), 'txcript-cc-bench-'));
const root = join(home, '.claude', 'projects');
const cacheDir = join(home, '.cache', 'txcript');
const median = (values: number[]): number => {
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

interface Run {
  cpuMs: number;
  userMs: number;
  sysMs: number;
  peakMb: number;
  wallMs: number;
}

function once(args: string[]): Run {
  const env = { ...process.env, HOME: home, NO_COLOR: '1', TXCRIPT_CLAUDE_CODE_ROOT: root };
  const t0 = performance.now();
  const r = spawnSync(gnuTime, ['-f', 'BENCH_TIME %U %S %M', process.execPath, bin, ...args], {
    env,
    encoding: 'utf8',
    maxBuffer: 1024 * 1024 * 1024,
  });
  const wallMs = performance.now() - t0;
  const m = /BENCH_TIME ([\d.]+) ([\d.]+) (\d+)/.exec(r.stderr);
  if (r.status !== 0 || m === null)
    throw new Error(`txcript ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  const userMs = Number(m[1]) * 1000;
  const sysMs = Number(m[2]) * 1000;
  return { cpuMs: userMs + sysMs, userMs, sysMs, peakMb: Number(m[3]) / 1024, wallMs };
}

function measure(label: string, args: string[], before = (): void => {}): Run {
  const results = Array.from({ length: runs }, () => {
    before();
    return once(args);
  });
  const med = (k: keyof Run): number => median(results.map((r) => r[k]));
  const row: Run = {
    cpuMs: med('cpuMs'),
    userMs: med('userMs'),
    sysMs: med('sysMs'),
    peakMb: med('peakMb'),
    wallMs: med('wallMs'),
  };
  console.log(
    `${label.padEnd(34)} cpu ${row.cpuMs.toFixed(0).padStart(6)} ms (user ${row.userMs.toFixed(0)}, sys ${row.sysMs.toFixed(0)})  wall ${row.wallMs.toFixed(0).padStart(6)} ms  peak ${row.peakMb.toFixed(1)} MB`,
  );
  return row;
}

/** CPU ms of JSON.parse over every line of the files: the floor for a reader that decodes records. */
function jsonFloor(files: string[]): number {
  const texts = files.map((f) => readFileSync(f, 'utf8'));
  const cpu0 = process.cpuUsage();
  for (const text of texts) {
    for (const line of text.split('\n')) if (line !== '') JSON.parse(line);
  }
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / 1000;
}

try {
  const t0 = performance.now();
  const bytes = generateClaudeProjects(root, { sessions });
  const written = Date.now();
  console.log(
    `corpus: ${sessions} Claude Code sessions, ${(bytes / 1e6).toFixed(0)} MB, in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  const bigDir = join(home, 'big');
  mkdirSync(bigDir);
  const bigId = '5a0c1e9b-7f3d-4e21-9c6a-2b8d0f4e6a13';
  const bigText = claudeSessionText({
    sessionId: bigId,
    cwd: '/home/dev/big',
    turns: Math.round((bigMb * 1e6) / 11_300),
    resultLines: 60,
    seed: 7,
  });
  const bigFile = join(bigDir, `${bigId}.jsonl`);
  writeFileSync(bigFile, bigText);
  console.log(`big session: ${(Buffer.byteLength(bigText) / 1e6).toFixed(1)} MB`);
  console.log(`load average ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} cores; ${bin}`);

  const files = readdirSync(root).flatMap((p) => readdirSync(join(root, p)).map((f) => join(root, p, f)));
  console.log(
    `JSON floor: JSON.parse of every line: corpus ${jsonFloor(files).toFixed(0)} ms, big session ${jsonFloor([bigFile]).toFixed(0)} ms (cpu, in-process)`,
  );

  once(['list', '--from', 'claude_code', '--no-cache']); // page cache and bundle warm
  measure('--help', ['--help']);
  measure('list --no-cache', ['list', '--from', 'claude_code', '--no-cache']);
  const age = Date.now() - written;
  if (age < RACY_WINDOW_MS + 100) await new Promise((r) => setTimeout(r, RACY_WINDOW_MS + 100 - age));
  rmSync(cacheDir, { recursive: true, force: true });
  once(['list', '--from', 'claude_code']);
  measure('list (warm cache)', ['list', '--from', 'claude_code']);
  measure(`convert ${bigMb} MB claude_code -> codex`, [
    'convert',
    bigFile,
    '--from',
    'claude_code',
    '--to',
    'codex',
  ]);
  // The same session as Codex writes it, read back (Codex is read line by line too).
  const rollout = join(bigDir, 'rollout.jsonl');
  const env = { ...process.env, HOME: home, NO_COLOR: '1', TXCRIPT_CLAUDE_CODE_ROOT: root };
  const asCodex = spawnSync(
    process.execPath,
    [bin, 'convert', bigFile, '--from', 'claude_code', '--to', 'codex'],
    {
      env,
      encoding: 'utf8',
      maxBuffer: 1024 * 1024 * 1024,
    },
  );
  if (asCodex.status !== 0) throw new Error(`txcript convert exited ${asCodex.status}: ${asCodex.stderr}`);
  writeFileSync(rollout, asCodex.stdout);
  measure(`convert it back codex -> simple`, ['convert', rollout, '--from', 'codex', '--to', 'simple']);
  // export looks the session up in the store: put the big file in a project folder of its own.
  const bigProject = join(root, '-home-dev-big');
  mkdirSync(bigProject);
  writeFileSync(join(bigProject, `${bigId}.jsonl`), bigText);
  measure(`export ${bigMb} MB session`, ['export', bigId, '--from', 'claude_code']);
} finally {
  rmSync(home, { recursive: true, force: true });
}
