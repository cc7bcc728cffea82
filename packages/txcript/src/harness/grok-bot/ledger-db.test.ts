import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LedgerEntry } from '@sendbox/protocol';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  LedgerError,
  openLedgerForWrite,
  openLedgerReadOnly,
  readLedgerFile,
  readLedgerSummary,
} from './ledger-db.ts';

let dir: string;

const sha256 = async (path: string): Promise<string> =>
  createHash('sha256')
    .update(await readFile(path))
    .digest('hex');

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'grok-ledger-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const msg = (id: string, content: string, role: 'user' | 'assistant' = 'user'): LedgerEntry => ({
  id,
  kind: 'message',
  role,
  content,
  timestampMs: 1_788_485_400_000,
});

function looseLedger(path: string, rows: [number, string, string][], ddl?: string): void {
  const db = new Database(path);
  db.exec(
    ddl ?? 'CREATE TABLE transcript_entries (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, entry TEXT NOT NULL)',
  );
  const ins = db.prepare('INSERT INTO transcript_entries (seq, id, entry) VALUES (?, ?, ?)');
  for (const r of rows) ins.run(...r);
  db.close();
}

describe('ledger db: writing', () => {
  it('creates the canonical DDL, WAL, busy timeout, file 0600 and new parent folders 0700 (C11)', async () => {
    const path = join(dir, 'agents', 'a1', 'store.db');
    const ledger = openLedgerForWrite(path);
    ledger.close();
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, 'agents', 'a1'))).mode & 0o777).toBe(0o700);
    expect((await stat(join(dir, 'agents'))).mode & 0o777).toBe(0o700);
    const db = new Database(path, { readonly: true });
    const sql = (name: string): string =>
      (db.prepare('SELECT sql FROM sqlite_master WHERE name = ?').get(name) as { sql: string }).sql;
    expect(sql('kv')).toMatch(/STRICT/);
    expect(sql('blobs')).toMatch(/data BLOB NOT NULL\s*\)\s*STRICT/);
    expect(sql('transcript_entries')).toMatch(/id TEXT NOT NULL UNIQUE[\s\S]*STRICT/);
    expect(sql('idx_transcript_window')).toMatch(/!= 'tool-call'[\s\S]*branched'\), 0\) != 1/);
    expect(sql('idx_transcript_branched')).toMatch(/branched'\), 0\) = 1/);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
    const again = openLedgerForWrite(path);
    expect(again.countEntries()).toBe(0);
    again.close();
  });

  it('a writer that cannot get the lock fails with SQLITE_BUSY naming the path', () => {
    const path = join(dir, 'store.db');
    openLedgerForWrite(path).close();
    const holder = new Database(path);
    holder.exec('BEGIN IMMEDIATE');
    try {
      const w = openLedgerForWrite(path, { busyTimeoutMs: 20 });
      try {
        expect(() => w.appendEntry(msg('a', 'x'))).toThrow(new RegExp(`${path}: .*locked.*SQLITE_BUSY`));
      } finally {
        w.close();
      }
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
  });

  it('appends in one transaction and returns seqs; a bad or duplicate entry writes nothing', () => {
    const path = join(dir, 'store.db');
    const ledger = openLedgerForWrite(path);
    expect(ledger.appendEntries([msg('t0u', 'hi'), msg('t0a0', 'yo', 'assistant')])).toEqual([1, 2]);
    expect(ledger.appendEntry(msg('t1u', 'again'))).toBe(3);
    expect(() => ledger.appendEntries([msg('t2u', 'ok'), msg('t0u', 'dup')])).toThrow(
      /id "t0u" already exists/,
    );
    const bad = {
      id: 'x',
      kind: 'message',
      role: 'robot',
      content: 'c',
      timestampMs: 1,
    } as unknown as LedgerEntry;
    expect(() => ledger.appendEntries([msg('t3u', 'ok'), bad])).toThrow(
      /entry 1 \(id x\) is not a valid ledger entry: role/,
    );
    expect(ledger.countEntries()).toBe(3);
    expect(ledger.readEntriesAfter(1).rows.map((r) => [r.seq, r.id])).toEqual([
      [2, 't0a0'],
      [3, 't1u'],
    ]);
    expect(ledger.lastEntry()).toMatchObject({ seq: 3, entry: { content: 'again' } });
    ledger.close();
  });

  it('stores and reads kv values as JSON', () => {
    const ledger = openLedgerForWrite(join(dir, 'store.db'));
    expect(ledger.getKv('unreadState')).toBeUndefined();
    ledger.setKv('unreadState', { lastActivityAt: 5, unreadCount: 0 });
    ledger.setKv('unreadState', { lastActivityAt: 6, unreadCount: 1 });
    expect(ledger.getKv('unreadState')).toEqual({ lastActivityAt: 6, unreadCount: 1 });
    ledger.close();
  });
});

describe('ledger db: reading', () => {
  it('reads rows ordered by seq and never changes the file', async () => {
    const path = join(dir, 'store.db');
    const w = openLedgerForWrite(path);
    w.appendEntries([msg('a', '1'), msg('b', '2')]);
    w.close();
    const before = await sha256(path);
    const read = readLedgerFile(path);
    expect(read.rows.map((r) => [r.seq, r.id, r.entry.kind])).toEqual([
      [1, 'a', 'message'],
      [2, 'b', 'message'],
    ]);
    expect(await sha256(path)).toBe(before);
  });

  it('tolerates the loose txcript DDL and a missing table (C11)', () => {
    const loose = join(dir, 'loose.db');
    looseLedger(loose, [[5, 't0u', JSON.stringify(msg('t0u', 'hi'))]]);
    expect(readLedgerFile(loose).rows).toMatchObject([{ seq: 5, id: 't0u' }]);
    const noTable = join(dir, 'empty.db');
    new Database(noTable).exec('CREATE TABLE other (x)');
    const reader = openLedgerReadOnly(noTable);
    expect(reader.readLedgerEntries()).toEqual({ rows: [], warnings: [] });
    expect(reader.countEntries()).toBe(0);
    expect(reader.getKv('x')).toBeUndefined();
    reader.close();
    const noId = join(dir, 'noid.db');
    const db = new Database(noId);
    db.exec('CREATE TABLE transcript_entries (seq INTEGER PRIMARY KEY, entry TEXT)');
    db.prepare('INSERT INTO transcript_entries (entry) VALUES (?)').run(JSON.stringify(msg('z', 'x')));
    db.close();
    expect(readLedgerFile(noId).rows).toMatchObject([{ seq: 1, id: 'z' }]);
  });

  it('keeps unknown kinds; skips bad JSON and invalid shapes with a warning naming path and seq', () => {
    const path = join(dir, 'store.db');
    looseLedger(path, [
      [1, 'a', JSON.stringify(msg('a', 'ok'))],
      [2, 'b', '{not json'],
      [3, 'c', JSON.stringify({ id: 'c', kind: 'hologram', timestampMs: 1 })],
      [4, 'd', JSON.stringify({ id: 'd', kind: 'message', role: 'user', timestampMs: 1 })],
      [5, 'e', JSON.stringify({ id: 'e', kind: 'user-message', prompt: 'legacy' })],
      [6, 'f', JSON.stringify(msg('f', 'ok too'))],
    ]);
    const read = readLedgerFile(path);
    expect(read.rows.map((r) => r.id)).toEqual(['a', 'c', 'e', 'f']);
    expect(read.rows[1]!.entry).toEqual({ id: 'c', kind: 'hologram', timestampMs: 1 });
    expect(read.warnings.map((w) => [w.source, w.message.slice(0, 6)])).toEqual([
      [path, 'seq 2:'],
      [path, 'seq 4:'],
    ]);
    expect(read.warnings[1]!.message).toMatch(/content/);
  });

  it('reports a locked database clearly, naming the path', () => {
    const path = join(dir, 'store.db');
    looseLedger(path, [[1, 'a', JSON.stringify(msg('a', 'x'))]]);
    const holder = new Database(path);
    holder.exec('BEGIN EXCLUSIVE');
    holder.prepare('INSERT INTO transcript_entries (id, entry) VALUES (?, ?)').run('b', '{}');
    try {
      let error: unknown;
      try {
        readLedgerFile(path, { busyTimeoutMs: 20 });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(LedgerError);
      expect((error as LedgerError).code).toBe('SQLITE_BUSY');
      expect((error as Error).message).toContain(path);
      expect((error as Error).message).toMatch(/locked/);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
  });

  it('reports a corrupt file and a non-database clearly, naming the path', async () => {
    const random = join(dir, 'random.db');
    await writeFile(random, Buffer.from(Array.from({ length: 8192 }, (_, i) => (i * 7919 + 13) % 256)));
    expect(() => readLedgerFile(random)).toThrow(LedgerError);
    expect(() => readLedgerFile(random)).toThrow(new RegExp(`${random}.*(not a SQLite database|corrupt)`));
    const text = join(dir, 'notes.txt');
    await writeFile(text, 'these are notes, not a database\n'.repeat(200));
    expect(() => readLedgerFile(text)).toThrow(/not a SQLite database \(SQLITE_NOTADB\)/);
    expect(() => readLedgerFile(join(dir, 'missing.db'))).toThrow(/missing\.db: cannot open/);
  });

  it('a corrupted page inside a real database is reported as corrupt', async () => {
    const path = join(dir, 'store.db');
    const w = openLedgerForWrite(path);
    w.appendEntries(Array.from({ length: 200 }, (_, i) => msg(`m${i}`, 'x'.repeat(500))));
    w.close();
    const bytes = await readFile(path);
    for (let i = 4096 + 8; i < bytes.length; i += 3) bytes[i] = 0xa5;
    await writeFile(path, bytes);
    expect(() => readLedgerFile(path)).toThrow(new RegExp(`${path}.*(corrupt|not a SQLite database)`));
  });
});

describe('ledger db: summary for listing', () => {
  it('counts rows and reads the last time and unreadState, for canonical, loose and table-less files', () => {
    const path = join(dir, 'store.db');
    const w = openLedgerForWrite(path);
    w.appendEntries([msg('a', '1'), { ...msg('b', '2'), timestampMs: 1_788_485_409_000 }]);
    w.setKv('unreadState', { lastActivityAt: 42 });
    w.close();
    expect(readLedgerSummary(path)).toEqual({
      count: 2,
      messages: 2,
      lastTimestampMs: 1_788_485_409_000,
      unreadState: { lastActivityAt: 42 },
    });
    const loose = join(dir, 'loose.db');
    looseLedger(loose, [[1, 'a', JSON.stringify(msg('a', '1'))]]);
    expect(readLedgerSummary(loose)).toEqual({ count: 1, messages: 1, lastTimestampMs: 1_788_485_400_000 });
    const none = join(dir, 'none.db');
    new Database(none).exec('CREATE TABLE other (x)');
    expect(readLedgerSummary(none)).toEqual({ count: 0, messages: 0 });
    const text = join(dir, 'text.db');
    writeFileSync(text, 'not a database at all\n'.repeat(100));
    expect(() => readLedgerSummary(text)).toThrow(/not a SQLite database/);
  });

  it('reads a closed WAL ledger from a copy, leaving no -wal or -shm file behind', async () => {
    const path = join(dir, 'store.db');
    const w = openLedgerForWrite(path);
    w.appendEntries([msg('a', '1'), msg('b', '2')]);
    w.close();
    const before = await sha256(path);
    expect(readLedgerSummary(path).count).toBe(2);
    await expect(stat(`${path}-wal`)).rejects.toThrow(/ENOENT/);
    await expect(stat(`${path}-shm`)).rejects.toThrow(/ENOENT/);
    expect(await sha256(path)).toBe(before);
  });

  it('reads the first entries on request from the same copy, still leaving no sidecar', async () => {
    const path = join(dir, 'store.db');
    const w = openLedgerForWrite(path);
    w.appendEntries([msg('a', 'first'), msg('b', 'second'), msg('c', 'third')]);
    w.close();
    expect(readLedgerSummary(path).first).toBeUndefined();
    const summary = readLedgerSummary(path, { firstEntries: 2 });
    expect(summary.count).toBe(3);
    expect(summary.first?.map((r) => r.id)).toEqual(['a', 'b']);
    await expect(stat(`${path}-wal`)).rejects.toThrow(/ENOENT/);
    await expect(stat(`${path}-shm`)).rejects.toThrow(/ENOENT/);
    const held = openLedgerForWrite(path);
    try {
      held.appendEntries([msg('d', 'fourth')]);
      expect(readLedgerSummary(path, { firstEntries: 1 })).toMatchObject({ count: 4, first: [{ id: 'a' }] });
    } finally {
      held.close();
    }
  });

  it('sees commits still in the WAL of a ledger a writer holds open', () => {
    const path = join(dir, 'store.db');
    const w = openLedgerForWrite(path);
    try {
      w.appendEntries([msg('a', '1')]);
      w.appendEntries([{ ...msg('b', '2'), timestampMs: 1_788_485_409_000 }]);
      // The main file alone would say one row or none: the rows are in store.db-wal.
      expect(readLedgerSummary(path)).toMatchObject({ count: 2, lastTimestampMs: 1_788_485_409_000 });
    } finally {
      w.close();
    }
  });
});
