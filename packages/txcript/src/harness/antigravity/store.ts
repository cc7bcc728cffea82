/**
 * Antigravity CLI conversations on disk (docs/formats/antigravity.md):
 * `<root>/conversations/<id>.db` (SQLite) and `<root>/brain/<id>/`, the root
 * `$TXCRIPT_ANTIGRAVITY_ROOT`, else `~/.gemini/antigravity-cli`. Databases
 * are opened read only. A new conversation's brain folder is made first
 * (the CLI does not resume a conversation without one), then its database,
 * whole, beside its place and linked in; an existing one is never replaced.
 */
import { existsSync, promises as fs, statSync } from 'node:fs';
import path from 'node:path';
import type { Transcript } from '../../model/common.ts';
import { FileExistsError, writeFileAtomic } from '../../fs/atomic.ts';
import { readDirSafe } from '../../fs/dir.ts';
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
import { type AntigravityDb, antigravityDocument, emptyDb, INDEXED_TABLES, type StepRow } from './records.ts';

const HARNESS = 'antigravity';

export const ANTIGRAVITY_ROOT_ENV = 'TXCRIPT_ANTIGRAVITY_ROOT';

/** The CLI's data folder: `$TXCRIPT_ANTIGRAVITY_ROOT`, else `~/.gemini/antigravity-cli`. */
export function antigravityRoot(env: NodeJS.ProcessEnv = process.env): string {
  return envValue(env, ANTIGRAVITY_ROOT_ENV) ?? path.join(homeDir(env), '.gemini', 'antigravity-cli');
}

const conversationsDir = (root: string): string => path.join(root, 'conversations');
const logsDir = (root: string, id: string): string =>
  path.join(root, 'brain', id, '.system_generated', 'logs');

/** A blob column's bytes; NULL (and a text value, which the CLI never writes) read as what they hold, NULL as none. */
const bytesOf = (v: unknown): Buffer =>
  Buffer.isBuffer(v) ? v : typeof v === 'string' ? Buffer.from(v, 'utf8') : Buffer.alloc(0);
const textOf = (v: unknown): string =>
  typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'bigint' ? String(v) : '';
const intOf = (v: unknown): number => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : 0);

function readRows(db: SqliteDb, file: string): AntigravityDb {
  if (!tableColumns(db, 'steps').has('step_payload'))
    throw new Error(`${file} has no "steps" table: not an Antigravity conversation`);
  const out = emptyDb();
  const all = (sql: string): Record<string, unknown>[] => db.prepare(sql).all() as Record<string, unknown>[];
  if (tableColumns(db, 'trajectory_meta').has('cascade_id'))
    out.trajectory_meta = all(
      'SELECT trajectory_id, cascade_id, trajectory_type, source FROM trajectory_meta ORDER BY trajectory_id',
    ).map((r) => ({
      trajectory_id: textOf(r.trajectory_id),
      cascade_id: textOf(r.cascade_id),
      trajectory_type: intOf(r.trajectory_type),
      source: intOf(r.source),
    }));
  out.steps = all(
    'SELECT idx, step_type, status, has_subtrajectory, metadata, error_details, permissions, task_details, render_info, step_payload, step_format FROM steps ORDER BY idx',
  ).map((r): StepRow => ({
    idx: intOf(r.idx),
    step_type: intOf(r.step_type),
    status: intOf(r.status),
    has_subtrajectory: intOf(r.has_subtrajectory) !== 0,
    metadata: bytesOf(r.metadata),
    error_details: bytesOf(r.error_details),
    permissions: bytesOf(r.permissions),
    task_details: bytesOf(r.task_details),
    render_info: bytesOf(r.render_info),
    step_payload: bytesOf(r.step_payload),
    step_format: intOf(r.step_format),
  }));
  if (tableColumns(db, 'gen_metadata').has('size'))
    out.gen_metadata = all('SELECT idx, data, size FROM gen_metadata ORDER BY idx').map((r) => ({
      idx: intOf(r.idx),
      data: bytesOf(r.data),
      size: intOf(r.size),
    }));
  for (const t of INDEXED_TABLES)
    if (tableColumns(db, t).has('data'))
      out[t] = all(`SELECT idx, data FROM ${t} ORDER BY idx`).map((r) => ({
        idx: intOf(r.idx),
        data: bytesOf(r.data),
      }));
  if (tableColumns(db, 'trajectory_metadata_blob').has('data'))
    out.trajectory_metadata_blob = all('SELECT id, data FROM trajectory_metadata_blob ORDER BY id').map(
      (r) => ({ id: textOf(r.id), data: bytesOf(r.data) }),
    );
  return out;
}

async function readText(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** A conversation's rows and its brain folder's display logs. */
export async function readAntigravityDb(root: string, id: string): Promise<AntigravityDb> {
  const file = path.join(conversationsDir(root), `${id}.db`);
  const rows = await readSqlite(file, (db) => readRows(db, file));
  const logs = logsDir(root, id);
  const transcript = await readText(path.join(logs, 'transcript.jsonl'));
  const full = await readText(path.join(logs, 'transcript_full.jsonl'));
  return {
    ...rows,
    ...(transcript !== undefined ? { transcript } : {}),
    ...(full !== undefined ? { transcript_full: full } : {}),
  };
}

/** The schema the CLI makes (its migration stamp is `user_version` 1: with 0 it treats the file as new). */
const SCHEMA = `
PRAGMA user_version = 1;
CREATE TABLE trajectory_meta (trajectory_id text, cascade_id text, trajectory_type integer, source integer, PRIMARY KEY (trajectory_id));
CREATE TABLE steps (idx integer, step_type integer NOT NULL DEFAULT 0, status integer NOT NULL DEFAULT 0, has_subtrajectory numeric NOT NULL DEFAULT false, metadata blob, error_details blob, permissions blob, task_details blob, render_info blob, step_payload blob, step_format integer NOT NULL DEFAULT 0, PRIMARY KEY (idx));
CREATE INDEX idx_steps_status ON steps(status);
CREATE INDEX idx_steps_step_type ON steps(step_type);
CREATE TABLE gen_metadata (idx integer, data blob, size integer NOT NULL DEFAULT 0, PRIMARY KEY (idx));
CREATE TABLE executor_metadata (idx integer, data blob, PRIMARY KEY (idx));
CREATE TABLE parent_references (idx integer, data blob, PRIMARY KEY (idx));
CREATE TABLE trajectory_metadata_blob (id text DEFAULT "main", data blob, PRIMARY KEY (id));
CREATE TABLE battle_mode_infos (idx integer, data blob, PRIMARY KEY (idx));
`;

function writeRows(db: SqliteDb, rows: AntigravityDb): void {
  db.exec(SCHEMA);
  const meta = db.prepare(
    'INSERT INTO trajectory_meta (trajectory_id, cascade_id, trajectory_type, source) VALUES (?, ?, ?, ?)',
  );
  for (const r of rows.trajectory_meta) meta.run(r.trajectory_id, r.cascade_id, r.trajectory_type, r.source);
  const step = db.prepare(
    'INSERT INTO steps (idx, step_type, status, has_subtrajectory, metadata, error_details, permissions, task_details, render_info, step_payload, step_format) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const blob = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  // The CLI leaves a step's optional blobs NULL; an empty one is written so.
  const optional = (b: Uint8Array): Buffer | null => (b.length === 0 ? null : blob(b));
  for (const s of rows.steps)
    step.run(
      s.idx,
      s.step_type,
      s.status,
      s.has_subtrajectory ? 1 : 0,
      blob(s.metadata),
      optional(s.error_details),
      optional(s.permissions),
      optional(s.task_details),
      optional(s.render_info),
      blob(s.step_payload),
      s.step_format,
    );
  const gen = db.prepare('INSERT INTO gen_metadata (idx, data, size) VALUES (?, ?, ?)');
  for (const r of rows.gen_metadata) gen.run(r.idx, blob(r.data), r.size);
  for (const t of INDEXED_TABLES) {
    const put = db.prepare(`INSERT INTO ${t} (idx, data) VALUES (?, ?)`);
    for (const r of rows[t]) put.run(r.idx, blob(r.data));
  }
  const main = db.prepare('INSERT INTO trajectory_metadata_blob (id, data) VALUES (?, ?)');
  for (const r of rows.trajectory_metadata_blob) main.run(r.id, blob(r.data));
}

/** Write conversation `id` under `root`: its brain logs, then its database; refuses an existing one. */
export async function writeAntigravityConversation(
  root: string,
  id: string,
  rows: AntigravityDb,
): Promise<string> {
  assertSafeSessionId(id, HARNESS);
  const file = path.join(conversationsDir(root), `${id}.db`);
  if (existsSync(file)) throw new FileExistsError(file);
  const logs = logsDir(root, id);
  await fs.mkdir(logs, { recursive: true, mode: 0o700 });
  if (rows.transcript !== undefined)
    await writeFileAtomic(path.join(logs, 'transcript.jsonl'), rows.transcript, { mode: 0o600 });
  if (rows.transcript_full !== undefined)
    await writeFileAtomic(path.join(logs, 'transcript_full.jsonl'), rows.transcript_full, { mode: 0o600 });
  await createSqliteFile(file, (db) => writeRows(db, rows));
  return file;
}

async function conversationIds(root: string): Promise<string[]> {
  return (await readDirSafe(conversationsDir(root)))
    .filter((e) => e.isFile() && e.name.endsWith('.db') && !e.name.startsWith('.'))
    .map((e) => e.name.slice(0, -'.db'.length));
}

async function summarize(root: string, id: string): Promise<SessionSummary> {
  const file = path.join(conversationsDir(root), `${id}.db`);
  const rows = await readSqlite(file, (db) => readRows(db, file));
  // The codec is loaded with the first conversation found: a listing without any loads none.
  const { conversationOf } = await import('./codec.ts');
  const t = conversationOf(rows, {
    sessionId: id,
    source: file,
    timestamp: statSync(file).mtime.toISOString(),
  });
  const last = t.messages[t.messages.length - 1]?.timestamp ?? t.meta.timestamp;
  return {
    id,
    harness: HARNESS,
    locator: file,
    messageCount: t.messages.length,
    lastActivity: last,
    ...(t.meta.title !== undefined ? { title: t.meta.title } : {}),
  };
}

export function antigravityStore(env: NodeJS.ProcessEnv = process.env): SavingStore {
  const root = antigravityRoot(env);
  const dbFile = (id: string): string => path.join(conversationsDir(root), `${id}.db`);
  return {
    async discover(options): Promise<DiscoverResult> {
      const ids = await conversationIds(root);
      const sessions: SessionSummary[] = [];
      const warnings: Warning[] = [];
      let done = 0;
      for (const id of ids) {
        try {
          sessions.push(await summarize(root, id));
        } catch (e) {
          warnings.push({
            source: dbFile(id),
            message: `unreadable, skipped: ${(e as Error).message}. Move the file out of the conversations folder if it is not an Antigravity conversation`,
          });
        }
        options?.onProgress?.(++done, ids.length);
      }
      return { sessions, warnings };
    },

    locate(id: string): Promise<string[]> {
      assertSafeSessionId(id, HARNESS);
      return Promise.resolve(existsSync(dbFile(id)) ? [dbFile(id)] : []);
    },

    async load(id: string): Promise<LoadResult> {
      assertSafeSessionId(id, HARNESS);
      const file = dbFile(id);
      if (!existsSync(file))
        throw new Error(
          `antigravity: no conversation ${id} in ${conversationsDir(root)}; run \`txcript list\` to see the ids`,
        );
      const rows = await readAntigravityDb(root, id);
      const { antigravityCodec } = await import('./codec.ts');
      return loadResult(antigravityCodec, antigravityDocument(rows), {
        id,
        source: file,
        timestamp: statSync(file).mtime.toISOString(),
      });
    },

    async save(transcript: Transcript): Promise<SaveResult> {
      const id = sessionUuid(transcript.meta.id);
      const { trajectoryRows } = await import('./trajectory.ts');
      const rows = trajectoryRows({ meta: { ...transcript.meta, id }, messages: transcript.messages });
      return { id, locator: await writeAntigravityConversation(root, id, rows) };
    },
  };
}
