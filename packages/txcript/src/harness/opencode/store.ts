/**
 * OpenCode's sessions live in one SQLite database, `opencode.db` under
 * `$OPENCODE_DB` (the file itself), else `$XDG_DATA_HOME/opencode`, else
 * `~/.local/share/opencode`. It is read only (never locked for writing): a
 * session is assembled from its `session`, `message` and `part` rows into
 * the document `opencode export` prints. A row whose JSON does not parse
 * is skipped with a warning naming the database and the row.
 *
 * OpenCode owns its schema (Drizzle migrations that move quickly, and a
 * project id it derives from the folder's git history), so a session is
 * written by handing the document to `opencode import`, run in the
 * session's folder; with `TXCRIPT_OPENCODE_EXPORT_DIR` set (`continue
 * --out`) the document is written there instead, for `opencode import` by
 * hand.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { JsonObject, Transcript } from '../../model/common.ts';
import { createFileAtomic } from '../../fs/atomic.ts';
import { envValue, homeDir } from '../env.ts';
import { assertSafeSessionId } from '../session-id.ts';
import type {
  DiscoverResult,
  LoadResult,
  SaveResult,
  SavingStore,
  SessionSummary,
  Warning,
} from '../types.ts';
import { millisTime } from '../native-values.ts';
import { openReadOnly, tableColumns, type SqliteDb } from '../sqlite-file.ts';

const HARNESS = 'opencode';

export const OPENCODE_EXPORT_DIR_ENV = 'TXCRIPT_OPENCODE_EXPORT_DIR';

export function openCodeDbPath(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = envValue(env, 'OPENCODE_DB');
  if (explicit !== undefined) return explicit;
  const data = envValue(env, 'XDG_DATA_HOME') ?? path.join(homeDir(env), '.local', 'share');
  return path.join(data, 'opencode', 'opencode.db');
}

/** `<db>#<id>`: where a session lives (every session shares the one file). */
export function openCodeLocator(db: string, id: string): string {
  return `${db}#${id}`;
}

function runImport(file: string, cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('opencode', ['import', file], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', (e: NodeJS.ErrnoException) =>
      reject(
        new Error(
          e.code === 'ENOENT'
            ? 'opencode is not installed or not on PATH: its sessions are written by `opencode import`; install it, or use --out DIR to write the document to import by hand'
            : `could not run opencode import: ${e.message}`,
        ),
      ),
    );
    child.once('close', (code) => {
      const id = /Imported session: (\S+)/.exec(out)?.[1];
      if (code === 0 && id !== undefined) resolve(id);
      else reject(new Error(`opencode import ${file} failed (exit ${code}): ${(err || out).trim()}`));
    });
  });
}

/**
 * The export document (what `opencode export` prints) of session `id`, read
 * from its rows: the session row as `info`; each message row as a message's
 * `info`, its `data` spread under its id and session; each part row, its
 * `data` spread under its ids. undefined when there is no such session. A row
 * whose `data` is not a JSON object is skipped with a warning.
 */
export function readOpenCodeExport(
  conn: SqliteDb,
  db: string,
  id: string,
  warnings: Warning[],
): JsonObject | undefined {
  const session = conn.prepare('SELECT * FROM session WHERE id = ?').get(id) as
    Record<string, unknown> | undefined;
  if (session === undefined) return undefined;
  const info: Record<string, unknown> = {
    id,
    slug: session.slug ?? '',
    directory: session.directory ?? '',
    title: session.title ?? '',
    version: session.version ?? '',
    time: {
      created: session.time_created ?? 0,
      updated: session.time_updated ?? session.time_created ?? 0,
    },
  };
  if (typeof session.model === 'string') {
    try {
      info.model = JSON.parse(session.model) as unknown;
    } catch {
      warnings.push({
        source: openCodeLocator(db, id),
        message: `the session row's model column is not JSON (${JSON.stringify(session.model.slice(0, 60))}); the session is read without its model. To keep it, set the column to the JSON OpenCode writes, e.g. with sqlite3 "${db}": UPDATE session SET model = '{"providerID":"…","modelID":"…"}' WHERE id = '${id}'`,
      });
    }
  }
  const decode = (table: string, rowId: string, data: string): Record<string, unknown> | undefined => {
    try {
      const v: unknown = JSON.parse(data);
      if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
    } catch {
      // reported below
    }
    warnings.push({
      source: db,
      message: `${table} row ${rowId} of session ${id} holds no JSON object; skipped (OpenCode wrote it partly, or another program changed it)`,
    });
    return undefined;
  };
  const parts = new Map<string, Record<string, unknown>[]>();
  for (const p of conn
    .prepare('SELECT id, message_id, data FROM part WHERE session_id = ? ORDER BY message_id, id')
    .all(id) as {
    id: string;
    message_id: string;
    data: string;
  }[]) {
    const data = decode('part', p.id, p.data);
    if (data === undefined) continue;
    const list = parts.get(p.message_id) ?? [];
    list.push({ id: p.id, sessionID: id, messageID: p.message_id, ...data });
    parts.set(p.message_id, list);
  }
  const messages: Record<string, unknown>[] = [];
  for (const m of conn
    .prepare('SELECT id, time_created, data FROM message WHERE session_id = ? ORDER BY time_created, id')
    .all(id) as { id: string; time_created: number; data: string }[]) {
    const data = decode('message', m.id, m.data);
    if (data === undefined) continue;
    messages.push({
      info: { id: m.id, sessionID: id, ...data, time: data.time ?? { created: m.time_created } },
      parts: parts.get(m.id) ?? [],
    });
  }
  return JSON.parse(JSON.stringify({ info, messages })) as JsonObject;
}

export function openCodeStore(env: NodeJS.ProcessEnv = process.env): SavingStore {
  const db = openCodeDbPath(env);
  return {
    async discover(): Promise<DiscoverResult> {
      if (!existsSync(db)) return { sessions: [], warnings: [] };
      const warnings: Warning[] = [];
      let conn: SqliteDb;
      try {
        conn = await openReadOnly(db);
      } catch (e) {
        return {
          sessions: [],
          warnings: [{ source: db, message: `cannot open the OpenCode database: ${(e as Error).message}` }],
        };
      }
      try {
        const archived = tableColumns(conn, 'session').has('time_archived')
          ? 'WHERE s.time_archived IS NULL'
          : '';
        const rows = conn
          .prepare(
            `SELECT s.id, s.title, s.time_created AS created, s.time_updated AS updated,
                    (SELECT MAX(m.time_created) FROM message m WHERE m.session_id = s.id) AS last,
                    (SELECT p.data FROM part p JOIN message m ON m.id = p.message_id
                      WHERE p.session_id = s.id AND json_valid(m.data) AND json_extract(m.data, '$.role') = 'user'
                        AND json_valid(p.data) AND json_extract(p.data, '$.type') = 'text'
                      ORDER BY m.time_created, m.id, p.id LIMIT 1) AS prompt
               FROM session s ${archived}`,
          )
          .all() as {
          id: string;
          title: unknown;
          created: unknown;
          updated: unknown;
          last: unknown;
          prompt: string | null;
        }[];
        const { isPlaceholderTitle } = await import('./codec.ts');
        const { openCodeMessageCounts } = await import('./message-count.ts');
        const counts = openCodeMessageCounts(conn);
        const { titleFromText } = await import('../common-values.ts');
        const sessions: SessionSummary[] = rows.map((r) => {
          let title = typeof r.title === 'string' && !isPlaceholderTitle(r.title) ? r.title : undefined;
          if (title === undefined && r.prompt !== null) {
            const text = (JSON.parse(r.prompt) as { text?: unknown }).text;
            if (typeof text === 'string') title = titleFromText(text);
          }
          const lastActivity = millisTime(r.updated) ?? millisTime(r.last) ?? millisTime(r.created);
          return {
            id: r.id,
            harness: HARNESS,
            locator: openCodeLocator(db, r.id),
            messageCount: counts.get(r.id) ?? 0,
            ...(title !== undefined ? { title } : {}),
            ...(lastActivity !== undefined ? { lastActivity } : {}),
          };
        });
        return { sessions, warnings };
      } catch (e) {
        return {
          sessions: [],
          warnings: [{ source: db, message: `cannot read the OpenCode database: ${(e as Error).message}` }],
        };
      } finally {
        conn.close();
      }
    },

    locate(id: string): Promise<string[]> {
      assertSafeSessionId(id, HARNESS);
      return Promise.resolve(existsSync(db) ? [db] : []);
    },

    async load(id: string): Promise<LoadResult> {
      assertSafeSessionId(id, HARNESS);
      if (!existsSync(db))
        throw new Error(`opencode: no database at ${db}; set OPENCODE_DB or XDG_DATA_HOME`);
      const conn = await openReadOnly(db);
      const warnings: Warning[] = [];
      try {
        const exported = readOpenCodeExport(conn, db, id, warnings);
        if (exported === undefined)
          throw new Error(`opencode: no session ${id} in ${db}; run \`txcript list\` to see the ids`);
        const [{ openCodeCodec }, { builtDocument }] = await Promise.all([
          import('./codec.ts'),
          import('../json-document.ts'),
        ]);
        const doc = builtDocument(exported);
        const transcript = openCodeCodec.toCommon(doc, {
          sessionId: id,
          source: db,
          onWarning: (w) => warnings.push(w),
        });
        return { transcript, source: openCodeLocator(db, id), warnings };
      } finally {
        conn.close();
      }
    },

    async save(transcript: Transcript): Promise<SaveResult> {
      const [{ openCodeCodec, openCodeSessionId }, { openCodeText }] = await Promise.all([
        import('./codec.ts'),
        import('./records.ts'),
      ]);
      const id = openCodeSessionId(transcript.meta.id);
      assertSafeSessionId(id, HARNESS);
      const text = openCodeText.render(
        openCodeCodec.fromCommon({ ...transcript, meta: { ...transcript.meta, id } }),
      );
      const exportDir = envValue(env, OPENCODE_EXPORT_DIR_ENV);
      if (exportDir !== undefined) {
        const target = path.join(exportDir, `${id}.json`);
        await createFileAtomic(target, text);
        return { id, locator: target };
      }
      const cwd =
        transcript.meta.cwd !== undefined &&
        transcript.meta.cwd !== '' &&
        statSync(transcript.meta.cwd, { throwIfNoEntry: false })?.isDirectory() === true
          ? transcript.meta.cwd
          : process.cwd();
      // A private staging file under a fresh name (0600: the session may hold secrets).
      const staging = path.join(os.tmpdir(), `txcript-opencode-${randomUUID()}.json`);
      await writeFile(staging, text, { mode: 0o600, flag: 'wx' });
      try {
        const imported = await runImport(staging, cwd, env);
        return { id: imported, locator: openCodeLocator(db, imported) };
      } finally {
        await rm(staging, { force: true });
      }
    },
  };
}
