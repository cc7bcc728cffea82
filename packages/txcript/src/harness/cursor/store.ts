/**
 * Cursor CLI sessions on disk: `<chats>/<md5 of the workspace path>/<session
 * uuid>/` holding `store.db` (SQLite: `blobs`, `meta`), `meta.json` and
 * `prompt_history.json`; `cursorChatsRoots` says which chats folders are read
 * (docs/formats/cursor.md). Databases are opened read only.
 *
 * A new session is written as a whole folder made beside its place and
 * renamed into it, into the chats folder the CLI used last.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Transcript } from '../../model/common.ts';
import { isJsonObject } from '../../model/json.ts';
import { FileExistsError } from '../../fs/atomic.ts';
import { entryPath, readDirSafe } from '../../fs/dir.ts';
import { normalizeTimestamp, titleFromText } from '../common-values.ts';
import { envValue, homeDir } from '../env.ts';
import { loadResult } from '../load-result.ts';
import { assertSafeSessionId, sessionUuid } from '../session-id.ts';
import { createSqliteFile, readSqlite, tableColumns, type SqliteDb } from '../sqlite-file.ts';
import type {
  DiscoverResult,
  LoadResult,
  SaveResult,
  SavingStore,
  SessionSummary,
  Warning,
} from '../types.ts';
import type { CursorBlob, CursorDb } from './records.ts';
import { millisTime } from '../native-values.ts';

const HARNESS = 'cursor';

export const CURSOR_ROOT_ENV = 'TXCRIPT_CURSOR_ROOT';

/**
 * The chats folders to read, the one to write first among them when it is in
 * use: `$TXCRIPT_CURSOR_ROOT` alone, else `$CURSOR_CONFIG_DIR/chats` alone
 * (the CLI's config-folder override), else `~/.cursor/chats` and, on Linux,
 * `$XDG_CONFIG_HOME/cursor/chats` (where the CLI puts its config when that
 * variable is set).
 */
export function cursorChatsRoots(env: NodeJS.ProcessEnv = process.env): string[] {
  const explicit = envValue(env, CURSOR_ROOT_ENV);
  if (explicit !== undefined) return [explicit];
  const config = envValue(env, 'CURSOR_CONFIG_DIR');
  if (config !== undefined) return [path.join(config, 'chats')];
  const home = homeDir(env);
  const xdg = envValue(env, 'XDG_CONFIG_HOME') ?? path.join(home, '.config');
  return [path.join(home, '.cursor', 'chats'), path.join(xdg, 'cursor', 'chats')];
}

/** The workspace folder name: the hex MD5 of the workspace's absolute path. */
export function workspaceHash(cwd: string): string {
  return createHash('md5').update(cwd).digest('hex');
}

interface SessionDir {
  dir: string;
  id: string;
}

async function sessionDirs(roots: readonly string[]): Promise<SessionDir[]> {
  const out: SessionDir[] = [];
  for (const root of roots)
    for (const ws of await readDirSafe(root)) {
      if (!ws.isDirectory()) continue;
      const wsDir = entryPath(root, ws.name);
      for (const s of await readDirSafe(wsDir))
        if (s.isDirectory() && !s.name.startsWith('.') && existsSync(path.join(wsDir, s.name, 'store.db')))
          out.push({ dir: entryPath(wsDir, s.name), id: s.name });
    }
  return out;
}

function readSessionMeta(dir: string, warnings: Warning[]): Record<string, unknown> | undefined {
  const file = path.join(dir, 'meta.json');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const v: unknown = JSON.parse(text);
    if (isJsonObject(v)) return v;
  } catch {
    // reported below
  }
  warnings.push({ source: file, message: 'not a JSON object; its title and times are not used' });
  return undefined;
}

function readRows(db: SqliteDb, file: string): Omit<CursorDb, 'sessionMeta'> {
  if (!tableColumns(db, 'blobs').has('data'))
    throw new Error(`${file} has no "blobs" table: not a Cursor chat store`);
  const blobs = (
    db.prepare('SELECT id, data FROM blobs ORDER BY rowid').all() as { id: unknown; data: unknown }[]
  ).map((r): CursorBlob => ({
    id: String(r.id),
    data:
      r.data instanceof Uint8Array ? r.data : Buffer.from(typeof r.data === 'string' ? r.data : '', 'utf8'),
  }));
  const meta = tableColumns(db, 'meta').has('value')
    ? (
        db.prepare('SELECT key, value FROM meta ORDER BY key').all() as { key: unknown; value: unknown }[]
      ).map((r) => ({
        key: String(r.key),
        value: String(r.value),
      }))
    : [];
  return { blobs, meta };
}

/** A session's rows and `meta.json`. */
export async function readCursorDb(dir: string, warnings: Warning[] = []): Promise<CursorDb> {
  const file = path.join(dir, 'store.db');
  const rows = await readSqlite(file, (db) => readRows(db, file));
  const sessionMeta = readSessionMeta(dir, warnings);
  return {
    ...rows,
    ...(sessionMeta !== undefined ? { sessionMeta: sessionMeta as CursorDb['sessionMeta'] } : {}),
  };
}

/** The listing facts of one session, read without the codec: message blobs are counted by role. */
async function summarize({ dir, id }: SessionDir, warnings: Warning[]): Promise<SessionSummary> {
  const file = path.join(dir, 'store.db');
  const { jsons, agentName } = await readSqlite(file, (db) => {
    if (!tableColumns(db, 'blobs').has('data'))
      throw new Error('no "blobs" table: not a Cursor chat store, not listed');
    const rows = db
      .prepare("SELECT CAST(data AS TEXT) AS text FROM blobs WHERE substr(data, 1, 1) = X'7B' ORDER BY rowid")
      .all() as { text: string }[];
    let name: string | undefined;
    if (tableColumns(db, 'meta').has('value')) {
      const raw = (
        db.prepare("SELECT value FROM meta WHERE key = '0'").get() as { value?: unknown } | undefined
      )?.value;
      if (typeof raw === 'string') {
        for (const t of [
          raw,
          /^(?:[0-9a-f]{2})+$/i.test(raw) ? Buffer.from(raw, 'hex').toString('utf8') : '',
        ]) {
          try {
            const v: unknown = JSON.parse(t);
            if (isJsonObject(v) && typeof v.name === 'string') name = v.name;
            break;
          } catch {
            // the other encoding
          }
        }
      }
    }
    return { jsons: rows.map((r) => r.text), agentName: name };
  });
  let count = 0;
  let last: number | undefined;
  let prompt: string | undefined;
  for (const text of jsons) {
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      continue; // the codec reports it when the session is read
    }
    if (!isJsonObject(v) || (v.role !== 'user' && v.role !== 'assistant' && v.role !== 'tool')) continue;
    if (v.role === 'user' && text.includes('<user_info>')) continue;
    count++;
    if (typeof v.createdAt === 'number' && (last === undefined || v.createdAt > last)) last = v.createdAt;
    if (prompt === undefined && v.role === 'user') {
      const c = v.content;
      const first =
        typeof c === 'string'
          ? c
          : Array.isArray(c)
            ? c.find((p) => isJsonObject(p) && typeof p.text === 'string')
            : undefined;
      const t = typeof first === 'string' ? first : isJsonObject(first) ? (first.text as string) : undefined;
      if (t !== undefined) prompt = t.replace(/<\/?user_query>/g, '');
    }
  }
  const meta = readSessionMeta(dir, warnings);
  const title =
    (typeof meta?.title === 'string' && meta.title !== '' ? meta.title : undefined) ??
    (agentName !== undefined && agentName !== '' ? agentName : undefined) ??
    (prompt !== undefined ? titleFromText(prompt) : undefined);
  const lastActivity =
    millisTime(meta?.updatedAtMs) ??
    millisTime(last) ??
    normalizeTimestamp(statSync(file).mtime.toISOString());
  return {
    id,
    harness: HARNESS,
    locator: dir,
    messageCount: count,
    ...(title !== undefined ? { title } : {}),
    ...(lastActivity !== undefined ? { lastActivity } : {}),
  };
}

/** The chats folder a new session goes to: the one whose sessions changed last, else the first. */
async function writeRoot(roots: readonly string[]): Promise<string> {
  let best: { root: string; at: number } | undefined;
  for (const root of roots)
    for (const s of await sessionDirs([root])) {
      const at = statSync(s.dir).mtimeMs;
      if (best === undefined || at > best.at) best = { root, at };
    }
  return best?.root ?? roots[0]!;
}

function writeRows(db: SqliteDb, rows: CursorDb): void {
  db.exec(
    'CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB); CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);',
  );
  const blob = db.prepare('INSERT OR REPLACE INTO blobs (id, data) VALUES (?, ?)');
  for (const b of rows.blobs) blob.run(b.id, Buffer.from(b.data));
  const meta = db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)');
  for (const m of rows.meta) meta.run(m.key, m.value);
}

/** Write a session folder `<root>/<md5(cwd)>/<id>/` whole; refuses an existing one. */
export async function writeCursorSession(
  root: string,
  cwd: string,
  id: string,
  rows: CursorDb,
  prompts: string[],
): Promise<string> {
  assertSafeSessionId(id, HARNESS);
  const wsDir = path.join(root, workspaceHash(cwd));
  const target = path.join(wsDir, id);
  if (existsSync(target)) throw new FileExistsError(target);
  await fs.mkdir(wsDir, { recursive: true, mode: 0o700 });
  const temp = await fs.mkdtemp(path.join(wsDir, `.${id}.`));
  try {
    await createSqliteFile(path.join(temp, 'store.db'), (db) => writeRows(db, rows));
    if (rows.sessionMeta !== undefined)
      await fs.writeFile(path.join(temp, 'meta.json'), JSON.stringify(rows.sessionMeta), { mode: 0o600 });
    await fs.writeFile(path.join(temp, 'prompt_history.json'), `${JSON.stringify(prompts, null, 2)}\n`, {
      mode: 0o600,
    });
    // rename(2) would replace an empty folder made meanwhile; the check above and this one leave only that race.
    if (existsSync(target)) throw new FileExistsError(target);
    await fs.rename(temp, target);
  } finally {
    await fs.rm(temp, { recursive: true, force: true });
  }
  return target;
}

export function cursorStore(env: NodeJS.ProcessEnv = process.env): SavingStore {
  const roots = cursorChatsRoots(env);
  const find = async (id: string): Promise<SessionDir | undefined> =>
    (await sessionDirs(roots)).find((s) => s.id === id);
  return {
    async discover(options): Promise<DiscoverResult> {
      const dirs = await sessionDirs(roots);
      const sessions: SessionSummary[] = [];
      const warnings: Warning[] = [];
      let done = 0;
      for (const s of dirs) {
        try {
          sessions.push(await summarize(s, warnings));
        } catch (e) {
          warnings.push({
            source: path.join(s.dir, 'store.db'),
            message: `unreadable, skipped: ${(e as Error).message}. Move the folder away if it is not a Cursor session`,
          });
        }
        options?.onProgress?.(++done, dirs.length);
      }
      return { sessions, warnings };
    },

    async locate(id: string): Promise<string[]> {
      assertSafeSessionId(id, HARNESS);
      const s = await find(id);
      return s === undefined ? [] : [s.dir];
    },

    async load(id: string): Promise<LoadResult> {
      assertSafeSessionId(id, HARNESS);
      const s = await find(id);
      if (s === undefined)
        throw new Error(
          `cursor: no session ${id} under ${roots.join(' or ')}; run \`txcript list\` to see the ids`,
        );
      const warnings: Warning[] = [];
      const rows = await readCursorDb(s.dir, warnings);
      const [{ cursorCodec }, { cursorDocument }] = await Promise.all([
        import('./codec.ts'),
        import('./records.ts'),
      ]);
      const source = path.join(s.dir, 'store.db');
      return loadResult(
        cursorCodec,
        cursorDocument(rows),
        { id, source, timestamp: statSync(source).mtime.toISOString() },
        warnings,
      );
    },

    async save(transcript: Transcript): Promise<SaveResult> {
      const id = sessionUuid(transcript.meta.id);
      assertSafeSessionId(id, HARNESS);
      if ((await find(id)) !== undefined) throw new FileExistsError(`${id} (an existing Cursor session)`);
      const cwd =
        transcript.meta.cwd !== undefined && transcript.meta.cwd !== '' ? transcript.meta.cwd : process.cwd();
      const [{ cursorCodec }, { cursorDb }] = await Promise.all([
        import('./codec.ts'),
        import('./records.ts'),
      ]);
      const doc = cursorCodec.fromCommon({
        meta: { ...transcript.meta, id, cwd },
        messages: transcript.messages,
      });
      const { db } = cursorDb(doc, id);
      const prompts = transcript.messages
        .filter((m) => m.role === 'user')
        .flatMap((m) => m.content.flatMap((b) => (b.type === 'text' && b.text !== '' ? [b.text] : [])));
      const dir = await writeCursorSession(await writeRoot(roots), cwd, id, db, prompts);
      return { id, locator: dir };
    },
  };
}
