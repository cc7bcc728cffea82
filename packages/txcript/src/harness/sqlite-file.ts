/**
 * SQLite files of other tools (Cursor, Antigravity, Hermes): opened read
 * only for reading, so txcript never takes a write lock on a database a
 * running tool owns; new databases made whole in a temp file and linked
 * into place, so nobody sees half a session and no existing file is
 * replaced; and a shared database written only in transactions.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type BetterSqlite from 'better-sqlite3';
import { FileExistsError } from '../fs/atomic.ts';

export type SqliteDb = BetterSqlite.Database;

/** better-sqlite3, loaded when a database is first opened (a listing of other harnesses never loads it). */
async function driver(): Promise<typeof BetterSqlite> {
  return (await import('better-sqlite3')).default;
}

/** Open `file` read only; waits up to 5 s for a writer's lock rather than failing at once. */
export async function openReadOnly(file: string): Promise<SqliteDb> {
  const Database = await driver();
  return new Database(file, { readonly: true, fileMustExist: true, timeout: 5000 });
}

/**
 * Open (or create, 0600) a database another program also writes (Cursor's
 * `state.vscdb`): waits up to 5 s for its lock, and changes it only inside
 * the caller's transactions.
 */
export async function openWritable(file: string): Promise<SqliteDb> {
  const Database = await driver();
  // Appending nothing creates a missing file with the mode asked for and leaves an existing one alone.
  await fs.writeFile(file, '', { mode: 0o600, flag: 'a' });
  return new Database(file, { timeout: 5000 });
}

/** Run `read` on `file` opened read only, closing it after. */
export async function readSqlite<T>(file: string, read: (db: SqliteDb) => T): Promise<T> {
  const db = await openReadOnly(file);
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** The names of a table's columns (empty when there is no such table). */
export function tableColumns(db: SqliteDb, table: string): Set<string> {
  const rows = db.prepare(`PRAGMA table_info(${JSON.stringify(table)})`).all() as { name: string }[];
  return new Set(rows.map((r) => r.name));
}

/**
 * Create the database `target` (0600, folders 0700) by running `fill` on a
 * fresh database in one transaction: it is built in a temp file beside the
 * target and linked into place only when whole. Throws FileExistsError when
 * `target` exists; a failure leaves nothing behind.
 */
export async function createSqliteFile(target: string, fill: (db: SqliteDb) => void): Promise<void> {
  const dir = path.dirname(target);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const temp = path.join(
    dir,
    `.${path.basename(target)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`,
  );
  try {
    await fs.writeFile(temp, '', { mode: 0o600, flag: 'wx' });
    const Database = await driver();
    const db = new Database(temp);
    try {
      db.transaction(() => fill(db))();
    } finally {
      db.close();
    }
    const handle = await fs.open(temp, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await fs.link(temp, target);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') throw new FileExistsError(target);
      throw e;
    }
  } finally {
    await fs.rm(temp, { force: true });
  }
}
