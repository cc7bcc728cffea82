/**
 * The search index: one SQLite database (FTS5, trigram tokenizer) in the
 * txcript cache folder, folder 0700 and file 0600 (titles and text are user
 * data), or in memory for `--no-index`.
 *
 * `sessions` holds one row per session (a source file can hold several: a
 * Claude Code parent and its inline sidechains) with the stat signature its
 * source was read at; `messages` one FTS row per searchable message, its rowid
 * `session key << 24 | message number`, so a session's rows are one rowid
 * range (deleted without a scan); `words` the same messages as words, and
 * `vocabulary` every word ever indexed (words.ts). A file of another schema
 * version, or one SQLite finds damaged, is deleted and built again; the
 * caller is told why.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { CliError } from '../cli/errors.ts';
import { cacheFileFor } from '../harness/summary-cache-file.ts';
import { KINDS, type Kind, type SearchRow } from './kinds.ts';
import { DF_BOUND, type IndexTotals, documentFrequency } from './ranking.ts';
import { MAX_WORDS_PER_TERM, anyOf, collectWords, wordPieces, wordText } from './words.ts';

/** Bumped whenever the schema or what is stored changes: an older file is rebuilt. */
export const INDEX_VERSION = 5;

const ROW_BITS = 24n;
const MAX_ROWS = (1 << 24) - 1;

const SCOPE = 'sessions of every harness';

/** `<cache dir>/search-v<version>-<hash>.sqlite`: one index for every harness of this user. */
export function indexFile(env: NodeJS.ProcessEnv, version = INDEX_VERSION): string {
  return cacheFileFor(env, 'search', version, SCOPE, 'sqlite');
}

/** Delete the index files earlier versions of txcript left (their names differ from this one's); `note` says which. */
export function removeOlderIndexFiles(env: NodeJS.ProcessEnv, note: (text: string) => void): void {
  for (let version = 1; version < INDEX_VERSION; version++) {
    const file = indexFile(env, version);
    if (!existsSync(file)) continue;
    try {
      removeFiles(file);
      note(`removed ${file}, the search index of an older txcript (schema ${version}, now ${INDEX_VERSION})`);
    } catch (err) {
      note(
        `cannot remove ${file}, the search index of an older txcript (${err instanceof Error ? err.message : String(err)}); delete it by hand`,
      );
    }
  }
}

export interface IndexedSession {
  key: number;
  harness: string;
  id: string;
  locator: string;
  /** null: not to be trusted next time (a racy or unreadable source). */
  sig: string | null;
  title: string | null;
  cwd: string | null;
  lastActivity: string | null;
  lastActivityMs: number | null;
  messageCount: number | null;
  parentId: string | null;
}

export interface SessionFacts {
  harness: string;
  id: string;
  locator: string;
  sig: string | null;
  title?: string;
  cwd?: string;
  lastActivity?: string;
  messageCount?: number;
  parentId?: string;
}

/** A damaged file (SQLITE_CORRUPT, SQLITE_NOTADB): rebuilt rather than reported. */
export function isCorruption(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_CORRUPT') || code.startsWith('SQLITE_NOTADB'));
}

const SCHEMA = `
CREATE TABLE sessions (
  key INTEGER PRIMARY KEY,
  harness TEXT NOT NULL,
  id TEXT NOT NULL,
  locator TEXT NOT NULL,
  sig TEXT,
  title TEXT,
  cwd TEXT,
  last_activity TEXT,
  last_activity_ms INTEGER,
  message_count INTEGER,
  parent_id TEXT,
  UNIQUE (harness, locator, id)
);
CREATE INDEX sessions_by_activity ON sessions (last_activity_ms);
CREATE VIRTUAL TABLE messages USING fts5(${KINDS.join(', ')}, ref UNINDEXED, tokenize = 'trigram');
CREATE VIRTUAL TABLE words USING fts5(text, tokenize = 'ascii', content = '', contentless_delete = 1, detail = none);
CREATE TABLE vocabulary (word TEXT PRIMARY KEY) WITHOUT ROWID;
`;

/** The vocabulary's words a piece of a term lies in, by where it lies (words.ts). */
const VOCABULARY_MATCH = {
  inside: 'instr(word, @piece) > 0',
  start: 'substr(word, 1, length(@piece)) = @piece',
  end: 'substr(word, -length(@piece)) = @piece',
} as const;

export interface WordMatch {
  /** An FTS5 expression over `words`. */
  expression: string;
  /** Whether every message it matches holds the term (else they are candidates to check). */
  exact: boolean;
}

/** Past this many, the words known to be in the vocabulary are forgotten (they are only a shortcut). */
const KNOWN_WORDS = 1_000_000;

/**
 * FTS5 keeps a transaction's new rows in memory up to this many bytes per
 * table before it writes them as a segment (default 1 MiB); with `batched`
 * writes, fewer and larger segments mean less merging later.
 */
const PENDING_BYTES = 64 * 2 ** 20;
/** A batch of writes commits past this many message rows, or after this long holding the write lock. */
const BATCH_ROWS = 20_000;
const BATCH_MS = 1_000;
/**
 * Waiting for the write lock another txcript holds (one indexing the same sessions): SQLite's
 * own wait, this long at a time so the event loop runs between tries, for at most LOCK_WAIT_MS.
 */
const LOCK_TRY_MS = 200;
export const LOCK_WAIT_MS = 60_000;
const BUSY_TIMEOUT_MS = 5_000;

function configure(db: Database.Database): void {
  for (const table of ['messages', 'words']) {
    db.exec(`INSERT INTO ${table} (${table}, rank) VALUES ('hashsize', ${PENDING_BYTES})`);
  }
}

function removeFiles(file: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${file}${suffix}`, { force: true });
}

export class SearchIndex {
  /**
   * Document frequencies counted since the index last changed (the MCP server and the picker ask
   * again): cleared by a write here, and when the totals show another process wrote.
   */
  private readonly frequencies = new Map<string, number>();
  private frequenciesOf = '';
  /** Words this process saw in the vocabulary or put there: not inserted again. */
  private readonly knownWords = new Set<string>();

  private constructor(readonly db: Database.Database) {}

  /**
   * The collection a scan's index in memory stands for (search/scan.ts): its
   * messages and trigrams, and each phrase's messages, as counted over the
   * sessions the scan read. BM25 weighs by these rather than by this index's
   * own counts, since it holds the matching messages alone.
   */
  collection: { totals: IndexTotals; frequency(phrase: string): number } | undefined;

  /** Messages holding `phrase`, up to DF_BOUND (ranking.ts), in the index of these totals. */
  frequency(phrase: string, totals: IndexTotals): number {
    const of = `${totals.rows}/${totals.tokens}`;
    if (of !== this.frequenciesOf) {
      this.frequencies.clear();
      this.frequenciesOf = of;
    }
    let n = this.frequencies.get(phrase);
    if (n === undefined) {
      const words = this.wordMatch(phrase);
      n =
        words === null
          ? 0
          : words?.exact === true
            ? (this.db
                .prepare(
                  'SELECT count(*) FROM (SELECT 1 FROM words WHERE words MATCH ? ORDER BY rowid DESC LIMIT ?)',
                )
                .pluck()
                .get(words.expression, DF_BOUND) as number)
            : documentFrequency(this.db, phrase);
      this.frequencies.set(phrase, n);
    }
    return n;
  }

  /**
   * The word index's expression for the messages that may hold `term`
   * (lower-cased), and whether exactly those hold it (else a message found
   * must be checked): undefined when the word index cannot narrow by it
   * (words.ts), null when no message holds it.
   */
  wordMatch(term: string): WordMatch | null | undefined {
    const pieces = wordPieces(term);
    const all: string[] = [];
    for (const { text, place } of pieces) {
      if (place === 'whole') {
        all.push(`"${text}"`);
        continue;
      }
      const words = this.db
        .prepare(`SELECT word FROM vocabulary WHERE ${VOCABULARY_MATCH[place]} LIMIT @n`)
        .pluck()
        .all({ piece: text, n: MAX_WORDS_PER_TERM + 1 }) as string[];
      if (words.length === 0) return null;
      if (words.length <= MAX_WORDS_PER_TERM) all.push(anyOf(words));
    }
    if (all.length === 0) return undefined;
    return { expression: all.join(' AND '), exact: pieces.length === 1 && pieces[0]!.place === 'inside' };
  }

  /** An index that lives as long as the process (`--no-index`). */
  static inMemory(): SearchIndex {
    const db = new Database(':memory:');
    db.exec(SCHEMA);
    configure(db);
    return new SearchIndex(db);
  }

  /**
   * Open (or create) the index at `file`. A file of another version or a
   * damaged one is replaced; `note` says which and why.
   */
  static open(file: string, note: (text: string) => void): SearchIndex {
    const dir = dirname(file);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    try {
      return SearchIndex.openExisting(file);
    } catch (err) {
      // Not a damaged index (a folder in its place, no permission): the caller says it cannot be used.
      if (!(err instanceof OldIndexError || err instanceof ForeignSchemaError || isCorruption(err)))
        throw err;
      const why =
        err instanceof OldIndexError
          ? err.message
          : `it is damaged (${err instanceof Error ? err.message : String(err)})`;
      note(`the search index ${file} was rebuilt: ${why}`);
      removeFiles(file);
      return SearchIndex.openExisting(file);
    }
  }

  private static openExisting(file: string): SearchIndex {
    // Created 0600 before SQLite sees it; its -wal and -shm files take the same mode.
    closeSync(openSync(file, 'a', 0o600));
    chmodSync(file, 0o600);
    const db = new Database(file);
    try {
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      const version = db.pragma('user_version', { simple: true }) as number;
      const tables = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as {
        n: number;
      };
      if (tables.n === 0) {
        db.pragma('journal_mode = WAL');
        db.transaction(() => {
          db.exec(SCHEMA);
          configure(db);
          db.pragma(`user_version = ${INDEX_VERSION}`);
        })();
      } else if (version !== INDEX_VERSION) {
        throw new OldIndexError(
          `it was made by another version of txcript (schema ${version}, now ${INDEX_VERSION})`,
        );
      } else {
        // Damage deeper in the file shows as SQLITE_CORRUPT in a later read: see `isCorruption`.
        checkSchema(db);
        db.pragma('journal_mode = WAL');
      }
      db.pragma('synchronous = NORMAL');
      // FTS5 merges its segments through the page cache: 32 MiB (default 2) makes a first index faster.
      db.pragma('cache_size = -32768');
      return new SearchIndex(db);
    } catch (err) {
      db.close();
      throw err;
    }
  }

  close(): void {
    this.db.close();
  }

  private batch: { rows: number; since: number } | undefined;

  /**
   * Within `batched`: make sure its transaction is open, waiting (without
   * blocking the event loop) while another process holds the write lock, up
   * to `waitMs`; past that, a clear error. Call it before `put` and `remove`.
   */
  async writable(waitMs = LOCK_WAIT_MS): Promise<void> {
    if (this.batch === undefined || this.db.inTransaction) return;
    const deadline = Date.now() + waitMs;
    this.db.pragma(`busy_timeout = ${LOCK_TRY_MS}`);
    try {
      for (;;) {
        try {
          this.beginBatch(this.batch);
          return;
        } catch (err) {
          if ((err as { code?: unknown }).code !== 'SQLITE_BUSY') throw err;
          if (Date.now() >= deadline) {
            throw new CliError({
              what: `the search index is being written by another process (waited ${Math.round(waitMs / 1000)} s)`,
              where: this.db.name,
              todo: 'try again once the other txcript is done, or search with --no-index',
            });
          }
          await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
        }
      }
    } finally {
      this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  /** Open the next transaction of a batch. */
  private beginBatch(batch: { rows: number; since: number }): void {
    this.db.exec('BEGIN IMMEDIATE');
    batch.rows = 0;
    batch.since = Date.now();
  }

  /** The signature session `id` of `harness`'s source at `locator` was indexed at (null: none, or not vouched for). */
  indexedSignature(harness: string, locator: string, id: string): string | null {
    const row = this.db
      .prepare('SELECT sig FROM sessions WHERE harness = ? AND locator = ? AND id = ?')
      .get(harness, locator, id) as { sig: string | null } | undefined;
    return row?.sig ?? null;
  }

  /**
   * Run `write` with its puts grouped into transactions of many sessions (a
   * session is still stored whole or not at all), each holding the write
   * lock about a second at most, so another txcript waits less than its busy
   * timeout. What `write` stored before it failed is rolled back to the last
   * commit (with what a refresh that joined it stored since); the next
   * refresh reads those sources again.
   */
  async batched<T>(write: () => Promise<T>): Promise<T> {
    // A refresh started while another runs (the picker, the MCP server) joins its batch.
    if (this.batch !== undefined) return write();
    this.batch = { rows: 0, since: 0 };
    try {
      const result = await write();
      if (this.db.inTransaction) this.db.exec('COMMIT');
      return result;
    } catch (err) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      this.rolledBack();
      throw err;
    } finally {
      this.batch = undefined;
    }
  }

  /** After a rollback: the words put since the last commit are not in the vocabulary after all. */
  private rolledBack(): void {
    this.knownWords.clear();
    this.frequencies.clear();
  }

  sessions(harnesses?: readonly string[]): IndexedSession[] {
    const rows = this.db.prepare('SELECT * FROM sessions').all() as Array<Record<string, unknown>>;
    return rows.map(sessionFromRow).filter((s) => harnesses === undefined || harnesses.includes(s.harness));
  }

  /** Replace what is stored of one session source (facts and rows) in one transaction. */
  put(facts: SessionFacts, rows: readonly SearchRow[]): void {
    this.frequencies.clear();
    const at = facts.lastActivity === undefined ? NaN : Date.parse(facts.lastActivity);
    const store = () => {
      const existing = this.db
        .prepare('SELECT key FROM sessions WHERE harness = ? AND locator = ? AND id = ?')
        .get(facts.harness, facts.locator, facts.id) as { key: number } | undefined;
      if (existing !== undefined) this.deleteRows(existing.key);
      const values = [
        facts.sig,
        facts.title ?? null,
        facts.cwd ?? null,
        facts.lastActivity ?? null,
        Number.isNaN(at) ? null : at,
        facts.messageCount ?? null,
        facts.parentId ?? null,
      ];
      let key: number;
      if (existing === undefined) {
        const info = this.db
          .prepare(
            `INSERT INTO sessions (harness, locator, id, sig, title, cwd, last_activity, last_activity_ms, message_count, parent_id)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(facts.harness, facts.locator, facts.id, ...values);
        key = Number(info.lastInsertRowid);
      } else {
        key = existing.key;
        this.db
          .prepare(
            `UPDATE sessions SET sig = ?, title = ?, cwd = ?, last_activity = ?, last_activity_ms = ?,
             message_count = ?, parent_id = ? WHERE key = ?`,
          )
          .run(...values, key);
      }
      const insert = this.db.prepare(
        `INSERT INTO messages (rowid, ${KINDS.join(', ')}, ref) VALUES (?, ${KINDS.map(() => '?').join(', ')}, ?)`,
      );
      const insertWords = this.db.prepare('INSERT INTO words (rowid, text) VALUES (?, ?)');
      const seen = new Set<string>();
      for (const row of rows) {
        if (row.message > MAX_ROWS) break;
        const rowid = rowId(key, row.message);
        insert.run(rowid, ...KINDS.map((k) => row.texts[k]), row.range);
        const text = wordText(row.texts, KINDS);
        insertWords.run(rowid, text);
        collectWords(text, seen);
      }
      this.addWords(seen);
    };
    const batch = this.batch;
    if (batch === undefined) {
      try {
        // IMMEDIATE: take the write lock first (waiting up to busy_timeout for another txcript), rather
        // than fail when a read turns into a write after another process committed.
        this.db.transaction(store).immediate();
      } catch (err) {
        this.rolledBack();
        throw err;
      }
      return;
    }
    // (`writable` first waits for the lock without blocking; here SQLite's busy timeout does.)
    if (!this.db.inTransaction) this.beginBatch(batch);
    // No savepoint (FTS5 writes its pending rows out at each one): a failure rolls the whole batch back.
    try {
      store();
    } catch (err) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      this.rolledBack();
      throw err;
    }
    batch.rows += rows.length;
    if (batch.rows >= BATCH_ROWS || Date.now() - batch.since >= BATCH_MS) this.db.exec('COMMIT');
  }

  /** Forget sessions (their facts and rows). */
  remove(keys: readonly number[]): void {
    if (keys.length === 0) return;
    this.frequencies.clear();
    const run = () => {
      const del = this.db.prepare('DELETE FROM sessions WHERE key = ?');
      for (const key of keys) {
        this.deleteRows(key);
        del.run(key);
      }
    };
    // Within a batch, part of its transaction.
    if (this.db.inTransaction) run();
    else this.db.transaction(run).immediate();
  }

  private deleteRows(key: number): void {
    for (const table of ['words', 'messages']) {
      this.db
        .prepare(`DELETE FROM ${table} WHERE rowid BETWEEN ? AND ?`)
        .run(rowId(key, 0), rowId(key, MAX_ROWS));
    }
  }

  /**
   * Add words to the vocabulary. A word is never taken out (a session's
   * words may be another's too): one no message holds any more only adds an
   * empty list to a query's OR, until the index is next rebuilt.
   */
  private addWords(words: ReadonlySet<string>): void {
    if (this.knownWords.size > KNOWN_WORDS) this.knownWords.clear();
    const insert = this.db.prepare('INSERT OR IGNORE INTO vocabulary (word) VALUES (?)');
    for (const word of words) {
      if (this.knownWords.has(word)) continue;
      insert.run(word);
      this.knownWords.add(word);
    }
  }

  /** The texts of one message row, by kind. */
  texts(rowid: bigint): Record<Kind, string> | undefined {
    const row = this.db.prepare(`SELECT ${KINDS.join(', ')} FROM messages WHERE rowid = ?`).get(rowid) as
      Record<Kind, string> | undefined;
    return row;
  }
}

class OldIndexError extends Error {}
class ForeignSchemaError extends Error {}

/** The tables, indexes and FTS5 shadow tables SCHEMA creates, as SQLite records them. */
let schemaObjects: string[] | undefined;

function objectsOf(db: Database.Database): string[] {
  return (
    db.prepare('SELECT type, name, sql FROM sqlite_master ORDER BY type, name').all() as Array<{
      type: string;
      name: string;
      sql: string | null;
    }>
  ).map((o) => `${o.type} ${o.name}: ${o.sql ?? ''}`);
}

/** Throw when a file of this version lacks an object SCHEMA creates or holds one it does not (a table dropped by hand). */
function checkSchema(db: Database.Database): void {
  if (schemaObjects === undefined) {
    const reference = new Database(':memory:');
    reference.exec(SCHEMA);
    schemaObjects = objectsOf(reference);
    reference.close();
  }
  const found = new Set(objectsOf(db));
  const expected = new Set(schemaObjects);
  const missing = schemaObjects.filter((o) => !found.has(o)).map((o) => o.slice(0, o.indexOf(':')));
  const extra = [...found].filter((o) => !expected.has(o)).map((o) => o.slice(0, o.indexOf(':')));
  if (missing.length > 0 || extra.length > 0) {
    const what = [
      ...(missing.length > 0 ? [`missing ${missing.join(', ')}`] : []),
      ...(extra.length > 0 ? [`unexpected ${extra.join(', ')}`] : []),
    ];
    throw new ForeignSchemaError(`its tables are not those of schema ${INDEX_VERSION} (${what.join('; ')})`);
  }
}

export function rowId(key: number, message: number): bigint {
  return (BigInt(key) << ROW_BITS) | BigInt(message);
}

export function splitRowId(rowid: bigint): { key: number; message: number } {
  return { key: Number(rowid >> ROW_BITS), message: Number(rowid & BigInt(MAX_ROWS)) };
}

/** A `sessions` row (possibly among other columns) as a session. */
export function sessionFromRow(r: Record<string, unknown>): IndexedSession {
  const s = (v: unknown) => (typeof v === 'string' ? v : null);
  const n = (v: unknown) => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : null);
  return {
    key: n(r.key)!,
    harness: String(r.harness),
    id: String(r.id),
    locator: String(r.locator),
    sig: s(r.sig),
    title: s(r.title),
    cwd: s(r.cwd),
    lastActivity: s(r.last_activity),
    lastActivityMs: n(r.last_activity_ms),
    messageCount: n(r.message_count),
    parentId: s(r.parent_id),
  };
}
