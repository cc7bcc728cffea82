/**
 * The per-agent `store.db` UI ledger (grok-bot-format.md §7).
 *
 * One module owns this file: txcript reads it (read-only, tolerating the
 * looser txcript DDL and a missing table, C11) and the box writes it (the
 * canonical host DDL: STRICT tables, `id` UNIQUE, `blobs`, both partial
 * indexes, WAL, 5 s busy timeout, file 0600, new folders 0700).
 */
import { chmodSync, closeSync, existsSync, fchmodSync, mkdirSync, openSync } from 'node:fs';
import { dirname, relative, sep } from 'node:path';
import { ledgerEntrySchema } from '@sendbox/protocol';
import type { LedgerEntry } from '@sendbox/protocol';
import Database from 'better-sqlite3';
import { errnoCode } from '../../error-text.ts';
import type { JsonValue } from '../../model/common.ts';
import type { Warning } from '../types.ts';
import { parseLedgerEntry } from './ledger-entry.ts';
import { COMMON_MESSAGES_SQL } from './ledger-message-count.ts';
import { quiescentLedgerCopy } from './ledger-snapshot.ts';
import type { ReadLedgerEntry } from './ledger-entry.ts';

/** The canonical host DDL (IX-57401764333; sendbox decision C11). */
export const LEDGER_DDL = `
CREATE TABLE IF NOT EXISTS kv (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS blobs (
  id TEXT PRIMARY KEY,
  data BLOB NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS transcript_entries (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  entry TEXT NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS idx_transcript_window
  ON transcript_entries(seq, entry)
  WHERE json_extract(entry, '$.kind') != 'tool-call'
    AND COALESCE(json_extract(entry, '$.branched'), 0) != 1;
CREATE INDEX IF NOT EXISTS idx_transcript_branched
  ON transcript_entries(seq, entry)
  WHERE COALESCE(json_extract(entry, '$.branched'), 0) = 1;
`;

/** A failure to open, read or write a ledger; the message names the file. */
export class LedgerError extends Error {
  override readonly name = 'LedgerError';
  constructor(
    message: string,
    readonly path: string,
    /** The SQLite error code, when SQLite raised it (e.g. `SQLITE_BUSY`). */
    readonly code?: string,
  ) {
    super(message);
  }
}

export interface LedgerRow {
  seq: number;
  /** The row's `id` column (the entry's id). */
  id: string;
  entry: ReadLedgerEntry;
}

export interface LedgerRead {
  rows: LedgerRow[];
  /** Rows skipped: bad JSON, unknown kind, invalid shape (source = path, message names the seq). */
  warnings: Warning[];
}

export interface LedgerReader {
  readonly path: string;
  /** Every entry (or the first `limit`), ordered by seq. A missing `transcript_entries` table is an empty ledger. */
  readLedgerEntries(limit?: number): LedgerRead;
  /** Entries with seq greater than `seq` (at most `limit`), ordered by seq. */
  readEntriesAfter(seq: number, limit?: number): LedgerRead;
  /** Row count (cheap; no JSON is parsed). */
  countEntries(): number;
  /**
   * `timestampMs` of each user `message` entry by its address id (`t<N>u`), read by SQLite
   * without decoding the rows here: the real time of the JSONL user record with the same tag.
   */
  userMessageTimes(): Map<string, number>;
  /** The row with the highest seq, if it parses. */
  lastEntry(): LedgerRow | undefined;
  /** A `kv` value decoded from JSON (the raw text when it is not JSON); undefined when absent. */
  getKv(key: string): JsonValue | undefined;
  close(): void;
}

export interface LedgerWriter extends LedgerReader {
  /** Validate and append entries in ONE transaction: all or nothing. Returns their seqs. */
  appendEntries(entries: readonly LedgerEntry[]): number[];
  appendEntry(entry: LedgerEntry): number;
  /** Upsert a `kv` row holding `JSON.stringify(value)`. */
  setKv(key: string, value: JsonValue): void;
  /**
   * Read a `kv` value, change it and write it back in one write transaction (no other writer in
   * between); returns the value written.
   */
  updateKv(key: string, update: (current: JsonValue | undefined) => JsonValue): JsonValue;
}

export interface LedgerOpenOptions {
  /** Inspect the schema on first use instead of at open (internal: the list's one-statement summary). */
  lazy?: boolean;
  /** How long to wait on a lock before failing with SQLITE_BUSY. Read default 2000 ms; write default 5000 ms. */
  busyTimeoutMs?: number;
}

function sqliteCode(e: unknown): string | undefined {
  return e instanceof Database.SqliteError ? e.code : errnoCode(e);
}

/** Translate a SQLite failure into an error that names the file and says what to do. */
function ledgerError(e: unknown, path: string, doing: string): LedgerError {
  if (e instanceof LedgerError) return e;
  const code = sqliteCode(e);
  const detail = e instanceof Error ? e.message : String(e);
  let message: string;
  switch (code ?? '') {
    case 'SQLITE_BUSY':
    case 'SQLITE_LOCKED':
      message = `${path}: the ledger database is locked by another connection (${code}) while ${doing}; retry when the box is idle`;
      break;
    case 'SQLITE_NOTADB':
      message = `${path}: not a SQLite database (${code}) while ${doing}`;
      break;
    case 'SQLITE_CORRUPT':
      message = `${path}: the ledger database is corrupt (${code}) while ${doing}`;
      break;
    case 'SQLITE_CANTOPEN':
    case 'ENOENT':
      message = `${path}: cannot open the ledger database (${code}) while ${doing}: ${detail}`;
      break;
    default:
      message = `${path}: ${doing} failed${code !== undefined ? ` (${code})` : ''}: ${detail}`;
  }
  return new LedgerError(message, path, code);
}

/**
 * Throws a LedgerError naming the first entry that is not a valid ledger entry (and where); every
 * ledger backend checks a batch with this before writing any of it.
 */
export function validateLedgerEntries(entries: readonly LedgerEntry[], path: string): void {
  entries.forEach((entry, i) => {
    const r = ledgerEntrySchema.safeParse(entry);
    if (!r.success) {
      const issue = r.error.issues[0];
      const where = issue === undefined || issue.path.length === 0 ? '(entry)' : issue.path.join('.');
      const id =
        typeof (entry as { id?: unknown }).id === 'string' ? ` (id ${(entry as { id: string }).id})` : '';
      throw new LedgerError(
        `${path}: entry ${i}${id} is not a valid ledger entry: ${where}: ${issue?.message ?? 'invalid'}; nothing was written`,
        path,
      );
    }
  });
}

/** A ledger row as stored; `id` and `entry` as the table gives them (text when well-formed). */
export interface RawRow {
  seq: number | bigint;
  id: unknown;
  entry: unknown;
}

/**
 * Ledger rows as stored (`seq`, `id`, `entry` JSON text) read into entries: a row that is not JSON or
 * not a valid entry is skipped with a warning naming its seq (`source` locates the ledger). Every
 * ledger backend reads its rows through this.
 */
export function ledgerRowsOf(raw: readonly RawRow[], source: string): LedgerRead {
  const rows: LedgerRow[] = [];
  const warnings: Warning[] = [];
  for (const r of raw) {
    const seq = Number(r.seq);
    const rowId = typeof r.id === 'string' ? r.id : undefined;
    let value: unknown;
    try {
      value = typeof r.entry === 'string' ? JSON.parse(r.entry) : undefined;
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      warnings.push({
        source,
        message: `seq ${seq}: entry is not valid JSON (${why}); skipped`,
      });
      continue;
    }
    const parsed = parseLedgerEntry(value, rowId);
    if (!parsed.ok) {
      warnings.push({ source, message: `seq ${seq}: ${parsed.problem}` });
      continue;
    }
    rows.push({ seq, id: rowId ?? parsed.entry.id, entry: parsed.entry });
  }
  return { rows, warnings };
}

class LedgerDb implements LedgerWriter {
  private schema: { selectFrom: string; hasEntries: boolean; hasKv: boolean } | undefined;
  /** The writes' statements, prepared once: preparing cost more than running them (a box writes per entry). */
  private readonly statements = new Map<string, Database.Statement>();
  private appendAll: ((list: readonly LedgerEntry[]) => number[]) | undefined;

  private statement(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  constructor(
    private readonly db: Database.Database,
    readonly path: string,
    lazy = false,
  ) {
    if (!lazy) this.inspect();
  }

  private get selectFrom(): string {
    return this.inspect().selectFrom;
  }
  private get hasEntries(): boolean {
    return this.inspect().hasEntries;
  }
  private get hasKv(): boolean {
    return this.inspect().hasKv;
  }

  /** Learn which tables and columns exist (C11: loose variants, missing tables). */
  private inspect(): { selectFrom: string; hasEntries: boolean; hasKv: boolean } {
    if (this.schema !== undefined) return this.schema;
    const { db, path } = this;
    const tables = new Set(
      (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as { name: string }[]).map(
        (r) => r.name,
      ),
    );
    const hasKv = tables.has('kv');
    const hasEntries = tables.has('transcript_entries');
    let selectFrom = '';
    if (hasEntries) {
      // C11: tolerate the looser variants; only `entry` is essential.
      const columns = new Set(
        (db.prepare(`PRAGMA table_info(transcript_entries)`).all() as { name: string }[]).map((c) => c.name),
      );
      if (!columns.has('entry')) {
        throw new LedgerError(`${path}: table transcript_entries has no \`entry\` column`, path);
      }
      const seq = columns.has('seq') ? 'seq' : 'rowid';
      const id = columns.has('id') ? 'id' : 'NULL';
      selectFrom = `SELECT ${seq} AS seq, ${id} AS id, entry FROM transcript_entries`;
    }
    this.schema = { selectFrom, hasEntries, hasKv };
    return this.schema;
  }

  private run<T>(doing: string, f: () => T): T {
    try {
      return f();
    } catch (e) {
      throw ledgerError(e, this.path, doing);
    }
  }

  private toRows(raw: RawRow[]): LedgerRead {
    return ledgerRowsOf(raw, this.path);
  }

  readLedgerEntries(limit?: number): LedgerRead {
    return this.readEntriesAfter(Number.MIN_SAFE_INTEGER, limit);
  }

  readEntriesAfter(seq: number, limit?: number): LedgerRead {
    if (!this.hasEntries) return { rows: [], warnings: [] };
    const sql = `${this.selectFrom} WHERE seq > ? ORDER BY seq${limit !== undefined ? ' LIMIT ?' : ''}`;
    const params = limit !== undefined ? [seq, Math.max(0, Math.trunc(limit))] : [seq];
    return this.run('reading transcript_entries', () =>
      this.toRows(this.db.prepare(sql).all(...params) as RawRow[]),
    );
  }

  countEntries(): number {
    if (!this.hasEntries) return 0;
    return this.run('counting transcript_entries', () => {
      const row = this.db.prepare(`SELECT count(*) AS n FROM transcript_entries`).get() as { n: number };
      return row.n;
    });
  }

  /** The Common messages the rows become (ledger-message-count.ts). */
  countMessages(): number {
    if (!this.hasEntries) return 0;
    return this.run('counting the messages of transcript_entries', () =>
      Number(this.db.prepare(COMMON_MESSAGES_SQL).pluck().get()),
    );
  }

  userMessageTimes(): Map<string, number> {
    const out = new Map<string, number>();
    if (!this.hasEntries) return out;
    return this.run('reading user message times', () => {
      const rows = this.db
        .prepare(
          `SELECT json_extract(entry, '$.id') AS id, json_extract(entry, '$.timestampMs') AS ms
             FROM transcript_entries
            WHERE json_valid(entry) AND json_extract(entry, '$.kind') = 'message'
              AND json_extract(entry, '$.role') = 'user'`,
        )
        .all() as Array<{ id: unknown; ms: unknown }>;
      for (const { id, ms } of rows) {
        if (typeof id === 'string' && typeof ms === 'number' && Number.isFinite(ms) && !out.has(id))
          out.set(id, ms);
      }
      return out;
    });
  }

  lastEntry(): LedgerRow | undefined {
    if (!this.hasEntries) return undefined;
    return this.run('reading the last transcript entry', () => {
      const raw = this.db.prepare(`${this.selectFrom} ORDER BY seq DESC LIMIT 1`).all() as RawRow[];
      return this.toRows(raw).rows[0];
    });
  }

  summary(): LedgerSummary {
    let row: { n: number; m: number; last: unknown; unread: unknown } | undefined;
    try {
      // Fast path for the canonical and txcript shapes: one statement, no schema inspection.
      row = this.db
        .prepare(
          `SELECT (SELECT count(*) FROM transcript_entries) AS n,
                  (${COMMON_MESSAGES_SQL}) AS m,
                  (SELECT entry FROM transcript_entries ORDER BY seq DESC LIMIT 1) AS last,
                  (SELECT value FROM kv WHERE key = 'unreadState') AS unread`,
        )
        .get() as { n: number; m: number; last: unknown; unread: unknown };
    } catch (e) {
      const detail = e instanceof Error ? e.message : '';
      if (!/no such (table|column)/.test(detail)) throw ledgerError(e, this.path, 'summarising the ledger');
    }
    if (row === undefined) {
      const count = this.countEntries();
      const last = count > 0 ? this.lastEntry()?.entry.timestampMs : undefined;
      const unreadState = this.getKv('unreadState');
      return {
        count,
        messages: count > 0 ? this.countMessages() : 0,
        ...(last !== undefined ? { lastTimestampMs: last } : {}),
        ...(unreadState !== undefined ? { unreadState } : {}),
      };
    }
    const out: LedgerSummary = { count: row.n, messages: row.m };
    const decode = (v: unknown): unknown => {
      if (typeof v !== 'string') return undefined;
      try {
        return JSON.parse(v);
      } catch {
        return undefined;
      }
    };
    const last = decode(row.last) as { timestampMs?: unknown } | undefined;
    if (typeof last?.timestampMs === 'number') out.lastTimestampMs = last.timestampMs;
    const unread = decode(row.unread);
    if (unread !== undefined) out.unreadState = unread as JsonValue;
    return out;
  }

  getKv(key: string): JsonValue | undefined {
    if (!this.hasKv) return undefined;
    return this.run(`reading kv "${key}"`, () => {
      const row = this.statement(`SELECT value FROM kv WHERE key = ?`).get(key) as
        { value: unknown } | undefined;
      if (row === undefined || typeof row.value !== 'string') return undefined;
      try {
        return JSON.parse(row.value) as JsonValue;
      } catch {
        return row.value;
      }
    });
  }

  appendEntries(entries: readonly LedgerEntry[]): number[] {
    validateLedgerEntries(entries, this.path);
    this.appendAll ??= this.db.transaction((list: readonly LedgerEntry[]) =>
      list.map((e) => {
        try {
          return Number(
            this.statement(`INSERT INTO transcript_entries (id, entry) VALUES (?, ?)`).run(
              e.id,
              JSON.stringify(e),
            ).lastInsertRowid,
          );
        } catch (err) {
          if (sqliteCode(err)?.startsWith('SQLITE_CONSTRAINT') === true) {
            throw new LedgerError(
              `${this.path}: an entry with id "${e.id}" already exists (ids are unique); nothing was written`,
              this.path,
              sqliteCode(err),
            );
          }
          throw err;
        }
      }),
    );
    const appendAll = this.appendAll;
    return this.run('appending entries', () => appendAll(entries));
  }

  appendEntry(entry: LedgerEntry): number {
    return this.appendEntries([entry])[0]!;
  }

  setKv(key: string, value: JsonValue): void {
    this.run(`writing kv "${key}"`, () => {
      this.statement(
        `INSERT INTO kv (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
      ).run(key, JSON.stringify(value));
    });
  }

  updateKv(key: string, update: (current: JsonValue | undefined) => JsonValue): JsonValue {
    return this.run(`updating kv "${key}"`, () =>
      this.db
        .transaction(() => {
          const next = update(this.getKv(key));
          this.setKv(key, next);
          return next;
        })
        .immediate(),
    );
  }

  close(): void {
    this.db.close();
  }
}

/**
 * Open a ledger for reading. Never creates or changes the file. A missing
 * file, a lock held by another connection, a corrupt file or a file that is
 * not a database throws a LedgerError naming the path.
 */
export function openLedgerReadOnly(path: string, options: LedgerOpenOptions = {}): LedgerReader {
  if (!existsSync(path)) {
    throw new LedgerError(`${path}: cannot open the ledger database: no such file`, path, 'ENOENT');
  }
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true, timeout: options.busyTimeoutMs ?? 2000 });
    return new LedgerDb(db, path, options.lazy === true);
  } catch (e) {
    db?.close();
    throw ledgerError(e, path, 'opening the ledger read-only');
  }
}

/** Create the parent folders (0700) that do not exist yet. */
function makeParentDirs(dir: string): void {
  const first = mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (first === undefined) return;
  // The umask may have narrowed the mode; make every folder created here exactly 0700.
  const rel = relative(first, dir);
  let current = first;
  chmodSync(current, 0o700);
  for (const part of rel === '' ? [] : rel.split(sep)) {
    current = `${current}${sep}${part}`;
    chmodSync(current, 0o700);
  }
}

/**
 * Open (creating when absent) a ledger for writing, with the canonical host
 * DDL (C11). A new file is created with mode 0600 before SQLite touches it, so
 * the WAL and shm files SQLite derives from it get the same mode.
 */
export function openLedgerForWrite(path: string, options: LedgerOpenOptions = {}): LedgerWriter {
  let db: Database.Database | undefined;
  try {
    makeParentDirs(dirname(path));
    try {
      const fd = openSync(path, 'wx', 0o600);
      fchmodSync(fd, 0o600);
      closeSync(fd);
    } catch (e) {
      if (sqliteCode(e) !== 'EEXIST') throw e;
    }
    const timeout = options.busyTimeoutMs ?? 5000;
    db = new Database(path, { fileMustExist: true, timeout });
    db.pragma(`busy_timeout = ${Math.trunc(timeout)}`);
    db.pragma('journal_mode = WAL');
    // In WAL mode NORMAL never corrupts the file; a power cut can lose only the
    // last commits, not earlier ones. FULL would fsync on every commit (one per send).
    db.pragma('synchronous = NORMAL');
    db.exec(LEDGER_DDL);
    return new LedgerDb(db, path);
  } catch (e) {
    db?.close();
    throw ledgerError(e, path, 'opening the ledger for writing');
  }
}

/** What a session list needs from a ledger. */
export interface LedgerSummary {
  count: number;
  /** The Common messages the rows become: the count `view` shows (ledger-message-count.ts). */
  messages: number;
  /** `timestampMs` of the row with the highest seq. */
  lastTimestampMs?: number;
  /** `kv` `unreadState` decoded (it holds `lastActivityAt`). */
  unreadState?: JsonValue;
  /** The first `firstEntries` readable entries, when asked for (a title for an agent without a name). */
  first?: LedgerRow[];
}

export interface LedgerSummaryOptions extends LedgerOpenOptions {
  /** Also read this many entries from the start, from the same snapshot. */
  firstEntries?: number;
}

/**
 * Count rows and read the last entry's time and `unreadState` with ONE
 * statement (listing thousands of agents must stay fast), and the first
 * entries when asked, on an in-memory copy of the file when it is quiescent
 * (see ledger-snapshot.ts: the file and its sidecars are left untouched) and
 * through a read-only connection otherwise; falls back to the general reader
 * when a table is missing or shaped differently (C11).
 */
export function readLedgerSummary(path: string, options: LedgerSummaryOptions = {}): LedgerSummary {
  const { firstEntries, ...open } = options;
  const summarise = (ledger: LedgerDb): LedgerSummary => {
    const summary = ledger.summary();
    if (firstEntries !== undefined && summary.count > 0) {
      summary.first = ledger.readLedgerEntries(firstEntries).rows;
    }
    return summary;
  };
  const copy = quiescentLedgerCopy(path);
  if (copy !== undefined) {
    try {
      const db = new Database(copy, { readonly: true });
      try {
        return summarise(new LedgerDb(db, path, true));
      } finally {
        db.close();
      }
    } catch {
      // Whatever the copy could not answer, the file itself will (or will say why not).
    }
  }
  const ledger = openLedgerReadOnly(path, { ...open, lazy: true }) as LedgerDb;
  try {
    return summarise(ledger);
  } finally {
    ledger.close();
  }
}

/** Open, read every entry, close. */
export function readLedgerFile(path: string, options: LedgerOpenOptions = {}): LedgerRead {
  const ledger = openLedgerReadOnly(path, options);
  try {
    return ledger.readLedgerEntries();
  } finally {
    ledger.close();
  }
}
