import { appendFileSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { claudeCode } from './claude-code/index.ts';
import { claudeCodeStore, claudeProjectsRoot } from './claude-code/store.ts';
import { codex } from './codex/index.ts';
import { codexRoots, codexStore } from './codex/store.ts';
import { cacheFileFor, RACY_WINDOW_MS } from './summary-cache-file.ts';
import { SESSION_FILE_CACHE_VERSION } from './session-files.ts';
import type { DiscoverOptions, SessionSummary } from './types.ts';

let home: string;
let env: NodeJS.ProcessEnv;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'txcript-session-files-'));
  env = { HOME: home };
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

const ID = '0b5e7a2c-1d3f-4e6a-9b8c-7d6e5f4a3b2c';
const T0 = '2026-09-01T12:00:00.000Z';

/** A clock well past the racy window of every file the test writes. */
const settled = { now: (): number => Date.now() + 10 * RACY_WINDOW_MS };

/** A Claude Code session file whose first prompt is `prompt`. */
function claudeSession(prompt: string, id = ID): string {
  const records = claudeCode.codec.fromCommon({
    meta: { id, timestamp: T0 },
    messages: [
      { role: 'user', content: [{ type: 'text', text: prompt }], timestamp: T0 },
      { role: 'assistant', content: [{ type: 'text', text: 'Sure.' }], timestamp: T0 },
    ],
  });
  const dir = join(claudeProjectsRoot(env), '-work-project');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${id}.jsonl`);
  writeFileSync(file, claudeCode.text.render(records));
  return file;
}

const cacheFile = (harness: string, roots: string[]): string =>
  cacheFileFor(env, `${harness}-files`, SESSION_FILE_CACHE_VERSION, roots.join('\0'));
const claudeCache = (): string => cacheFile('claude-code', [claudeProjectsRoot(env)]);

async function list(options?: DiscoverOptions, e: NodeJS.ProcessEnv = env): Promise<SessionSummary[]> {
  return (await claudeCodeStore(e, settled).discover(options)).sessions;
}

/** Rewrite the stored summary of `file` (its signature kept): served as is only by a cache hit. */
function tamper(cache: string, file: string, title: string): void {
  // An entry is [sig, sessions, notes?], a session [id, messageCount, title, …] (session-files.ts).
  const doc = JSON.parse(readFileSync(cache, 'utf8')) as { files: Record<string, [string, unknown[][]]> };
  doc.files[file]![1][0]![2] = title;
  writeFileSync(cache, JSON.stringify(doc));
}

describe('session-file summary cache (Claude Code, Codex)', () => {
  it('serves the summary of an unchanged file, and reads a changed one again', async () => {
    const file = claudeSession('Plan the release');
    expect((await list()).map((s) => s.title)).toEqual(['Plan the release']);
    expect((statSync(claudeCache()).mode & 0o777).toString(8)).toBe('600');
    tamper(claudeCache(), file, 'served from the cache');
    expect((await list()).map((s) => s.title)).toEqual(['served from the cache']);
    appendFileSync(file, '\n');
    expect((await list()).map((s) => s.title)).toEqual(['Plan the release']);
  });

  it('serves the very summaries a fresh read gives, storing neither the harness nor the file path per session', async () => {
    const main = claudeSession('Plan the release');
    const project = join(claudeProjectsRoot(env), '-work-project');
    const sub = join(project, ID, 'subagents', 'agent-1.jsonl');
    mkdirSync(join(project, ID, 'subagents'), { recursive: true });
    writeFileSync(sub, readFileSync(main, 'utf8'));
    // No prompt and no time: no title, no last activity.
    const bare = join(project, '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f.jsonl');
    writeFileSync(
      bare,
      `${JSON.stringify({ type: 'assistant', uuid: 'u-bare', message: { role: 'assistant', content: [{ type: 'text', text: 'hi' }] } })}\n`,
    );
    // A summary-only file titles the main session through a leaf among its lines.
    const leaf = (JSON.parse(readFileSync(main, 'utf8').trim().split('\n').at(-1)!) as { uuid: string }).uuid;
    writeFileSync(
      join(project, 'summaries.jsonl'),
      `${JSON.stringify({ type: 'summary', summary: 'Release plan', leafUuid: leaf })}\n`,
    );
    const byId = (xs: SessionSummary[]) => [...xs].sort((a, b) => (a.id < b.id ? -1 : 1));
    const fresh = byId(await list({ cache: false }));
    expect(fresh.map((s) => [s.id, s.title, s.parentId])).toEqual([
      [ID, 'Release plan', undefined],
      ['1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f', undefined, undefined],
      ['agent-1', 'Plan the release', ID],
    ]);
    expect(byId(await list())).toStrictEqual(fresh); // read, and remembered
    expect(byId(await list())).toStrictEqual(fresh); // served
    const text = readFileSync(claudeCache(), 'utf8');
    expect(Object.keys((JSON.parse(text) as { files: object }).files).sort()).toEqual(
      [bare, main, join(project, 'summaries.jsonl'), sub].sort(),
    );
    expect(text).not.toContain('"claude_code"');
    expect(text.split(JSON.stringify(main)).length - 1).toBe(1); // the key only
  });

  it('removes the files older versions of the cache left, on its first write only', async () => {
    claudeSession('Plan the release');
    const dir = dirname(claudeCache());
    const older = claudeCache().replace(`-v${SESSION_FILE_CACHE_VERSION}-`, '-v1-');
    const newer = claudeCache().replace(
      `-v${SESSION_FILE_CACHE_VERSION}-`,
      `-v${SESSION_FILE_CACHE_VERSION + 1}-`,
    );
    const otherScope = older.replace(/-[0-9a-f]{16}\.json$/, '-0123456789abcdef.json');
    const otherKind = join(dir, 'codex-files-v1-0123456789abcdef.json');
    mkdirSync(dir, { recursive: true });
    for (const f of [older, newer, otherScope, otherKind]) writeFileSync(f, '{}');
    await list();
    expect(existsSync(claudeCache())).toBe(true);
    expect([older, newer, otherScope, otherKind].map(existsSync)).toEqual([false, true, true, true]);
    // Later writes of the same version leave what is there alone.
    writeFileSync(older, '{}');
    claudeSession('Plan the release again', '7c6b5a49-3827-4160-a5f4-e3d2c1b0a998');
    await list();
    expect(existsSync(older)).toBe(true);
  });

  it('neither uses nor writes the cache with --no-cache or TXCRIPT_NO_CACHE', async () => {
    const file = claudeSession('Plan the release');
    await list();
    tamper(claudeCache(), file, 'served from the cache');
    const before = readFileSync(claudeCache(), 'utf8');
    expect((await list({ cache: false })).map((s) => s.title)).toEqual(['Plan the release']);
    expect((await list(undefined, { ...env, TXCRIPT_NO_CACHE: '1' })).map((s) => s.title)).toEqual([
      'Plan the release',
    ]);
    expect(readFileSync(claudeCache(), 'utf8')).toBe(before);
  });

  it('does not remember a file changed within the racy window', async () => {
    claudeSession('Plan the release');
    expect((await claudeCodeStore(env).discover()).sessions).toHaveLength(1); // the real clock: just written
    // Nothing to remember: no cache file is written at all.
    expect(existsSync(claudeCache())).toBe(false);
    // Once settled, the same file is remembered.
    await list();
    expect(
      Object.keys((JSON.parse(readFileSync(claudeCache(), 'utf8')) as { files: object }).files),
    ).toHaveLength(1);
  });

  it('ignores a corrupt cache and writes a good one, and drops the files that are gone', async () => {
    const file = claudeSession('Plan the release');
    const other = claudeSession('Second session', '1c6f8b3d-2e4a-4f7b-8c9d-0e1f2a3b4c5d');
    mkdirSync(join(home, '.cache', 'txcript'), { recursive: true });
    writeFileSync(claudeCache(), '{"files": {');
    expect(await list()).toHaveLength(2);
    const stored = (): string[] =>
      Object.keys((JSON.parse(readFileSync(claudeCache(), 'utf8')) as { files: object }).files).sort();
    expect(stored()).toEqual([file, other].sort());
    await rm(other);
    expect(await list()).toHaveLength(1);
    expect(stored()).toEqual([file]);
  });

  it('caches Codex rollouts the same way, and what is not a session as its warning (said again every run, not read again)', async () => {
    const roots = codexRoots(env);
    const records = codex.codec.fromCommon({
      meta: { id: ID, timestamp: T0 },
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Fix the build' }], timestamp: T0 }],
    });
    const dir = join(roots.sessions, '2026', '09', '01');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `rollout-2026-09-01T12-00-00-${ID}.jsonl`);
    writeFileSync(file, codex.text.render(records));
    const stray = join(dir, 'rollout-2026-09-01T12-00-01-1c6f8b3d-2e4a-4f7b-8c9d-0e1f2a3b4c5d.jsonl');
    writeFileSync(stray, '{"type":"event_msg","payload":{}}\n');
    const discover = () => codexStore(env, settled).discover();
    const first = await discover();
    expect(first.sessions.map((s) => s.title)).toEqual(['Fix the build']);
    expect(first.warnings.map((w) => w.source)).toEqual([stray]);
    const cache = cacheFile('codex', [roots.sessions, roots.archived!]);
    expect(Object.keys((JSON.parse(readFileSync(cache, 'utf8')) as { files: object }).files).sort()).toEqual(
      [file, stray].sort(),
    );
    tamper(cache, file, 'served from the cache');
    const second = await discover();
    expect(second.sessions.map((s) => s.title)).toEqual(['served from the cache']);
    expect(second.warnings).toEqual(
      first.warnings.map((w) => ({ ...w, message: `${w.message} (not read again until the file changes)` })),
    );
  });
});
