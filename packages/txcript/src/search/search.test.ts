/**
 * `txcript search` on a tree of every harness (Grok Bot, Claude Code, Codex
 * through their real stores; Simple documents through a folder store), run
 * in-process in a temp HOME with its own cache folder.
 */
import { readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeCode } from '../harness/claude-code/index.ts';
import { codex } from '../harness/codex/index.ts';
import { grokBot } from '../harness/grok-bot/index.ts';
import { runCli } from '../../test/run-cli.ts';
import type { SearchRow } from '../cli/search.ts';
import { line, sendRecord, userRecord } from '../../test/fixtures/grok-bot/generate.ts';
import {
  type SearchTree,
  codingSession,
  saveSession,
  searchTree,
  writeSimple,
} from '../../test/fixtures/search/generate.ts';
import { INDEX_VERSION, indexFile } from './index-db.ts';
import { existsSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';

let tree: SearchTree;
const CLAUDE = '11111111-1111-4111-8111-111111111111';
const CODEX = '22222222-2222-4222-8222-222222222222';
const GROK = 'agent-pager';
const SECRET_AGENT = 'agent-secret';
const SECRET_VALUE = 'sk-live-Zq8vXw3yT9';

function txcript(args: string[], env: Record<string, string> = {}) {
  return runCli(args, {
    env: { ...tree.env, ...env },
    // Past the racy window of files written just now.
    now: () => new Date(Date.now() + 10_000),
    harnesses: tree.harnesses,
  });
}

async function search(...args: string[]): Promise<SearchRow[]> {
  const r = await txcript(['search', '--json', ...args]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as SearchRow[];
}

beforeAll(async () => {
  tree = searchTree(await mkdtemp(join(tmpdir(), 'txcript-search-')));
  await saveSession(
    tree,
    claudeCode,
    codingSession(CLAUDE, {
      start: '2026-09-01T10:00:00Z',
      cwd: '/work/shop',
      prompt: 'the checkout pagination is broken on page two',
      thinking: 'probably an off-by-one in the cursor offset',
      command: 'npm run test -- checkout',
      output: 'FAIL checkout.test.ts: expected 20 rows, got 19',
      answer: 'Fixed the cursor offset in the checkout query.',
    }),
  );
  await saveSession(
    tree,
    codex,
    codingSession(CODEX, {
      start: '2026-09-05T10:00:00Z',
      cwd: '/work/infra',
      prompt: 'deploy the release to staging',
      command: 'git merge --squash release && make deploy ENV=staging',
      output: 'deployed build 42 to staging; pagination service unchanged',
      answer: 'Deployed to staging. Production waits for review.',
    }),
  );
  await saveSession(
    tree,
    grokBot,
    codingSession(GROK, {
      start: '2026-09-07T10:00:00Z',
      prompt: 'remind me how pagination cursors work',
      answer: 'private notes about cursors',
    }),
  );
  writeSimple(
    tree,
    codingSession('simple-notes', {
      start: '2026-09-08T10:00:00Z',
      title: 'Pagination design notes',
      prompt: 'collect the design',
      answer: 'Keyset pagination beats offsets.',
    }),
  );
  // A Grok Bot box session: a secret request, the user's answer (the secret), and a scrubbed tool output.
  const dir = join(tree.home, 'agent-data', 'agent-transcripts', SECRET_AGENT);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, `${SECRET_AGENT}.jsonl`),
    [
      userRecord('[t0u]\nconnect the billing api'),
      sendRecord('Requested a secret from the user securely: Billing API key', 'c1'),
      userRecord(`[t1u]\n[Answering your question t0s0: "Billing API key"] ${SECRET_VALUE}`),
      line({
        role: 'assistant',
        message: {
          content: [{ type: 'tool_use', name: 'shell', input: { command: 'env', toolCallId: 'c2' } }],
        },
      }),
      line({
        role: 'tool',
        message: {
          content: [
            {
              type: 'tool_result',
              name: 'shell',
              result: { success: { output: 'BILLING_KEY=[secret BILLING_KEY redacted]' } },
            },
          ],
        },
      }),
    ].join('\n') + '\n',
  );
});

afterAll(async () => {
  await rm(tree.home, { recursive: true, force: true });
});

describe('search across harnesses', () => {
  it('finds a word in every harness, with the kind that matched and a reference', async () => {
    const hits = await search('pagination');
    const seen = new Set(hits.map((h) => h.harness));
    expect(seen).toEqual(new Set(['claude_code', 'codex', 'grok_bot', 'simple']));
    const simpleTitle = hits.find((h) => h.harness === 'simple' && h.kind === 'title');
    expect(simpleTitle?.ref).toBe('simple-notes');
    const codexOutput = hits.find((h) => h.harness === 'codex');
    expect(codexOutput).toMatchObject({ kind: 'tool_output', ref: `${CODEX}#2-3` });
    const s = codexOutput!.snippet;
    const [a, b] = codexOutput!.highlights[0]!;
    expect(s.slice(a, b).toLowerCase()).toBe('pagination');
  });

  it('ranks a title and the user’s words above a tool output', async () => {
    const hits = await search('pagination');
    const kinds = hits.map((h) => h.kind);
    expect(kinds[0]).toBe('title');
    expect(kinds.indexOf('user')).toBeLessThan(kinds.indexOf('tool_output'));
  });

  it('labels thinking, tool input and assistant text', async () => {
    expect((await search('off-by-one'))[0]).toMatchObject({ kind: 'thinking', ref: `${CLAUDE}#2` });
    expect((await search('ENV=staging'))[0]).toMatchObject({ kind: 'tool_input', ref: `${CODEX}#2-3` });
    expect((await search('production waits'))[0]).toMatchObject({ kind: 'assistant', ref: `${CODEX}#4` });
    // A Grok Bot's plain assistant text is its private thinking, as view shows it.
    expect((await search('private notes'))[0]).toMatchObject({ kind: 'thinking', harness: 'grok_bot' });
  });

  it('needs every word in one message; a phrase keeps its order; -word excludes', async () => {
    expect((await search('cursor', 'checkout')).map((h) => h.ref)).toEqual([`${CLAUDE}#5`]);
    expect(await search('"offset cursor"')).toEqual([]);
    expect((await search('"cursor offset"')).map((h) => h.ref).sort()).toEqual([
      `${CLAUDE}#2`,
      `${CLAUDE}#5`,
    ]);
    const without = await search('cursor', '-checkout');
    expect(without.map((h) => h.ref)).not.toContain(`${CLAUDE}#5`);
    expect(without.map((h) => h.ref)).toContain(`${CLAUDE}#2`);
  });

  it('finds a --word as typed among other words, and after --; alone it is a mistyped option', async () => {
    const squash = [`${CODEX}#2-3`]; // the call, kept with its result
    expect((await search('git merge --squash')).map((h) => h.ref)).toEqual(squash);
    expect((await search('git', 'merge', '--squash')).map((h) => h.ref)).toEqual(squash);
    expect((await search('--', '--squash')).map((h) => h.ref)).toEqual(squash);
    // Not the exclusion of "-squash": a session without the text is not a hit.
    expect(await search('deploy', '--squish')).toEqual([]);
    const alone = await txcript(['search', '--squash']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('txcript search -- --squash');
  });

  it('tolerates a typo in a term marked ~, and not without it', async () => {
    expect(await search('paginaton')).toEqual([]);
    const fuzzy = await search('paginaton~');
    expect(fuzzy.length).toBeGreaterThan(3);
    const first = fuzzy[0]!;
    const [a, b] = first.highlights[0]!;
    expect(first.snippet.slice(a, b).toLowerCase()).toBe('pagination');
  });

  it('matches terms shorter than a trigram', async () => {
    expect((await search('19', 'rows')).map((h) => h.ref)).toEqual([`${CLAUDE}#3-4`]);
  });

  it('filters by harness, working folder and time', async () => {
    expect(new Set((await search('pagination', '--from', 'codex')).map((h) => h.harness))).toEqual(
      new Set(['codex']),
    );
    expect(new Set((await search('pagination', '--cwd', '/work/shop')).map((h) => h.id))).toEqual(
      new Set([CLAUDE]),
    );
    expect(await search('pagination', '--cwd', '/work/sho')).toEqual([]);
    // The root holds every folder.
    expect(new Set((await search('pagination', '--cwd', '/')).map((h) => h.id))).toEqual(
      new Set([CLAUDE, CODEX]),
    );
    const until = await search('pagination', '--until', '2026-09-03T00:00:00Z');
    expect(new Set(until.map((h) => h.id))).toEqual(new Set([CLAUDE]));
    const limited = await search('pagination', '-n', '2');
    expect(limited).toHaveLength(2);
  });

  it('gives references that view accepts, widened to keep a tool call with its result', async () => {
    const [hit] = await search('expected 20 rows');
    expect(hit!.ref).toBe(`${CLAUDE}#3-4`);
    const viewed = await txcript(['view', hit!.ref]);
    expect(viewed.code).toBe(0);
    expect(viewed.stdout).toContain('expected 20 rows');
  });

  it('prints hits for people with the matches marked', async () => {
    const r = await txcript(['search', 'keyset']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('simple-notes#2  simple  assistant text');
    expect(r.stdout).toContain('[Keyset] pagination');
    const coloured = await txcript(['search', 'keyset'], { FORCE_COLOR: '1' });
    expect(coloured.stdout).toContain('\x1b[1m\x1b[33mKeyset');
  });

  it('refuses a query it cannot run, before scanning', async () => {
    for (const [args, what] of [
      [['"unclosed'], 'unclosed'],
      [['-only'], 'only excludes'],
      [['--nope'], "unknown option '--nope'"],
      [[], 'needs a query'],
    ] as const) {
      const r = await txcript(['search', ...args]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(what);
    }
  });
});

describe('what is indexed of a tool', () => {
  it('keeps the start and the end of a long output, not its middle', async () => {
    const filler = (n: number) => Array.from({ length: n }, (_, i) => `row ${i} ok`).join('\n');
    await saveSession(
      tree,
      claudeCode,
      codingSession('77777777-7777-4777-8777-777777777777', {
        start: '2026-09-09T10:00:00Z',
        cwd: '/work/logs',
        prompt: 'run the suite',
        command: 'npm test',
        output: `HEADMARKER\n${filler(1000)}\nMIDDLEMARKER\n${filler(1000)}\nTAILMARKER`,
        answer: 'done',
      }),
    );
    expect((await search('headmarker')).map((h) => h.kind)).toEqual(['tool_output']);
    expect((await search('tailmarker')).map((h) => h.kind)).toEqual(['tool_output']);
    expect(await search('middlemarker')).toEqual([]);
  });
});

describe('secrets', () => {
  it('never reads the answer to a Grok Bot secret-request, and keeps scrubbed text scrubbed', async () => {
    expect(await search(SECRET_VALUE)).toEqual([]);
    expect(await search('Zq8vXw3')).toEqual([]);
    const scrubbed = await search('BILLING_KEY');
    expect(scrubbed[0]!.snippet).toContain('[secret BILLING_KEY redacted]');
    // The request itself is searchable; the answer is in no row of the index file.
    expect((await search('billing api key')).length).toBeGreaterThan(0);
    const bytes = readFileSync(indexFile(tree.env)).toString('latin1');
    expect(bytes).not.toContain('Zq8vXw3');
  });
});

describe('the index file', () => {
  it('lives in the cache folder, 0700 and 0600', async () => {
    await search('pagination');
    const file = indexFile(tree.env);
    expect(file.startsWith(join(tree.home, 'cache', 'txcript'))).toBe(true);
    expect(statSync(join(tree.home, 'cache', 'txcript')).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('scans directly, with a note, when the cache folder cannot be used', async () => {
    const blocked = join(tree.home, 'not-a-folder');
    writeFileSync(blocked, 'a file where the cache folder would be');
    const r = await txcript(['search', '--json', 'keyset'], { XDG_CACHE_HOME: blocked });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/txcript: note: cannot use the search index .*; scanning every session instead/);
    expect((JSON.parse(r.stdout) as SearchRow[]).map((h) => h.ref)).toEqual(['simple-notes#2']);
  });

  it('scans directly when a folder stands where the index file would be, without calling it damaged', async () => {
    const cache = join(tree.home, 'folder-cache');
    mkdirSync(indexFile({ ...tree.env, XDG_CACHE_HOME: cache }), { recursive: true });
    const r = await txcript(['search', '--json', 'keyset'], { XDG_CACHE_HOME: cache });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      /txcript: note: cannot use the search index .*EISDIR.*; scanning every session instead/,
    );
    expect(r.stderr).not.toContain('rebuilt');
    expect((JSON.parse(r.stdout) as SearchRow[]).map((h) => h.ref)).toEqual(['simple-notes#2']);
  });

  it('replaces the file of an older version (its name differs), with a note', async () => {
    const old = indexFile(tree.env, INDEX_VERSION - 1);
    writeFileSync(old, 'an index an older txcript left');
    writeFileSync(`${old}-wal`, '');
    const r = await txcript(['search', '--json', 'keyset']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`txcript: note: removed ${old}, the search index of an older txcript`);
    expect(existsSync(old)).toBe(false);
    expect(existsSync(`${old}-wal`)).toBe(false);
    expect((JSON.parse(r.stdout) as SearchRow[]).map((h) => h.ref)).toEqual(['simple-notes#2']);
    expect((await txcript(['search', '--json', 'keyset'])).stderr).toBe('');
  });

  it('says what it does while it works: indexing, or with --no-index reading', async () => {
    const env = { XDG_CACHE_HOME: join(tree.home, 'progress-cache'), TXCRIPT_PROGRESS_DELAY_MS: '0' };
    const indexed = await txcript(['search', '--json', 'pagination'], env);
    expect(indexed.stderr).toMatch(/^txcript: indexing sessions 1\/\d+$/m);
    const direct = await txcript(['search', '--json', '--no-index', 'pagination'], env);
    expect(direct.stderr).toMatch(/^txcript: reading sessions 1\/\d+$/m);
    expect(direct.stderr).not.toContain('indexing');
  });

  it('--no-index gives the same hits, in the same order, without reading or writing it', async () => {
    const env = { XDG_CACHE_HOME: join(tree.home, 'other-cache') };
    // BM25's collection counts of a scan estimate the sessions it skipped unread: scores differ a little.
    const unscored = (rows: SearchRow[]) =>
      rows.map(({ score, ...rest }) => ({ ...rest, scored: score !== 0 }));
    for (const query of [
      'pagination',
      'staging deploy',
      'checkout -broken',
      'paginaton~',
      '"cursor offset"',
    ]) {
      const r = await txcript(['search', '--json', '--no-index', query], env);
      const indexed = await search(query);
      expect(indexed.length).toBeGreaterThan(0);
      expect(unscored(JSON.parse(r.stdout) as SearchRow[])).toEqual(unscored(indexed));
    }
    // The stores' own list caches may be written there; no search index is.
    const folder = join(tree.home, 'other-cache', 'txcript');
    const files = existsSync(folder) ? readdirSync(folder) : [];
    expect(files.filter((f) => f.startsWith('search-'))).toEqual([]);
    expect(existsSync(indexFile({ ...tree.env, ...env }))).toBe(false);
  });
});
