/**
 * Cursor desktop sessions in the editor's global `state.vscdb`, under its
 * `User` folder: `$CURSOR_DESKTOP_USER_DIR`, else `~/.config/Cursor/User`
 * (`~/Library/Application Support/Cursor/User` on macOS,
 * `%APPDATA%\Cursor\User` on Windows). The database is shared with the
 * running editor: it is read read-only, and a new session is written in one
 * transaction that refuses an id already there (docs/formats/cursor-desktop.md).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { JsonObject, Transcript } from '../../model/common.ts';
import { isJsonObject } from '../../model/json.ts';
import { FileExistsError } from '../../fs/atomic.ts';
import { normalizeTimestamp, titleFromText } from '../common-values.ts';
import { electronAppData, envValue } from '../env.ts';
import { loadResult } from '../load-result.ts';
import { millisTime } from '../native-values.ts';
import { assertSafeSessionId, sessionUuid } from '../session-id.ts';
import { openWritable, readSqlite, tableColumns, type SqliteDb } from '../sqlite-file.ts';
import type {
  DiscoverResult,
  LoadResult,
  SaveResult,
  SavingStore,
  SessionSummary,
  Warning,
} from '../types.ts';
import type { DesktopSession, KvRow } from './records.ts';

const HARNESS = 'cursor_desktop';

export const CURSOR_DESKTOP_USER_DIR_ENV = 'CURSOR_DESKTOP_USER_DIR';

/** The editor's `User` folder. */
export function cursorDesktopUserDir(
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string {
  const explicit = envValue(env, CURSOR_DESKTOP_USER_DIR_ENV);
  if (explicit !== undefined) return explicit;
  return path.join(electronAppData(env, platform), 'Cursor', 'User');
}

export const stateDbPath = (userDir: string): string => path.join(userDir, 'globalStorage', 'state.vscdb');

/** `<db>#<id>`: every session shares the one file. */
export const desktopLocator = (db: string, id: string): string => `${db}#${id}`;

/** A key range that holds exactly the keys starting with `prefix` (uses the primary key's index). */
const prefixRange = (prefix: string): [string, string] => [prefix, `${prefix}\uffff`];

function kvRows(db: SqliteDb, prefix: string): KvRow[] {
  return db
    .prepare(
      'SELECT key, CAST(value AS TEXT) AS value FROM cursorDiskKV WHERE key >= ? AND key < ? ORDER BY rowid',
    )
    .all(...prefixRange(prefix)) as KvRow[];
}

function cell(db: SqliteDb, key: string): string | undefined {
  const row = db.prepare('SELECT CAST(value AS TEXT) AS value FROM cursorDiskKV WHERE key = ?').get(key) as
    { value: string | null } | undefined;
  return row?.value ?? undefined;
}

interface HeaderRow {
  composerId: string;
  workspaceId: string | null;
  createdAt: number | null;
  lastUpdatedAt: number | null;
  isArchived: number | null;
  isSubagent: number | null;
  recency: number | null;
  checkpointAt: number | null;
  value: string | null;
}

const hasHeaders = (db: SqliteDb): boolean => tableColumns(db, 'composerHeaders').has('composerId');

/** Session ids: the header table's, most recent first, then sessions with only a `composerData` row (older databases). */
function sessionIds(db: SqliteDb): string[] {
  const headed = hasHeaders(db)
    ? (db.prepare('SELECT composerId FROM composerHeaders ORDER BY recency DESC').all() as HeaderRow[]).map(
        (r) => r.composerId,
      )
    : [];
  const known = new Set(headed);
  const rest = (
    db
      .prepare('SELECT key FROM cursorDiskKV WHERE key >= ? AND key < ? ORDER BY rowid')
      .all(...prefixRange('composerData:')) as { key: string }[]
  )
    .map((r) => r.key.slice('composerData:'.length))
    .filter((id) => !known.has(id));
  return [...headed, ...rest];
}

/**
 * One session's rows, or undefined when the database has none of it. The
 * other rows naming it (`aux`) cost a scan of the whole table: a listing
 * leaves them out (`withAux` false).
 */
export function readDesktopSession(db: SqliteDb, id: string, withAux = true): DesktopSession | undefined {
  const head = hasHeaders(db)
    ? (db.prepare('SELECT * FROM composerHeaders WHERE composerId = ?').get(id) as HeaderRow | undefined)
    : undefined;
  const composerData = cell(db, `composerData:${id}`);
  if (head === undefined && composerData === undefined) return undefined;
  let header = head?.value ?? undefined;
  let created = head?.createdAt ?? undefined;
  let updated = head?.lastUpdatedAt ?? undefined;
  if (header === undefined) {
    // No header row (older databases): the times come from composerData.
    let data: unknown;
    try {
      data = JSON.parse(composerData ?? '');
    } catch {
      data = undefined;
    }
    const d = isJsonObject(data) ? data : {};
    header = JSON.stringify({ type: 'head', composerId: id });
    if (typeof d.createdAt === 'number') created = d.createdAt;
    if (typeof d.lastUpdatedAt === 'number') updated = d.lastUpdatedAt;
  }
  const bubblePrefix = `bubbleId:${id}:`;
  // Other rows naming the session (checkpoints, row heights), not the model's request cache.
  const aux = !withAux
    ? []
    : (
        db
          .prepare(
            "SELECT key, CAST(value AS TEXT) AS value FROM cursorDiskKV WHERE instr(key, ?) > 0 AND key NOT LIKE 'bubbleId:%' AND key NOT LIKE 'composerData:%' AND key NOT LIKE 'agentKv:%' ORDER BY rowid",
          )
          .all(id) as KvRow[]
      ).filter((r) => !r.key.startsWith(bubblePrefix));
  return {
    header,
    ...(head?.workspaceId != null ? { workspaceId: head.workspaceId } : {}),
    createdAt: created ?? 0,
    lastUpdatedAt: updated ?? 0,
    isArchived: (head?.isArchived ?? 0) !== 0,
    isSubagent: (head?.isSubagent ?? 0) !== 0,
    recency: head?.recency ?? 0,
    ...(head?.checkpointAt != null ? { checkpointAt: head.checkpointAt } : {}),
    ...(composerData !== undefined ? { composerData } : {}),
    bubbles: kvRows(db, bubblePrefix),
    aux,
  };
}

/** The latest `createdAt` among the bubbles, for sessions whose header has no time. */
function lastBubbleTime(s: DesktopSession): string | undefined {
  let last: string | undefined;
  for (const b of s.bubbles) {
    const at = /"createdAt":"([^"]+)"/.exec(b.value)?.[1];
    const t = normalizeTimestamp(at);
    if (t !== undefined && (last === undefined || t > last)) last = t;
  }
  return last;
}

function titleOf(s: DesktopSession): string | undefined {
  for (const text of [s.header, s.composerData ?? '']) {
    try {
      const v: unknown = JSON.parse(text);
      if (isJsonObject(v))
        for (const k of ['name', 'subtitle'])
          if (typeof v[k] === 'string' && v[k].trim() !== '') return v[k].trim();
    } catch {
      // the codec reports it when the session is read
    }
  }
  for (const b of s.bubbles) {
    try {
      const v: unknown = JSON.parse(b.value);
      if (isJsonObject(v) && v.type === 1 && typeof v.text === 'string') return titleFromText(v.text);
    } catch {
      // as above
    }
  }
  return undefined;
}

/** The workspace folder the editor made for `cwd`, found by its `workspace.json`. */
function workspaceIdFor(userDir: string, cwd: string): string | undefined {
  const root = path.join(userDir, 'workspaceStorage');
  let entries: string[];
  try {
    entries = readdirSync(root);
  } catch {
    return undefined;
  }
  for (const name of entries) {
    try {
      const v: unknown = JSON.parse(readFileSync(path.join(root, name, 'workspace.json'), 'utf8'));
      if (
        isJsonObject(v) &&
        typeof v.folder === 'string' &&
        decodeURI(v.folder.replace(/^file:\/\//, '')) === cwd
      )
        return name;
    } catch {
      // not a workspace folder
    }
  }
  return undefined;
}

const SCHEMA = `CREATE TABLE IF NOT EXISTS ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
CREATE TABLE IF NOT EXISTS cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB);
CREATE TABLE IF NOT EXISTS composerHeaders (composerId TEXT PRIMARY KEY, workspaceId TEXT, createdAt INTEGER,
  lastUpdatedAt INTEGER, isArchived INTEGER, isSubagent INTEGER, recency INTEGER, checkpointAt INTEGER, value TEXT);`;

function itemJson(db: SqliteDb, key: string): unknown {
  const row = db.prepare('SELECT CAST(value AS TEXT) AS value FROM ItemTable WHERE key = ?').get(key) as
    { value: string | null } | undefined;
  try {
    return JSON.parse(row?.value ?? 'null');
  } catch {
    return null;
  }
}

/**
 * The editor lists local agent sessions by project: a session missing from
 * `glass.localAgentProjectMembership.v1` is not in its sidebar. Adds the
 * project of `cwd` when there is none, and the session to it.
 */
function registerInSidebar(
  db: SqliteDb,
  id: string,
  cwd: string,
  workspaceId: string | undefined,
  at: number,
): void {
  const PROJECTS = 'glass.localAgentProjects.v1';
  const MEMBERSHIP = 'glass.localAgentProjectMembership.v1';
  const found = itemJson(db, PROJECTS);
  const projects = Array.isArray(found) ? (found as unknown[]) : [];
  const fsPath = (p: unknown): unknown =>
    isJsonObject(p) && isJsonObject(p.workspace) && isJsonObject(p.workspace.uri)
      ? p.workspace.uri.fsPath
      : undefined;
  const existing = projects.find((p) => fsPath(p) === cwd);
  let projectId = isJsonObject(existing) && typeof existing.id === 'string' ? existing.id : undefined;
  if (projectId === undefined) {
    projectId = sessionUuid(`cursor-desktop-project:${cwd}`);
    projects.push({
      id: projectId,
      name: path.basename(cwd) || 'Imported',
      workspace: {
        id: workspaceId ?? '',
        uri: { $mid: 1, fsPath: cwd, external: `file://${cwd}`, path: cwd, scheme: 'file' },
      },
      createdAt: at,
      lastUpdatedAt: at,
      isArchived: false,
    });
    db.prepare('INSERT OR REPLACE INTO ItemTable (key, value) VALUES (?, ?)').run(
      PROJECTS,
      JSON.stringify(projects),
    );
  }
  const m = itemJson(db, MEMBERSHIP);
  const membership: JsonObject = isJsonObject(m) ? m : {};
  membership[id] = projectId;
  db.prepare('INSERT OR REPLACE INTO ItemTable (key, value) VALUES (?, ?)').run(
    MEMBERSHIP,
    JSON.stringify(membership),
  );
}

/** Write session `id` into `file` in one transaction; refuses an id the database already has. */
export async function writeDesktopSession(
  file: string,
  id: string,
  s: DesktopSession,
  sidebar?: { cwd: string; workspaceId?: string },
): Promise<void> {
  assertSafeSessionId(id, HARNESS);
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const db = await openWritable(file);
  try {
    db.transaction(() => {
      db.exec(SCHEMA);
      const taken =
        db.prepare('SELECT 1 FROM composerHeaders WHERE composerId = ?').get(id) !== undefined ||
        cell(db, `composerData:${id}`) !== undefined ||
        kvRows(db, `bubbleId:${id}:`).length > 0;
      if (taken) throw new FileExistsError(desktopLocator(file, id));
      db.prepare(
        'INSERT INTO composerHeaders (composerId, workspaceId, createdAt, lastUpdatedAt, isArchived, isSubagent, recency, checkpointAt, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ).run(
        id,
        s.workspaceId ?? null,
        s.createdAt,
        s.lastUpdatedAt,
        s.isArchived ? 1 : 0,
        s.isSubagent ? 1 : 0,
        s.recency,
        s.checkpointAt ?? null,
        s.header,
      );
      const put = db.prepare('INSERT INTO cursorDiskKV (key, value) VALUES (?, ?)');
      if (s.composerData !== undefined) put.run(`composerData:${id}`, s.composerData);
      for (const r of [...s.bubbles, ...s.aux]) put.run(r.key, r.value);
      if (sidebar !== undefined) registerInSidebar(db, id, sidebar.cwd, sidebar.workspaceId, s.createdAt);
    })();
  } finally {
    db.close();
  }
}

export function cursorDesktopStore(env: NodeJS.ProcessEnv = process.env): SavingStore {
  const userDir = cursorDesktopUserDir(env);
  const file = stateDbPath(userDir);
  const read = <T>(f: (db: SqliteDb) => T): Promise<T> => readSqlite(file, f);
  return {
    async discover(options): Promise<DiscoverResult> {
      if (!existsSync(file)) return { sessions: [], warnings: [] };
      const warnings: Warning[] = [];
      let sessions: SessionSummary[] = [];
      // The count is what view shows: each session through the codec (bubbles split and merge).
      const [{ desktopCodec }, { desktopDocument }] = await Promise.all([
        import('./codec.ts'),
        import('./records.ts'),
      ]);
      try {
        sessions = await read((db) => {
          if (!tableColumns(db, 'cursorDiskKV').has('key'))
            throw new Error('it has no cursorDiskKV table: not a Cursor state database');
          const ids = sessionIds(db);
          const out: SessionSummary[] = [];
          ids.forEach((id, i) => {
            // Read whole (aux rows too): the count goes through the codec, as view's does.
            const s = readDesktopSession(db, id);
            // Drafts and empty composers are not sessions.
            if (s !== undefined && s.bubbles.length > 0) {
              const title = titleOf(s);
              const last = millisTime(s.lastUpdatedAt > 0 ? s.lastUpdatedAt : undefined) ?? lastBubbleTime(s);
              out.push({
                id,
                harness: HARNESS,
                locator: desktopLocator(file, id),
                messageCount: loadResult(desktopCodec, desktopDocument(s), {
                  id,
                  source: file,
                  timestamp: new Date(0).toISOString(),
                }).transcript.messages.length,
                ...(title !== undefined ? { title } : {}),
                ...(last !== undefined ? { lastActivity: last } : {}),
              });
            }
            options?.onProgress?.(i + 1, ids.length);
          });
          return out;
        });
      } catch (e) {
        warnings.push({
          source: file,
          message: `unreadable, no Cursor desktop sessions listed: ${(e as Error).message}. Check the file, or set ${CURSOR_DESKTOP_USER_DIR_ENV} to the editor's User folder`,
        });
      }
      return { sessions, warnings };
    },

    async locate(id: string): Promise<string[]> {
      assertSafeSessionId(id, HARNESS);
      if (!existsSync(file)) return [];
      return (await read((db) => readDesktopSession(db, id, false))) === undefined ? [] : [file];
    },

    async load(id: string): Promise<LoadResult> {
      assertSafeSessionId(id, HARNESS);
      const session = existsSync(file) ? await read((db) => readDesktopSession(db, id)) : undefined;
      if (session === undefined)
        throw new Error(`cursor_desktop: no session ${id} in ${file}; run \`txcript list\` to see the ids`);
      const [{ desktopCodec }, { desktopDocument }] = await Promise.all([
        import('./codec.ts'),
        import('./records.ts'),
      ]);
      return loadResult(desktopCodec, desktopDocument(session), {
        id,
        source: file,
        timestamp: statSync(file).mtime.toISOString(),
      });
    },

    async save(transcript: Transcript): Promise<SaveResult> {
      const id = sessionUuid(transcript.meta.id);
      assertSafeSessionId(id, HARNESS);
      const [{ desktopCodec }, { desktopSession }] = await Promise.all([
        import('./codec.ts'),
        import('./records.ts'),
      ]);
      const { session } = desktopSession(
        desktopCodec.fromCommon({ ...transcript, meta: { ...transcript.meta, id } }),
        id,
      );
      const cwd = transcript.meta.cwd;
      const workspaceId = cwd !== undefined && cwd !== '' ? workspaceIdFor(userDir, cwd) : undefined;
      if (workspaceId !== undefined) session.workspaceId = workspaceId;
      await writeDesktopSession(
        file,
        id,
        session,
        cwd !== undefined && cwd !== ''
          ? { cwd, ...(workspaceId !== undefined ? { workspaceId } : {}) }
          : undefined,
      );
      // The file written: the editor's database, which holds every session.
      return { id, locator: file };
    },
  };
}
