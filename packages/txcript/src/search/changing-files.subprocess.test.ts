/**
 * Issue 23: another process changes session files while `txcript index`
 * builds the index and a `txcript search --no-index` scans (what a first
 * search answers from while the index is built), all real processes
 * through the real bin. Each changed
 * session is, over and over while they run, appended to, cut (mid-line),
 * rewritten in place, or deleted and made again, and then left in its final
 * state before the mutator ends. Every run ends well (exit 0, no stack
 * trace), and the next searches, from the index and from a scan, see every
 * final state: appended words found, cut and rewritten words gone, deleted
 * sessions gone.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateClaudeProjects } from '../../test/fixtures/claude-code/generate.ts';
import { runProcess, type Outcome } from '../../test/run-process.ts';
import { RACY_WINDOW_MS } from '../harness/summary-cache-file.ts';

const bin = fileURLToPath(new URL('../../bin/txcript.mjs', import.meta.url));
const SESSIONS = 200;
const CHANGED = 24;
/** What happens to the k-th changed session: k % 4. */
const CHANGES = ['append', 'cut', 'rewrite', 'delete'] as const;

let home: string;
let env: NodeJS.ProcessEnv;
/** The changed sessions' files and ids, in order. */
let changed: Array<{ file: string; id: string }>;

const txcript = (args: string[]): Promise<Outcome> => runProcess(process.execPath, [bin, ...args], { env });

/** The line planted at the end of a changed session, holding `word`. */
function plantedLine(id: string, word: string, k: number): string {
  return `${JSON.stringify({
    parentUuid: null,
    isSidechain: false,
    type: 'user',
    sessionId: id,
    cwd: '/home/dev/planted',
    message: { role: 'user', content: `check the ${word} gauge before the release` },
    uuid: `00000000-0000-4000-a000-${String(k).padStart(12, '0')}`,
    timestamp: new Date(Date.UTC(2026, 6, 1, 0, 0, k)).toISOString(),
  })}\n`;
}

/**
 * The mutator, a separate Node process: for `ms` milliseconds it keeps
 * changing each session (append, cut mid-line and restore, rewrite in place,
 * delete and make again), then leaves each in its final state and ends.
 */
const MUTATOR = `
import { appendFileSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
const { sessions, ms } = JSON.parse(process.argv[2]);
const original = sessions.map((s) => readFileSync(s.file, 'utf8'));
const rewritten = original.map((t, k) => t.replaceAll('zqorig' + k + 'x', 'zqrewrite' + k + 'x'));
// Inside the last line, the planted one: the file ends in half a record.
const cutAt = original.map((t) => Buffer.byteLength(t.slice(0, t.lastIndexOf('\\n', t.length - 2) + 1)) + 12);
const end = Date.now() + ms;
let round = 0;
while (Date.now() < end) {
  sessions.forEach((s, k) => {
    switch (k % 4) {
      case 0: appendFileSync(s.file, s.append); break;
      case 1: round % 2 === 0 ? truncateSync(s.file, cutAt[k]) : writeFileSync(s.file, original[k]); break;
      case 2: writeFileSync(s.file, round % 2 === 0 ? rewritten[k] : original[k]); break;
      case 3: round % 2 === 0 ? rmSync(s.file, { force: true }) : writeFileSync(s.file, original[k]); break;
    }
  });
  round++;
  await new Promise((r) => setTimeout(r, 15));
}
sessions.forEach((s, k) => {
  switch (k % 4) {
    case 0: appendFileSync(s.file, s.append); break;
    case 1: truncateSync(s.file, cutAt[k]); break;
    case 2: writeFileSync(s.file, rewritten[k]); break;
    case 3: rmSync(s.file, { force: true }); break;
  }
});
process.stdout.write(String(round));
`;

function mutate(ms: number): Promise<{ code: number | null; rounds: number }> {
  const script = join(home, 'mutator.mjs');
  writeFileSync(script, MUTATOR);
  const sessions = changed.map(({ file, id }, k) => ({
    file,
    append: plantedLine(id, `zqappend${k}x`, 1000 + k),
  }));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, JSON.stringify({ sessions, ms })], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, rounds: Number(out) }));
  });
}

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'txcript-changing-files-'));
  const root = join(home, 'projects');
  env = {
    PATH: process.env.PATH ?? '',
    HOME: home,
    XDG_CACHE_HOME: join(home, 'cache'),
    TXCRIPT_CLAUDE_CODE_ROOT: root,
    TZ: 'UTC',
    TXCRIPT_PROGRESS_DELAY_MS: '600000',
  };
  generateClaudeProjects(root, { sessions: SESSIONS, projects: 4, resultLines: 12, seed: 5 });
  const files = readdirSync(root)
    .sort()
    .flatMap((p) =>
      readdirSync(join(root, p))
        .sort()
        .map((f) => join(root, p, f)),
    );
  changed = files.slice(0, CHANGED).map((file) => ({ file, id: file.slice(file.lastIndexOf('/') + 1, -6) }));
  changed.forEach(({ file, id }, k) => writeFileSync(file, plantedLine(id, `zqorig${k}x`, k), { flag: 'a' }));
  // Outside the racy window: the build vouches for what it reads, so only a signature can tell a change.
  await new Promise((r) => setTimeout(r, RACY_WINDOW_MS + 300));
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

/** The ids of sessions with a hit for `word`, from the index (default) or a scan. */
async function found(word: string, scan = false): Promise<string[]> {
  const r = await txcript(['search', word, '--json', '-n', '1000', ...(scan ? ['--no-index'] : [])]);
  expect(r.code, r.stderr).toBe(0);
  const hits = JSON.parse(r.stdout === '' ? '[]' : r.stdout) as Array<{ id: string }>;
  return [...new Set(hits.map((h) => h.id))].sort();
}

const ids = (change: (typeof CHANGES)[number]) =>
  changed.filter((_, k) => CHANGES[k % 4] === change).map((c) => c.id);

async function buildsDone(): Promise<void> {
  const lock = join(home, 'cache', 'txcript', 'search-build.lock');
  for (let i = 0; i < 1200 && existsSync(lock); i++) await new Promise((r) => setTimeout(r, 50));
}

describe('session files changed by another process during an index build and searches', () => {
  it('every run ends well, and the next searches see every final state', async () => {
    // The build has listed the sessions (outside the racy window) once it shows progress: the
    // changes start then, so only their signatures can tell the next search about them.
    let listed: () => void = () => {};
    const reading = new Promise<void>((resolve) => (listed = resolve));
    const index = runProcess(process.execPath, [bin, 'index'], {
      env: { ...env, TXCRIPT_PROGRESS_DELAY_MS: '0' },
      onStderr: () => listed(),
    });
    await Promise.race([reading, index]);
    const [mutator, scan, built] = await Promise.all([
      mutate(1500),
      txcript(['search', 'gauge', '--json', '-n', '1000', '--no-index']),
      index,
    ]);
    expect(mutator.code).toBe(0);
    // The changes really went on while the others ran.
    expect(mutator.rounds).toBeGreaterThan(2);
    for (const r of [built, scan]) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    await buildsDone();
    // Past the racy window again: the next search must tell the changes by their signatures.
    await new Promise((r) => setTimeout(r, RACY_WINDOW_MS + 300));
    for (const scan of [false, true]) {
      const orig = await found('zqorig', scan);
      // Appended sessions keep their planted line; a cut, rewritten or deleted one has lost it.
      expect(orig, `scan: ${scan}`).toEqual(ids('append').sort());
      expect(await found('zqappend', scan), `scan: ${scan}`).toEqual(ids('append').sort());
      expect(await found('zqrewrite', scan), `scan: ${scan}`).toEqual(ids('rewrite').sort());
    }
    // Deleted sessions are listed no more.
    const list = await txcript(['list', '--json']);
    expect(list.code, list.stderr).toBe(0);
    for (const id of ids('delete')) expect(list.stdout).not.toContain(id);
  }, 180_000);
});
