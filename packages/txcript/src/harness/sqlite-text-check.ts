/**
 * Search's byte check (search/byte-filter.ts) for sessions kept as rows of
 * a SQLite database (Harness `mayHold`): which sessions' rows may hold every
 * needle, asked of SQLite, with no row decoded in JavaScript.
 *
 * Every column of every row of the tables that hold a session's text counts,
 * cast to text and lower-cased (SQLite's `lower` folds ASCII alone, as the
 * needles are ASCII). The check is conservative, as the file check is: a
 * session with a `\u00` JSON escape or a KELVIN SIGN (which lower-cases to
 * `k`) in any of its rows passes whole, and a session's titles count as part
 * of it.
 */
import { type SqliteDb, readSqlite, tableColumns } from './sqlite-file.ts';

/** A table whose rows hold session text: rows of session `sessionColumn` (none: every row is the database's one session). */
export interface TextTable {
  table: string;
  sessionColumn?: string;
  /**
   * Instead of `sessionColumn`: the sessions a row belongs to, told by its
   * `column` (a key naming them), among the listed ids of its database.
   */
  keyedBy?: { column: string; sessions: (key: string, ids: readonly string[]) => readonly string[] };
}

/** Where a listed session's rows are: its database, and its id there (none: the database holds it alone). */
export type SessionRows = (locator: string) => { file: string; id?: string } | undefined;

/** `<db>#<id>`: the id after the last `#`. */
export const rowsByHash: SessionRows = (locator) => {
  const at = locator.lastIndexOf('#');
  return at < 0 ? undefined : { file: locator.slice(0, at), id: locator.slice(at + 1) };
};

/** A listed session: its locator (`<db>#<id>`) and its titles (folded), which count as part of it. */
export interface HeldSession {
  locator: string;
  titles: readonly string[];
}

/** The sessions by database, each with its id there ('' for a database's one session). */
function byDatabase(
  sessions: readonly HeldSession[],
  where: SessionRows,
): Map<string, Array<{ id: string; s: HeldSession }>> {
  const out = new Map<string, Array<{ id: string; s: HeldSession }>>();
  for (const s of sessions) {
    const rows = where(s.locator);
    if (rows === undefined) continue;
    const list = out.get(rows.file) ?? [];
    list.push({ id: rows.id ?? '', s });
    out.set(rows.file, list);
  }
  return out;
}

/** Per session id, the needles its rows hold (and `*` when any may spell any). */
function heldNeedles(
  db: SqliteDb,
  tables: readonly TextTable[],
  needles: readonly string[],
  listed: readonly string[],
): Map<string, Set<string>> {
  const held = new Map<string, Set<string>>();
  const markOne = (id: unknown, needle: string) => {
    const key = String(id);
    const set = held.get(key) ?? new Set<string>();
    set.add(needle);
    held.set(key, set);
  };
  for (const { table, sessionColumn, keyedBy } of tables) {
    const columns = [...tableColumns(db, table)];
    const by = keyedBy?.column ?? sessionColumn;
    if (columns.length === 0 || (by !== undefined && !columns.includes(by))) continue;
    const quoted = (c: string) => `"${c.replaceAll('"', '""')}"`;
    const session = by === undefined ? "''" : quoted(by);
    const mark = (id: unknown, needle: string) => {
      if (keyedBy === undefined) markOne(id, needle);
      else for (const one of keyedBy.sessions(String(id), listed)) markOne(one, needle);
    };
    const text = `lower(${columns.map((c) => `coalesce(CAST(${quoted(c)} AS TEXT), '')`).join(' || char(10) || ')})`;
    const from = `FROM ${quoted(table)} WHERE instr(${text}, ?) > 0`;
    const ids = db.prepare(`SELECT DISTINCT ${session} ${from}`).pluck();
    for (const needle of needles) for (const id of ids.all(needle)) mark(id, needle);
    // A `\u00XX` escape may spell any ASCII letter; a KELVIN SIGN, a `k`.
    for (const id of ids.all('\\u00')) mark(id, '*');
    const kelvin = db
      .prepare(`SELECT DISTINCT ${session} FROM ${quoted(table)} WHERE instr(${text}, char(8490)) > 0`)
      .pluck();
    for (const id of kelvin.all()) mark(id, 'k*');
  }
  return held;
}

/**
 * The locators of `sessions` whose rows in `tables` may hold every needle.
 * A database that cannot be read lets its sessions through: their full read
 * says why.
 */
export async function sessionsHolding(
  sessions: readonly HeldSession[],
  tables: readonly TextTable[],
  needles: readonly string[],
  where: SessionRows = rowsByHash,
): Promise<Set<string>> {
  // A locator that names no database rows is left to the full read.
  const pass = new Set(sessions.filter((s) => where(s.locator) === undefined).map((s) => s.locator));
  for (const [file, list] of byDatabase(sessions, where)) {
    let held: Map<string, Set<string>>;
    try {
      held = await readSqlite(file, (db) =>
        heldNeedles(
          db,
          tables,
          needles,
          list.map((l) => l.id),
        ),
      );
    } catch {
      for (const { s } of list) pass.add(s.locator);
      continue;
    }
    for (const { id, s } of list) {
      const own = held.get(id) ?? new Set<string>();
      if (own.has('*')) {
        pass.add(s.locator);
        continue;
      }
      const holds = (n: string) =>
        own.has(n) || (own.has('k*') && n.includes('k')) || s.titles.some((t) => t.includes(n));
      if (needles.every(holds)) pass.add(s.locator);
    }
  }
  return pass;
}
