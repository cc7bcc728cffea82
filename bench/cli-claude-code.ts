/**
 * Whole-command figures of the txcript CLI over Claude Code sessions: the
 * cases of issue 13, each timed as a subprocess with GNU time (user + system
 * CPU, peak RSS), five runs, medians. Beside them, the JSON floor: the CPU
 * time of `JSON.parse` over every line of the same bytes in this process,
 * which no reader that decodes each record can beat.
 *
 * Cases: `node -e 0` (Node's own floor); `--help`; `list --from claude_code
 * --no-cache` over N sessions; the same warm (cache filled); plain `list` (every
 * harness) over those sessions and a box of A Grok Bot agents (half with a
 * JSONL transcript, half with a ledger only), without and with the caches;
 * `export` of a ~50 MB session; `convert` of it to Codex, and of that Codex
 * rollout to Simple; `continue <id>
 * --with codex --out DIR` (Claude Code → Codex through the store, the form
 * both CLIs share). `--bin FILE` times another build of the CLI (for example a
 * copy of an older bundle) on the same corpus.
 *
 * `--against EXE` also times another txcript executable (the public Rust
 * txcript, built separately; nothing of it is in this repository) on the same
 * corpus, case by case, and prints the CPU-time ratio ours/theirs. Its flags
 * differ in two places: it lists without a cache unless given `--cache PATH`,
 * and it has no `convert` (the `continue` case stands for it).
 *
 *   npx tsx bench/cli-claude-code.ts [--sessions N] [--agents A] [--mb N] [--runs N] [--bin FILE]
 *     [--against EXE]
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
import { generateBox } from '../packages/txcript/test/fixtures/grok-bot/generate.ts';

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
const agents = flag('--agents', 500);
const bigMb = flag('--mb', 50);
const runs = flag('--runs', 5);
const bin =
  stringFlag('--bin') ?? fileURLToPath(new URL('../packages/txcript/bin/txcript.mjs', import.meta.url));
const against = stringFlag('--against');
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

/** One timed run of the CLI with `args`, or of `command` itself (`node -e 0`). */
function once(args: string[], command?: string[], extraEnv: NodeJS.ProcessEnv = {}): Run {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    NO_COLOR: '1',
    TXCRIPT_CLAUDE_CODE_ROOT: root,
  };
  // An undefined value removes the variable.
  for (const [k, v] of Object.entries(extraEnv)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  const argv = command ?? [process.execPath, bin, ...args];
  const t0 = performance.now();
  const r = spawnSync(gnuTime, ['-f', 'BENCH_TIME %U %S %M', ...argv], {
    env,
    encoding: 'utf8',
    maxBuffer: 1024 * 1024 * 1024,
  });
  const wallMs = performance.now() - t0;
  const m = /BENCH_TIME ([\d.]+) ([\d.]+) (\d+)/.exec(r.stderr);
  if (r.status !== 0 || m === null)
    throw new Error(`${argv.slice(1).join(' ')} exited ${r.status}: ${r.stderr}`);
  const userMs = Number(m[1]) * 1000;
  const sysMs = Number(m[2]) * 1000;
  return { cpuMs: userMs + sysMs, userMs, sysMs, peakMb: Number(m[3]) / 1024, wallMs };
}

function measure(
  label: string,
  args: string[],
  before = (): void => {},
  command?: string[],
  extraEnv?: NodeJS.ProcessEnv,
): Run {
  const results = Array.from({ length: runs }, () => {
    before();
    return once(args, command, extraEnv);
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
  generateBox(home, { agents, withJsonl: Math.floor(agents / 2) });
  const written = Date.now();
  console.log(
    `corpus: ${sessions} Claude Code sessions, ${(bytes / 1e6).toFixed(0)} MB, and ${agents} Grok Bot agents, in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
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

  const theirCache = join(home, 'their-cache.db');
  const outDir = join(home, 'continued');
  const freshOut = (): void => rmSync(outDir, { recursive: true, force: true });
  const ratios: string[] = [];
  /** Ours with `args`; then, given `--against`, the other CLI with `theirs` (null: it has no such command). */
  const compare = (label: string, args: string[], theirs: string[] | null, before?: () => void): void => {
    const mine = measure(label, args, before);
    if (against === undefined || theirs === null) return;
    const other = measure(`  against: ${label}`, [], before, [against, ...theirs]);
    ratios.push(
      `${label.padEnd(34)} ${(mine.cpuMs / other.cpuMs).toFixed(2).padStart(5)}  (cpu ${mine.cpuMs.toFixed(0)} / ${other.cpuMs.toFixed(0)} ms; peak ${mine.peakMb.toFixed(1)} / ${other.peakMb.toFixed(1)} MB)`,
    );
  };
  const claudeList = ['list', '--from', 'claude_code'];

  once(['list', '--no-cache']); // page cache and bundle warm
  const nodeFloor = [process.execPath, '-e', '0'];
  measure('node -e 0', [], undefined, nodeFloor);
  if (process.env.NODE_EXTRA_CA_CERTS !== undefined) {
    // Node loads these certificates at every start, before any code runs: part of every figure here.
    measure('node -e 0 (NODE_EXTRA_CA_CERTS unset)', [], undefined, nodeFloor, {
      NODE_EXTRA_CA_CERTS: undefined,
    });
  }
  compare('--help', ['--help'], ['--help']);
  compare('list --no-cache', [...claudeList, '--no-cache'], claudeList);
  measure('list, every harness, --no-cache', ['list', '--no-cache']);
  // Both caches filled, outside the racy window of the files' mtimes.
  const age = Date.now() - written;
  if (age < RACY_WINDOW_MS + 100) await new Promise((r) => setTimeout(r, RACY_WINDOW_MS + 100 - age));
  rmSync(cacheDir, { recursive: true, force: true });
  once(['list']);
  if (against !== undefined) once([], [against, ...claudeList, '--cache', theirCache]);
  compare('list (warm cache)', claudeList, [...claudeList, '--cache', theirCache]);
  measure('list, every harness (warm)', ['list']);
  compare(
    `convert ${bigMb} MB claude_code -> codex`,
    ['convert', bigFile, '--from', 'claude_code', '--to', 'codex'],
    null,
  );
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
  // export and continue look the session up in the store: put the big file in a project folder of its own.
  const bigProject = join(root, '-home-dev-big');
  mkdirSync(bigProject);
  writeFileSync(join(bigProject, `${bigId}.jsonl`), bigText);
  const continueArgs = ['continue', bigId, '--from', 'claude_code', '--with', 'codex', '--out', outDir];
  compare(`continue ${bigMb} MB --with codex --out`, continueArgs, continueArgs, freshOut);
  const exportArgs = ['export', bigId, '--from', 'claude_code'];
  compare(`export ${bigMb} MB session`, exportArgs, exportArgs);

  if (ratios.length > 0) {
    console.log(`\nCPU-time ratio ours / ${against}:`);
    for (const line of ratios) console.log(line);
  }
} finally {
  rmSync(home, { recursive: true, force: true });
}
