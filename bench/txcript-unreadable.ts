/**
 * Issue 24 item 12, whole commands as subprocesses timed with GNU time (CPU
 * user + system, wall, peak RSS): `list` with a 2 GB sparse file present
 * (no newline in it; not a session), first and second run; `export` of a
 * Claude Code session with one line of `--line-mb` MB inside (skipped over
 * the cap); `list --no-cache` and `export` of a session of `--records` tiny
 * records (streamed: alone with `--from`, also with a 32 MB heap; and after a
 * listing without it). Prints the load average at the start and the end.
 *
 *   npx tsx bench/txcript-unreadable.ts [--records N] [--line-mb N]
 */
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const flag = (name: string, fallback: number): number => {
  const at = process.argv.indexOf(name);
  const v = at < 0 ? NaN : Number(process.argv[at + 1]);
  return Number.isInteger(v) && v > 0 ? v : fallback;
};
const records = flag('--records', 1_000_000);
const lineMb = flag('--line-mb', 200);
const bin = fileURLToPath(new URL('../packages/txcript/bin/txcript.mjs', import.meta.url));
const home = mkdtempSync(join(tmpdir(), 'txcript-unreadable-bench-'));
const env = { PATH: process.env.PATH ?? '', HOME: home, XDG_CACHE_HOME: join(home, 'cache'), TZ: 'UTC' };

function timed(label: string, args: string[], extraEnv: Record<string, string> = {}): void {
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S %e %M', process.execPath, bin, ...args], {
    env: { ...env, ...extraEnv },
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  const [user, sys, wall, kb] = (r.stderr.trim().split('\n').pop() ?? '').split(' ').map(Number);
  console.log(
    `${label.padEnd(48)} cpu ${((user! + sys!) * 1000).toFixed(0)} ms  wall ${(wall! * 1000).toFixed(0)} ms  peak ${(kb! / 1024).toFixed(0)} MB  exit ${r.status}`,
  );
}

const SID = '6a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d';
const LONG = '7b1c2d3e-4f5a-4b6c-9d7e-8f9a0b1c2d3e';
function record(i: number, parent: string | null, sessionId: string): string {
  const user = i % 2 === 0;
  return JSON.stringify({
    parentUuid: parent,
    isSidechain: false,
    sessionId,
    cwd: '/w',
    type: user ? 'user' : 'assistant',
    message: user
      ? { role: 'user', content: `hi ${i}` }
      : { role: 'assistant', content: [{ type: 'text', text: `ok ${i}` }] },
    uuid: `u${i}`,
    timestamp: new Date(1.7e12 + i * 1000).toISOString(),
  });
}

console.log(
  `load average at start: ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
try {
  // 1. A 2 GB sparse file among Codex rollouts, not a session.
  const day = join(home, '.codex', 'sessions', '2026', '01', '02');
  mkdirSync(day, { recursive: true });
  const sparse = join(day, 'rollout-2026-01-02T10-00-00-5d1f0a7e-3b2c-4d9e-8f1a-2c3b4d5e6f70.jsonl');
  writeFileSync(sparse, '');
  truncateSync(sparse, 2 * 1024 * 2 ** 20);
  timed('list, 2 GB sparse file present, first run', ['list', '--from', 'codex']);
  timed('list, the same, second run', ['list', '--from', 'codex']);
  rmSync(join(home, '.codex'), { recursive: true });

  // 2. A session with one line of `lineMb` MB, and 3. one of `records` tiny records.
  const project = join(home, '.claude', 'projects', '-w');
  mkdirSync(project, { recursive: true });
  let fd = openSync(join(project, `${LONG}.jsonl`), 'w');
  writeSync(fd, `${record(0, null, LONG)}\n`);
  const filler = Buffer.alloc(2 ** 20, 'x');
  writeSync(fd, '{"type":"user","message":{"role":"user","content":"');
  for (let i = 0; i < lineMb; i++) writeSync(fd, filler);
  writeSync(fd, '"}}\n');
  writeSync(fd, `${record(1, 'u0', LONG)}\n`);
  closeSync(fd);
  timed(`export, a session with a ${lineMb} MB line`, ['export', LONG, '--out', join(home, 'long.json')]);
  rmSync(join(project, `${LONG}.jsonl`));

  fd = openSync(join(project, `${SID}.jsonl`), 'w');
  let batch: string[] = [];
  for (let i = 0; i < records; i++) {
    batch.push(record(i, i === 0 ? null : `u${i - 1}`, SID));
    if (batch.length === 10_000) {
      writeSync(fd, `${batch.join('\n')}\n`);
      batch = [];
    }
  }
  if (batch.length > 0) writeSync(fd, `${batch.join('\n')}\n`);
  closeSync(fd);
  timed(`list --no-cache, ${records} records`, ['list', '--from', 'claude_code', '--no-cache']);
  // The export alone, streamed (no listing first: `--from` names the harness), with V8's default
  // heap and with a heap far too small to hold the session.
  timed(`export --from, ${records} records`, [
    'export',
    SID,
    '--from',
    'claude_code',
    '--out',
    join(home, 'many.json'),
  ]);
  timed(
    `export --from, ${records} records, 32 MB heap`,
    ['export', SID, '--from', 'claude_code', '--out', join(home, 'many.json')],
    {
      NODE_OPTIONS: '--max-old-space-size=32 --max-semi-space-size=4',
    },
  );
  // Found by listing first: the listing's scan of the file (as `list --no-cache`) comes first.
  timed(`export, ${records} records`, ['export', SID, '--out', join(home, 'many.json')]);
} finally {
  rmSync(home, { recursive: true, force: true });
  console.log(
    `load average at end: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
}
