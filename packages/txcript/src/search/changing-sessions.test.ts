/**
 * Issue 23: a session that changes while a search reads it. Sessions are
 * appended to, truncated (mid-line too), replaced and deleted while a first
 * search indexes or scans them, just before or just after their own read.
 * The search ends well; what it shows is what it read, never a version it did
 * not; and the next search sees every change, because a source's signature is
 * taken before it is read (refresh.ts), so a change after the read leaves a
 * signature that no longer fits.
 */
import { appendFileSync, readFileSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SearchRow } from '../cli/search.ts';
import { claudeCode } from '../harness/claude-code/index.ts';
import type { Harness, Store } from '../harness/types.ts';
import type { Transcript } from '../model/common.ts';
import { runCli } from '../../test/run-cli.ts';
import { generateClaudeProjects } from '../../test/fixtures/claude-code/generate.ts';
import { INLINE_REFRESH_BYTES } from './engine.ts';

let home: string;
let env: Record<string, string>;
const root = () => join(home, 'claude', 'projects');

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'txcript-changing-'));
  env = {
    HOME: home,
    XDG_CACHE_HOME: join(home, 'cache'),
    TXCRIPT_CLAUDE_CODE_ROOT: root(),
    TZ: 'UTC',
  };
});

afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

/** What to do to the sessions when one is loaded: just before its read, or just after it. */
interface Change {
  before?: () => void;
  after?: () => void;
}

/** Claude Code, whose store runs each session's change (once) around its load. */
function changing(changes: Map<string, Change>): Harness {
  return {
    ...claudeCode,
    store: (e) => {
      const inner = claudeCode.store!(e);
      const store: Store = {
        ...inner,
        async load(id) {
          const change = changes.get(id);
          changes.delete(id);
          change?.before?.();
          const loaded = await inner.load(id);
          change?.after?.();
          return loaded;
        },
      };
      return store;
    },
  };
}

function txcript(args: string[], harness: Harness = claudeCode, starts: string[] = []) {
  return runCli(args, {
    env,
    // Past the racy window of files written just now: each source is vouched for by its signature.
    now: () => new Date(Date.now() + 10_000),
    harnesses: [harness],
    startIndexBuild: () => {
      starts.push('index');
      return process.pid;
    },
  });
}

const at = (minute: number, s: number): string => new Date(Date.UTC(2026, 4, 1, 9, minute, s)).toISOString();

function session(id: string, minute: number, words: string[]): Transcript {
  return {
    meta: { id, timestamp: at(minute, 0), cwd: '/home/dev/shop', title: `session ${id.slice(0, 2)}` },
    messages: words.flatMap((w, i) => [
      {
        role: 'user' as const,
        timestamp: at(minute, 2 * i + 1),
        content: [{ type: 'text' as const, text: `please look at ${w}` }],
      },
      {
        role: 'assistant' as const,
        timestamp: at(minute, 2 * i + 2),
        content: [{ type: 'text' as const, text: `done with ${w}` }],
      },
    ]),
  };
}

const id = (n: number) => `${String(n).repeat(8)}-0000-4000-8000-000000000000`;

/** A user line, as Claude Code appends one. */
function userLine(sessionId: string, uuid: number, text: string, timestamp: string): string {
  return `${JSON.stringify({
    parentUuid: null,
    isSidechain: false,
    type: 'user',
    sessionId,
    cwd: '/home/dev/shop',
    message: { role: 'user', content: text },
    uuid: `00000000-0000-4000-a000-${String(uuid).padStart(12, '0')}`,
    timestamp,
  })}\n`;
}

/** Write `text` beside `file` and rename it over: a replacement, as an editor saves. */
function replace(file: string, text: string): void {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

/** The sessions (by their first two characters) of a search's JSON hits. */
function sessionsOf(out: { code: number; stdout: string; stderr: string }): string[] {
  expect(out.code, out.stderr).toBe(0);
  const ids = (JSON.parse(out.stdout) as SearchRow[]).map((r) => r.id.slice(0, 2));
  return [...new Set(ids)].sort();
}

describe('a session that changes while the index is built', () => {
  it('is read as it is then, and the next search sees the change', async () => {
    const store = claudeCode.store!(env);
    const files = new Map<number, string>();
    for (let n = 1; n <= 5; n++) {
      const words = ['orchard', n === 2 || n === 4 ? 'lanternfish' : 'pebble', 'quiet'];
      files.set(n, (await store.save!(session(id(n), n, words))).locator);
    }
    const file = (n: number) => files.get(n)!;
    // What sessions 3 and 5 are replaced by: no `orchard` any more, a new word, and as many messages
    // at the same times, so that a listing says the same of it.
    const replacement = (n: number) => {
      const other = session(id(n), n, ['marmalade', 'pebble', 'quiet']);
      return claudeCode.text.render(claudeCode.codec.fromCommon(other));
    };
    // The bytes before the first line that names `lanternfish` (its message and all after it).
    const beforeLanternfish = (n: number) => {
      const text = readFileSync(file(n), 'utf8');
      return Buffer.byteLength(text.slice(0, text.lastIndexOf('\n', text.indexOf('lanternfish')) + 1));
    };
    const changes = new Map<string, Change>([
      // After its read: a new line it was not read with.
      [
        id(1),
        { after: () => appendFileSync(file(1), userLine(id(1), 1, 'and the latecomer too', at(1, 30))) },
      ],
      // Before its read: cut in the middle of a line (a crash while writing).
      [id(2), { before: () => truncateSync(file(2), beforeLanternfish(2) + 20) }],
      // Before its read: replaced whole.
      [id(3), { before: () => replace(file(3), replacement(3)) }],
      // After its read: a word rewritten in place (a listing says the same of it); and replaced whole.
      [
        id(4),
        {
          after: () =>
            writeFileSync(file(4), readFileSync(file(4), 'utf8').replaceAll('lanternfish', 'swordfishes')),
        },
      ],
      [id(5), { after: () => replace(file(5), replacement(5)) }],
    ]);

    const first = await txcript(['search', '--json', 'orchard'], changing(changes));
    expect(changes.size).toBe(0);
    // As read: 3 was replaced before its read (no `orchard` left); 5 after it.
    expect(sessionsOf(first)).toEqual(['11', '22', '44', '55']);

    // The next searches see every change, the ones made after a read included.
    expect(sessionsOf(await txcript(['search', '--json', 'orchard']))).toEqual(['11', '22', '44']);
    expect(sessionsOf(await txcript(['search', '--json', 'latecomer']))).toEqual(['11']);
    expect(sessionsOf(await txcript(['search', '--json', 'marmalade']))).toEqual(['33', '55']);
    // 2 lost its `lanternfish` lines before the read; 4 had it rewritten after.
    expect(sessionsOf(await txcript(['search', '--json', 'lanternfish']))).toEqual([]);
    expect(sessionsOf(await txcript(['search', '--json', 'swordfishes']))).toEqual(['44']);
    const index = await txcript(['index']);
    expect(index.stdout).toMatch(/^5 sessions indexed \(0 read now, 0 gone\)/);
  });
});

describe('a session that changes while a first search scans', () => {
  it('ends well when a session vanishes or is cut, and the next search sees the changes', async () => {
    // More than a search indexes inline: the first search answers from a scan.
    const bytes = generateClaudeProjects(root(), { sessions: 40, projects: 2, resultLines: 40 });
    expect(bytes).toBeGreaterThan(INLINE_REFRESH_BYTES);
    const listed = await txcript(['list', '--json', '--no-cache']);
    const ids = (JSON.parse(listed.stdout) as Array<{ id: string; locator: string }>).map((s) => ({
      id: s.id,
      file: s.locator,
    }));
    expect(ids).toHaveLength(40);
    const [gone, cut, grown] = [ids[3]!, ids[7]!, ids[11]!];
    for (const s of [gone, cut, grown])
      appendFileSync(s.file, userLine(s.id, 9, 'check the zeppelin gauge', at(30, 0)));
    const size = readFileSync(cut.file).length;
    const changes = new Map<string, Change>([
      [gone.id, { before: () => rmSync(gone.file) }],
      // Mid-way through its planted line: that line is gone, its start is a broken record.
      [cut.id, { before: () => truncateSync(cut.file, size - 40) }],
      [
        grown.id,
        {
          after: () => appendFileSync(grown.file, userLine(grown.id, 10, 'and a second zeppelin', at(31, 0))),
        },
      ],
    ]);
    const starts: string[] = [];
    const first = await txcript(['search', '--json', 'zeppelin'], changing(changes), starts);
    expect(changes.size).toBe(0);
    expect(starts).toEqual(['index']);
    expect(first.stderr).toContain(gone.id);
    const short = (s: { id: string }) => s.id.slice(0, 2);
    expect(sessionsOf(first)).toEqual([short(grown)]);
    const firstHits = JSON.parse(first.stdout) as SearchRow[];
    expect(firstHits).toHaveLength(1);

    // The background build, then the next search: the second line of `grown` is there too.
    expect((await txcript(['index'])).code).toBe(0);
    const next = await txcript(['search', '--json', 'zeppelin']);
    expect(sessionsOf(next)).toEqual([short(grown)]);
    expect((JSON.parse(next.stdout) as SearchRow[]).map((r) => r.ref).sort()).toHaveLength(2);
  });
});
