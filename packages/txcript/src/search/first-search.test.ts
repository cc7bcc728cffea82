/**
 * Issue 23 item 3: a scan reads only what can match, and a first search
 * answers from it while the index is built for the next one.
 */
import { appendFileSync, existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createContext } from '../cli/context.ts';
import { discoverSessions } from '../cli/sessions.ts';
import type { SearchRow } from '../cli/search.ts';
import { claudeCode } from '../harness/claude-code/index.ts';
import { codex } from '../harness/codex/index.ts';
import type { Transcript } from '../model/common.ts';
import { runCli } from '../../test/run-cli.ts';
import { generateClaudeProjects } from '../../test/fixtures/claude-code/generate.ts';
import { buildLockFile } from './index-build.ts';
import { SearchIndex, indexFile } from './index-db.ts';
import { INLINE_REFRESH_BYTES } from './engine.ts';
import { parseQuery } from './query.ts';
import { type ScanStats, scanHits } from './scan.ts';

let home: string;
let env: Record<string, string>;
const root = () => join(home, 'claude', 'projects');

/** Plant `word` in a user line appended to every `every`th session file; the sessions it went into. */
function plant(word: string, every: number): string[] {
  const ids: string[] = [];
  let i = 0;
  for (const project of readdirSync(root()).sort()) {
    for (const file of readdirSync(join(root(), project)).sort()) {
      if (i++ % every !== 0) continue;
      const id = file.slice(0, -'.jsonl'.length);
      appendFileSync(
        join(root(), project, file),
        `${JSON.stringify({
          parentUuid: null,
          isSidechain: false,
          type: 'user',
          sessionId: id,
          cwd: '/home/dev/planted',
          message: { role: 'user', content: `the ${word} banner is wrong` },
          uuid: `00000000-0000-4000-a000-${String(i).padStart(12, '0')}`,
          // Apart, so that recency orders hits of equal score alike in the scan and the index.
          timestamp: new Date(Date.UTC(2026, 5, 1) + i * 1000).toISOString(),
        })}\n`,
      );
      ids.push(id);
    }
  }
  return ids;
}

let planted: string[];

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'txcript-first-search-'));
  env = {
    HOME: home,
    XDG_CACHE_HOME: join(home, 'cache'),
    TXCRIPT_CLAUDE_CODE_ROOT: root(),
    TZ: 'UTC',
  };
  // More than a search refreshes inline.
  const bytes = generateClaudeProjects(root(), { sessions: 90, projects: 3, resultLines: 20 });
  expect(bytes).toBeGreaterThan(INLINE_REFRESH_BYTES);
  planted = plant('zanzibarite', 30);
});

afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

function txcript(args: string[], starts: string[] = []) {
  return runCli(args, {
    env,
    // Past the racy window of files written just now.
    now: () => new Date(Date.now() + 10_000),
    harnesses: [claudeCode],
    startIndexBuild: () => {
      starts.push('index');
      // This process stands for the builder: alive, so the lock holds.
      return process.pid;
    },
  });
}

const refs = (out: string) => (JSON.parse(out) as SearchRow[]).map((r) => `${r.ref} ${r.kind}`);

describe('the scan', () => {
  it('reads only the session files whose bytes hold every wanted word', async () => {
    const ctx = createContext({
      stdout: { write: () => true },
      stderr: { write: () => true },
      readStdin: () => Promise.resolve(''),
      env,
      now: () => new Date(),
      harnesses: [claudeCode],
    });
    const { sessions } = await discoverSessions(ctx, undefined);
    expect(sessions).toHaveLength(90);
    const stats: ScanStats = { sessions: 0, files: 0, passed: 0, read: 0, readWorkers: 0 };
    const hits = await scanHits(ctx, parseQuery('zanzibarite banner'), { limit: 20 }, sessions, {}, stats);
    expect(stats).toEqual({
      sessions: 90,
      files: 90,
      passed: planted.length,
      read: planted.length,
      readWorkers: 0,
    });
    expect(new Set(hits.map((h) => h.session.id))).toEqual(new Set(planted));
    // A word in every file: each is read, until a broad query's newest matches are in hand.
    const broad: ScanStats = { sessions: 0, files: 0, passed: 0, read: 0, readWorkers: 0 };
    await scanHits(ctx, parseQuery('module'), { limit: 20 }, sessions, { broadMatches: 50 }, broad);
    expect(broad.passed).toBe(90);
    expect(broad.read).toBeLessThan(90);
  });
});

describe('a first search', () => {
  it('answers from the scan and starts one index build; the index then answers alike', async () => {
    const starts: string[] = [];
    const first = await txcript(['search', '--json', 'zanzibarite'], starts);
    expect(first.code).toBe(0);
    expect(refs(first.stdout)).toHaveLength(planted.length);
    expect(starts).toEqual(['index']);
    expect(readFileSync(buildLockFile(env), 'utf8')).toBe(String(process.pid));
    // Nothing was indexed by the search itself.
    const index = SearchIndex.open(indexFile(env), () => undefined);
    expect(index.sessions()).toEqual([]);
    index.close();

    // While the build runs, another search scans again and starts no second build.
    const second = await txcript(['search', '--json', 'zanzibarite'], starts);
    expect(refs(second.stdout)).toEqual(refs(first.stdout));
    expect(starts).toEqual(['index']);

    // The build (here in-process, as the pid in the lock): it keeps the index and frees the lock.
    const built = await txcript(['index'], starts);
    expect(built.code).toBe(0);
    expect(built.stdout).toMatch(/^90 sessions indexed \(90 read now, 0 gone\) in /);
    expect(existsSync(buildLockFile(env))).toBe(false);

    const third = await txcript(['search', '--json', 'zanzibarite'], starts);
    expect(refs(third.stdout)).toEqual(refs(first.stdout));
    expect(starts).toEqual(['index']);
    const again = await txcript(['index'], starts);
    expect(again.stdout).toMatch(/^90 sessions indexed \(0 read now, 0 gone\)/);

    // A word in every session, past a broad query's bound: the newest matches, by the sessions'
    // last activity in the index as in the scan, though the planted sessions were indexed in file
    // order, not in the order of their last activity.
    const broadIndexed = await txcript(['search', '--json', '--limit', '40', 'module'], starts);
    const broadScanned = await txcript(['search', '--json', '--limit', '40', '--no-index', 'module'], starts);
    expect(refs(broadScanned.stdout)).toHaveLength(40);
    expect(refs(broadIndexed.stdout)).toEqual(refs(broadScanned.stdout));
  });

  it('takes over the lock of a build that died', async () => {
    const starts: string[] = [];
    // A new session past the inline bound, and a lock naming a process that is gone.
    generateClaudeProjects(join(home, 'claude', 'projects'), {
      sessions: 90,
      projects: 3,
      resultLines: 20,
      seed: 9,
    });
    const { writeFileSync } = await import('node:fs');
    writeFileSync(buildLockFile(env), '2147483646');
    const r = await txcript(['search', '--json', 'zanzibarite'], starts);
    expect(r.code).toBe(0);
    expect(starts).toEqual(['index']);
    expect(readFileSync(buildLockFile(env), 'utf8')).toBe(String(process.pid));
    await txcript(['index']);
  });
});

describe('the scan of Codex rollouts (their text is in their files)', () => {
  it('reads only the rollouts that can hold the words, wherever in the rollout they are', async () => {
    const codexEnv = { ...env, TXCRIPT_CODEX_ROOT: join(home, 'codex', 'sessions') };
    const at = (s: number): string => new Date(Date.UTC(2026, 6, 1, 9, 0, s)).toISOString();
    const session = (id: string, said: string, command: string, input: string): Transcript => ({
      meta: { id, timestamp: at(0), cwd: '/home/dev/app', title: `session ${id.slice(0, 4)}` },
      messages: [
        { role: 'user', timestamp: at(1), content: [{ type: 'text', text: `Prüfe das, bitte: ${said}` }] },
        {
          role: 'assistant',
          timestamp: at(2),
          content: [
            { type: 'tool_use', id: `c-${id}`, tool: { name: 'Bash', command } },
            {
              type: 'tool_use',
              id: `r-${id}`,
              tool: { name: 'Raw', tool_name: 'lookup', input: { q: input } },
            },
          ],
        },
        {
          role: 'user',
          timestamp: at(3),
          content: [
            { type: 'tool_result', tool_use_id: `c-${id}`, content: 'ok' },
            { type: 'tool_result', tool_use_id: `r-${id}`, content: 'ok' },
          ],
        },
      ],
    });
    const store = codex.store!(codexEnv);
    const ids = ['a1a1a1a1-0000-4000-8000-000000000001', 'b2b2b2b2-0000-4000-8000-000000000002'];
    const saved = [
      // The word in the user's text; in the second, only inside a call's arguments (a JSON string in a JSON string).
      await store.save!(session(ids[0]!, 'the quokkaline "theme"', 'ls', 'none')),
      await store.save!(session(ids[1]!, 'nothing here', 'grep -r "quokkaline" src/', 'x')),
      await store.save!(session('c3c3c3c3-0000-4000-8000-000000000003', 'nothing either', 'ls', 'nope')),
    ];
    expect(saved).toHaveLength(3);
    const ctx = createContext({
      stdout: { write: () => true },
      stderr: { write: () => true },
      readStdin: () => Promise.resolve(''),
      env: codexEnv,
      now: () => new Date(),
      harnesses: [codex],
    });
    const { sessions } = await discoverSessions(ctx, undefined);
    expect(sessions).toHaveLength(3);
    const stats: ScanStats = { sessions: 0, files: 0, passed: 0, read: 0, readWorkers: 0 };
    const hits = await scanHits(ctx, parseQuery('quokkaline'), { limit: 20 }, sessions, {}, stats);
    expect(stats).toEqual({ sessions: 3, files: 3, passed: 2, read: 2, readWorkers: 0 });
    expect(new Set(hits.map((h) => h.session.id))).toEqual(new Set(ids));
  });
});
