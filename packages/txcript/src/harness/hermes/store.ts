/**
 * Hermes Agent's sessions: one SQLite database, `$HERMES_HOME/state.db`,
 * else `~/.hermes/state.db` (docs/formats/hermes.md). Read only: Hermes has
 * no way to import a session, and its database belongs to a running agent,
 * so txcript never writes it. A session is assembled into the object
 * `hermes sessions export` prints: the `sessions` row with its active
 * `messages` rows, structured content and tool calls decoded.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import type { JsonObject, JsonValue } from '../../model/common.ts';
import { titleFromText } from '../common-values.ts';
import { envValue, homeDir } from '../env.ts';
import { loadResult } from '../load-result.ts';
import { assertSafeSessionId } from '../session-id.ts';
import { readSqlite, tableColumns, type SqliteDb } from '../sqlite-file.ts';
import type { DiscoverResult, LoadResult, SessionSummary, Store, Warning } from '../types.ts';
import { secondsTime } from '../native-values.ts';

const HARNESS = 'hermes';

export function hermesDbPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(envValue(env, 'HERMES_HOME') ?? path.join(homeDir(env), '.hermes'), 'state.db');
}

/** `<db>#<id>`: every session shares the one file. */
export const hermesLocator = (db: string, id: string): string => `${db}#${id}`;

/** Hermes stores structured message content as text behind this prefix. */
const STRUCTURED = '\0json:';

const row = (r: unknown): JsonObject => {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(r as Record<string, unknown>))
    out[k] = v instanceof Uint8Array ? { $blob_hex: Buffer.from(v).toString('hex') } : (v as JsonValue);
  return out;
};

/** A message row as the exporter gives it: structured content and tool calls decoded. */
function exportedMessage(m: JsonObject, file: string, warnings: Warning[]): JsonObject {
  if (typeof m.content === 'string' && m.content.startsWith(STRUCTURED)) {
    try {
      m.content = JSON.parse(m.content.slice(STRUCTURED.length)) as JsonValue;
    } catch {
      warnings.push({
        source: file,
        message: `message row ${typeof m.id === 'number' ? m.id : '?'}: its structured content (after the "\\0json:" marker) is not JSON; the message is read with that text as it is stored. To read its parts, repair the JSON in the content column of that row of the messages table (sqlite3 "${file}")`,
      });
    }
  }
  if (typeof m.tool_calls === 'string' && m.tool_calls !== '') {
    try {
      m.tool_calls = JSON.parse(m.tool_calls) as JsonValue;
    } catch {
      // left as text: the codec reports it and leaves the calls out
    }
  }
  return m;
}

/** The export object of session `id`, or undefined when the database has no such session. */
export function readHermesExport(
  db: SqliteDb,
  id: string,
  file: string,
  warnings: Warning[],
): JsonObject | undefined {
  const session = db.prepare('SELECT * FROM sessions WHERE id = ?').get(id);
  if (session === undefined) return undefined;
  const out = row(session);
  const active = tableColumns(db, 'messages').has('active') ? 'AND active = 1' : '';
  out.messages = db
    .prepare(`SELECT * FROM messages WHERE session_id = ? ${active} ORDER BY id`)
    .all(id)
    .map((m) => exportedMessage(row(m), file, warnings));
  return out;
}

interface ListRow {
  id: string;
  title: string | null;
  parent_session_id: string | null;
  started_at: number | null;
  last_at: number | null;
  count: number;
  first_prompt: string | null;
}

function listRows(db: SqliteDb): ListRow[] {
  const s = tableColumns(db, 'sessions');
  const m = tableColumns(db, 'messages');
  if (!s.has('id') || !m.has('session_id'))
    throw new Error('it has no sessions and messages tables: not a Hermes state database');
  const active = m.has('active') ? 'AND m.active = 1' : '';
  const col = (c: string): string => (s.has(c) ? `s.${c}` : 'NULL');
  return db
    .prepare(
      `SELECT s.id AS id, ${col('title')} AS title, ${col('parent_session_id')} AS parent_session_id,
        ${col('started_at')} AS started_at,
        (SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id ${active}) AS last_at,
        (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id ${active} AND m.role IN ('user', 'assistant', 'tool')) AS count,
        (SELECT m.content FROM messages m WHERE m.session_id = s.id ${active} AND m.role = 'user' ORDER BY m.id LIMIT 1) AS first_prompt
       FROM sessions s ${s.has('archived') ? 'WHERE COALESCE(s.archived, 0) = 0' : ''}
       ORDER BY ${col('started_at')} DESC`,
    )
    .all() as ListRow[];
}

export function hermesStore(env: NodeJS.ProcessEnv = process.env): Store {
  const file = hermesDbPath(env);
  const read = <T>(f: (db: SqliteDb) => T): Promise<T> => readSqlite(file, f);
  return {
    async discover(): Promise<DiscoverResult> {
      if (!existsSync(file)) return { sessions: [], warnings: [] };
      try {
        const rows = await read(listRows);
        const sessions = rows.map((r): SessionSummary => {
          const prompt =
            typeof r.first_prompt === 'string' && !r.first_prompt.startsWith(STRUCTURED)
              ? r.first_prompt
              : undefined;
          const title =
            (r.title ?? '') !== '' ? r.title! : prompt !== undefined ? titleFromText(prompt) : undefined;
          const last = secondsTime(r.last_at ?? r.started_at ?? undefined);
          return {
            id: r.id,
            harness: HARNESS,
            locator: hermesLocator(file, r.id),
            messageCount: r.count,
            ...(title !== undefined ? { title } : {}),
            ...(last !== undefined ? { lastActivity: last } : {}),
            ...(r.parent_session_id !== null ? { parentId: r.parent_session_id } : {}),
          };
        });
        return { sessions, warnings: [] };
      } catch (e) {
        return {
          sessions: [],
          warnings: [
            {
              source: file,
              message: `unreadable, no Hermes sessions listed: ${(e as Error).message}. Check the file, or set HERMES_HOME to the Hermes folder`,
            },
          ],
        };
      }
    },

    async locate(id: string): Promise<string[]> {
      assertSafeSessionId(id, HARNESS);
      if (!existsSync(file)) return [];
      const found = await read((db) => db.prepare('SELECT 1 FROM sessions WHERE id = ?').get(id));
      return found === undefined ? [] : [file];
    },

    async load(id: string): Promise<LoadResult> {
      assertSafeSessionId(id, HARNESS);
      const warnings: Warning[] = [];
      const body = existsSync(file)
        ? await read((db) => readHermesExport(db, id, file, warnings))
        : undefined;
      if (body === undefined)
        throw new Error(`hermes: no session ${id} in ${file}; run \`txcript list\` to see the ids`);
      const [{ hermesCodec }, { builtDocument }] = await Promise.all([
        import('./codec.ts'),
        import('../json-document.ts'),
      ]);
      return loadResult(
        hermesCodec,
        builtDocument(body),
        { id, source: file, timestamp: statSync(file).mtime.toISOString() },
        warnings,
      );
    },
  };
}
