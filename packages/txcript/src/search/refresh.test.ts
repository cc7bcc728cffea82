/**
 * The index keeps up by itself: only new or changed sources are read, gone
 * ones are forgotten, a source inside the racy window is read again, and a
 * damaged or old index file is rebuilt with a note.
 */
import {
  appendFileSync,
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createContext } from '../cli/context.ts';
import {
  codingSession,
  searchTree,
  writeSimple,
  type SearchTree,
} from '../../test/fixtures/search/generate.ts';
import { SessionIndex } from './engine.ts';
import { refreshIndex, sourceSignature } from './refresh.ts';
import { findHits } from './hits.ts';
import type { SearchRow } from './kinds.ts';
import { SearchIndex, indexFile } from './index-db.ts';
import type { Harness } from '../harness/types.ts';
import { parseQuery } from './query.ts';

let tree: SearchTree;
let stderr: string;
let clock: number;

function testContext(harnesses: readonly Harness[] = tree.harnesses) {
  return createContext({
    stdout: { write: () => true },
    stderr: { write: (s: string) => (stderr += s) },
    readStdin: () => Promise.resolve(''),
    env: tree.env,
    now: () => new Date(clock),
    harnesses,
  });
}

function sessionIndex(harnesses: readonly Harness[] = tree.harnesses): SessionIndex {
  return new SessionIndex(testContext(harnesses));
}

/** Refresh, then the refs of the hits for `q` and what the refresh read. */
async function searchFresh(q: string): Promise<{ refs: string[]; read: number; removed: number }> {
  const index = sessionIndex();
  try {
    const refs = await index.use(undefined, (i) =>
      findHits(i, parseQuery(q), { limit: 50 })
        .map((h) => h.ref)
        .sort(),
    );
    return { refs, read: index.lastStats!.read, removed: index.lastStats!.removed };
  } finally {
    index.close();
  }
}

function note(id: string, body: string, start = '2026-09-01T10:00:00Z'): string {
  return writeSimple(tree, codingSession(id, { start, prompt: `about ${id}`, answer: body }));
}

beforeEach(async () => {
  tree = searchTree(await mkdtemp(join(tmpdir(), 'txcript-index-')));
  stderr = '';
  clock = Date.now() + 10_000;
  note('one', 'alpha quartz');
  note('two', 'beta quartz');
});

afterEach(async () => {
  await rm(tree.home, { recursive: true, force: true });
});

describe('incremental indexing', () => {
  it('reads every source once, then only what is new', async () => {
    expect(await searchFresh('quartz')).toMatchObject({ read: 2, refs: ['one#2', 'two#2'] });
    expect(await searchFresh('quartz')).toMatchObject({ read: 0 });
    note('three', 'gamma quartz');
    const after = await searchFresh('quartz');
    expect(after.read).toBe(1);
    expect(after.refs).toContain('three#2');
    expect(stderr).toBe('');
  });

  it('reads a changed file again and forgets what it said before', async () => {
    await searchFresh('quartz');
    note('two', 'beta obsidian');
    const after = await searchFresh('obsidian');
    expect(after).toMatchObject({ read: 1, refs: ['two#2'] });
    expect((await searchFresh('quartz')).refs).toEqual(['one#2']);
  });

  it('forgets a deleted session', async () => {
    await searchFresh('quartz');
    rmSync(join(tree.simpleDir, 'two.json'));
    expect(await searchFresh('quartz')).toMatchObject({ read: 0, removed: 1, refs: ['one#2'] });
  });

  it('reads a source changed within the racy window again next time', async () => {
    clock = Date.now();
    expect((await searchFresh('quartz')).read).toBe(2);
    expect((await searchFresh('quartz')).read).toBe(2);
    clock = Date.now() + 10_000;
    await searchFresh('quartz');
    expect((await searchFresh('quartz')).read).toBe(0);
  });

  it('sees a change that keeps the size and the time (ctime and inode are in the signature)', async () => {
    const file = note('four', 'delta quartz');
    await searchFresh('quartz');
    const mtime = new Date('2026-09-01T00:00:00Z');
    utimesSync(file, mtime, mtime);
    await searchFresh('quartz');
    writeFileSync(file, readFileSync(file, 'utf8').replace('delta', 'omega'));
    utimesSync(file, mtime, mtime);
    expect(await searchFresh('omega')).toMatchObject({ read: 1, refs: ['four#2'] });
  });
});

describe('one index kept open (the MCP server, the picker)', () => {
  /** The tree's harnesses, with the Simple store counting its calls and able to hold a load back. */
  function countedIndex(hold?: (load: number) => Promise<void> | undefined): {
    index: SessionIndex;
    calls: { discover: number; load: number };
  } {
    const calls = { discover: 0, load: 0 };
    const harnesses = tree.harnesses.map((harness): Harness => {
      if (harness.id !== 'simple') return harness;
      return {
        ...harness,
        aliases: ['plain'],
        store: (env) => {
          const store = harness.store!(env);
          return {
            ...store,
            discover: (options) => (calls.discover++, store.discover(options)),
            load: async (id) => {
              const n = ++calls.load;
              await hold?.(n);
              return store.load(id);
            },
          };
        },
      };
    });
    return { index: sessionIndex(harnesses), calls };
  }
  const quartz = (i: SearchIndex) =>
    findHits(i, parseQuery('quartz'), { limit: 50 })
      .map((h) => h.ref)
      .sort();

  it('calls that arrive during a refresh wait for it instead of reading every source again', async () => {
    const { index, calls } = countedIndex();
    try {
      const answers = await Promise.all([
        index.use(undefined, quartz, 5_000),
        index.use(undefined, quartz, 5_000),
        index.use(undefined, quartz, 5_000),
      ]);
      expect(answers).toEqual([
        ['one#2', 'two#2'],
        ['one#2', 'two#2'],
        ['one#2', 'two#2'],
      ]);
      expect(calls).toEqual({ discover: 1, load: 2 });
    } finally {
      index.close();
    }
  });

  it('does not refresh one harness again within the age asked for (each keystroke of pick --from)', async () => {
    const { index, calls } = countedIndex();
    try {
      await index.use('simple', quartz, Infinity);
      await index.use('simple', quartz, Infinity);
      await index.use('simple', quartz, Infinity);
      expect(calls.discover).toBe(1);
      await index.use('simple', quartz, 0);
      expect(calls.discover).toBe(2);
    } finally {
      index.close();
    }
  });

  it('counts an alias and its harness id as one scope', async () => {
    const { index, calls } = countedIndex();
    try {
      await index.use('simple', quartz, Infinity);
      await index.use('plain', quartz, Infinity);
      expect(calls.discover).toBe(1);
    } finally {
      index.close();
    }
  });

  it('a call that waited for a refresh longer than the age it asks for refreshes again (a source written meanwhile)', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { index, calls } = countedIndex((n) => (n === 1 ? held : undefined));
    try {
      index.warm();
      await expect.poll(() => calls.load).toBe(1);
      note('three', 'gamma quartz');
      const waiting = index.use(undefined, quartz, 100);
      await new Promise((resolve) => setTimeout(resolve, 300));
      release();
      expect(await waiting).toEqual(['one#2', 'three#2', 'two#2']);
      expect(calls.discover).toBe(2);
    } finally {
      index.close();
    }
  });

  it('once stopped, runs no refresh: a call that was waiting fails instead of starting one', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { index, calls } = countedIndex((n) => (n === 1 ? held : undefined));
    index.warm();
    await expect.poll(() => calls.load).toBe(1);
    const waiting = index.use(undefined, quartz, 5_000);
    const stopped = index.stop();
    release();
    await stopped;
    await expect(waiting).rejects.toThrow(/abort/i);
    expect(calls.discover).toBe(1);
    await expect(index.use(undefined, quartz)).rejects.toThrow(/abort/i);
  });

  it('warms up in the background; stopped while reading a session, it keeps those stored before, says nothing', async () => {
    note('three', 'gamma quartz');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const { index, calls } = countedIndex((n) => (n === 2 ? held : undefined));
    index.warm();
    await expect.poll(() => calls.load).toBe(2);
    const stopped = index.stop();
    release();
    await stopped;
    expect(calls.load).toBe(2);
    // The first session was stored; the one being read when it stopped, and the next, were not.
    const kept = sessionIndex();
    try {
      await kept.use(undefined, () => undefined);
      expect(kept.lastStats!.read).toBe(2);
    } finally {
      kept.close();
    }
    expect(stderr).toBe('');
  });
});

describe('ranking a broad query', () => {
  it('ranks by BM25, or newest first once the index counts more matches than the bound', async () => {
    // "quartz" alone is a short message in "one"; "two" says it among many words (lower BM25).
    note('one', 'quartz');
    note('two', `quartz ${'filler words '.repeat(40)}`);
    const index = sessionIndex();
    try {
      const refs = (broadMatches?: number) =>
        index.use(
          undefined,
          (i) =>
            findHits(i, parseQuery('quartz'), {
              limit: 5,
              ...(broadMatches !== undefined ? { broadMatches } : {}),
            }).map((h) => h.ref),
          Infinity,
        );
      expect(await refs()).toEqual(['one#2', 'two#2']);
      // Over the bound: the last indexed first, whatever BM25 says.
      expect(await refs(1)).toEqual(['two#2', 'one#2']);
    } finally {
      index.close();
    }
  });
});

describe('a damaged or old index', () => {
  it('rebuilds a file that is not a database, with a note', async () => {
    await searchFresh('quartz');
    const file = indexFile(tree.env);
    rmSync(`${file}-wal`, { force: true });
    rmSync(`${file}-shm`, { force: true });
    writeFileSync(file, 'this is not sqlite at all, just garbage bytes '.repeat(200));
    const after = await searchFresh('quartz');
    expect(after).toMatchObject({ read: 2, refs: ['one#2', 'two#2'] });
    expect(stderr).toMatch(/txcript: note: the search index .* was rebuilt: it is damaged/);
  });

  it('rebuilds a file whose pages are damaged', async () => {
    await searchFresh('quartz');
    const file = indexFile(tree.env);
    // Fold the WAL into the file, then overwrite the pages after the first.
    const db = new Database(file);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    const { size } = statSync(file);
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.alloc(size - 4096, 0xab), 0, size - 4096, 4096);
    closeSync(fd);
    expect((await searchFresh('quartz')).refs).toEqual(['one#2', 'two#2']);
    expect(stderr).toMatch(/was rebuilt: it is damaged/);
  });

  it('rebuilds an index of another schema version, with a note', async () => {
    await searchFresh('quartz');
    const db = new Database(indexFile(tree.env));
    db.pragma('user_version = 999');
    db.close();
    expect(await searchFresh('quartz')).toMatchObject({ read: 2 });
    expect(stderr).toMatch(/made by another version of txcript \(schema 999/);
  });

  it('rebuilds an index of this version that lacks a table, with a note', async () => {
    await searchFresh('quartz');
    const db = new Database(indexFile(tree.env));
    db.exec('DROP TABLE sessions');
    db.close();
    expect(await searchFresh('quartz')).toMatchObject({ read: 2, refs: ['one#2', 'two#2'] });
    expect(stderr).toMatch(
      /was rebuilt: it is damaged \(its tables are not those of schema \d+ \(missing .*table sessions/,
    );
  });

  it('appending to a session is seen', async () => {
    await searchFresh('quartz');
    appendFileSync(join(tree.simpleDir, 'one.json'), '\n');
    expect((await searchFresh('quartz')).read).toBe(1);
  });
});

describe('another txcript writing the same index', () => {
  /** A second connection to the index file, as another txcript process has it. */
  function otherProcess(): Database.Database {
    const db = new Database(indexFile(tree.env));
    db.pragma('busy_timeout = 5000');
    return db;
  }

  it('a refresh waits for its write lock without blocking, then stores its sessions', async () => {
    await searchFresh('quartz');
    note('three', 'gamma quartz');
    const other = otherProcess();
    try {
      other.exec('BEGIN IMMEDIATE');
      // Released from a timer: a refresh that held the event loop in SQLite's wait would never see it.
      setTimeout(() => other.exec('COMMIT'), 700);
      const started = Date.now();
      expect(await searchFresh('quartz')).toMatchObject({ refs: ['one#2', 'three#2', 'two#2'], read: 1 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(600);
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
    }
  });

  it('a refresh that finds nothing changed takes no write lock (it does not wait for another writer)', async () => {
    await searchFresh('quartz');
    const other = otherProcess();
    try {
      other.exec('BEGIN IMMEDIATE');
      expect(await searchFresh('quartz')).toMatchObject({ refs: ['one#2', 'two#2'], read: 0, removed: 0 });
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
  });

  it('past its wait, fails with what holds it and what to do', async () => {
    await searchFresh('quartz');
    const index = SearchIndex.open(indexFile(tree.env), () => undefined);
    const other = otherProcess();
    try {
      other.exec('BEGIN IMMEDIATE');
      await expect(index.batched(() => index.writable(300))).rejects.toThrow(
        /the search index is being written by another process \(waited 0 s\)/,
      );
    } finally {
      other.exec('ROLLBACK');
      other.close();
      index.close();
    }
  });

  it('does not store again a session another txcript stored meanwhile', async () => {
    await searchFresh('quartz');
    note('three', 'gamma quartz');
    const index = SearchIndex.open(indexFile(tree.env), () => undefined);
    const puts: string[] = [];
    const put = index.put.bind(index);
    index.put = (facts, rows) => (puts.push(facts.id), put(facts, rows));
    // The other txcript: a refresh of its own that finishes first.
    await searchFresh('quartz');
    try {
      // Its list of sessions was read before the other stored "three": stale, yet not put again.
      const known = index.sessions().filter((s) => s.id !== 'three');
      index.sessions = () => known;
      expect(await refreshIndex(testContext(), index, undefined)).toMatchObject({ read: 1 });
      expect(puts).toEqual([]);
    } finally {
      index.close();
    }
  });
});

describe('batched writes', () => {
  const facts = (id: string) => ({ harness: 'codex', id, locator: `/tmp/${id}`, sig: null });

  it('keep what committed and roll the rest back when the refresh fails', async () => {
    const index = SearchIndex.inMemory();
    try {
      await expect(
        index.batched(() => {
          index.put(facts('a'), []);
          return Promise.reject(new Error('the store failed'));
        }),
      ).rejects.toThrow('the store failed');
      expect(index.db.inTransaction).toBe(false);
      expect(index.sessions()).toEqual([]);
      await index.batched(() => {
        index.put(facts('b'), []);
        return Promise.resolve();
      });
      expect(index.db.inTransaction).toBe(false);
      expect(index.sessions().map((s) => s.id)).toEqual(['b']);
    } finally {
      index.close();
    }
  });

  it('take in a refresh started meanwhile, and never keep half a session', async () => {
    const index = SearchIndex.inMemory();
    try {
      const texts = { title: '', user: {}, assistant: '', thinking: '', tool_input: '', tool_output: '' };
      const unbindable = { message: 1, range: '1', texts } as unknown as SearchRow;
      await index.batched(async () => {
        index.put(facts('a'), []);
        await expect(
          index.batched(() => {
            index.put(facts('b'), [unbindable]);
            return Promise.resolve();
          }),
        ).rejects.toThrow();
        index.put(facts('c'), []);
      });
      // The failed put took the open batch (a) with it, and nothing of b; c committed after.
      expect(index.sessions().map((s) => s.id)).toEqual(['c']);
      // Stored again later, a's words are in the vocabulary again.
      const row = (user: string) => ({ message: 1, range: '1', texts: { ...texts, user } });
      await expect(
        index.batched(() => {
          index.put(facts('d'), [row('zanzibar')]);
          return Promise.reject(new Error('the store failed'));
        }),
      ).rejects.toThrow();
      index.put(facts('d'), [row('zanzibar')]);
      expect(index.wordMatch('zanzibar')).toEqual({ expression: '("zanzibar")', exact: true });
    } finally {
      index.close();
    }
  });
});

describe('the signature of a folder source (a Grok Bot agent with a ledger only)', () => {
  it("follows its ledger, not the folder: a reader's empty WAL and shared-memory file change nothing", () => {
    const agent = join(tree.home, 'agent-folder');
    mkdirSync(agent);
    writeFileSync(join(agent, 'store.db'), 'ledger v1');
    const old = Date.now() - 10_000;
    utimesSync(join(agent, 'store.db'), old / 1000, old / 1000);
    const summary = { id: 'a', harness: 'grok_bot', locator: agent, messageCount: 3 };
    const now = Date.now() + 10_000;
    const before = sourceSignature(summary, now);
    expect(before).not.toBeNull();
    // What SQLite makes beside a database it opens in WAL mode, empty, which changes the folder's times.
    writeFileSync(join(agent, 'store.db-wal'), '');
    writeFileSync(join(agent, 'store.db-shm'), 'x');
    expect(sourceSignature(summary, now)).toBe(before);
    // Frames in the WAL are a change.
    writeFileSync(join(agent, 'store.db-wal'), 'frame');
    expect(sourceSignature(summary, now)).not.toBe(before);
  });
});
