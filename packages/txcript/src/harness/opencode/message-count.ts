/**
 * How many Common messages each OpenCode session becomes, for the listing: the number `view`
 * shows. One OpenCode message splits into several Common ones (runs of tool calls, their results),
 * so a row count is wrong. Every part is read as a light copy (its kind, flags and the start of its text
 * past leading blanks, never a whole text or a tool's output), and the light session goes through the real codec:
 * the count is the codec's, by construction, at the cost of one pass over the parts in SQLite.
 */
import type BetterSqlite from 'better-sqlite3';
import type { JsonObject } from '../../model/common.ts';
import { isJsonObject } from '../../model/json.ts';
import { openCodeCodec } from './codec.ts';

/** What of a part the codec's grouping looks at; a data URL cut after its comma still reads as an image. */
const LIGHT_PART = `json_object(
  'type', json_extract(p.data, '$.type'),
  'tool', json_extract(p.data, '$.tool'),
  'callID', json_extract(p.data, '$.callID'),
  'synthetic', json(CASE json_type(p.data, '$.synthetic') WHEN 'true' THEN 'true' ELSE 'null' END),
  'text', CASE WHEN json_type(p.data, '$.text') = 'text' THEN
            substr(ltrim(json_extract(p.data, '$.text'), ' ' || char(9, 10, 11, 12, 13)), 1, 64)
          END,
  'mime', json_extract(p.data, '$.mime'),
  'url', substr(json_extract(p.data, '$.url'), 1, instr(json_extract(p.data, '$.url'), ',')),
  'state', json_object('status', json_extract(p.data, '$.state.status'))
)`;

/** Common message counts by session id, for every session with a readable message. */
export function openCodeMessageCounts(conn: BetterSqlite.Database): Map<string, number> {
  const parts = new Map<string, JsonObject[]>();
  for (const row of conn
    .prepare(
      `SELECT p.message_id AS m, ${LIGHT_PART} AS light FROM part p
        WHERE json_valid(p.data) ORDER BY p.message_id, p.id`,
    )
    .iterate() as Iterable<{ m: string; light: string }>) {
    const light = JSON.parse(row.light) as JsonObject;
    const list = parts.get(row.m);
    if (list === undefined) parts.set(row.m, [light]);
    else list.push(light);
  }
  const sessions = new Map<string, JsonObject[]>();
  for (const row of conn
    .prepare(
      `SELECT m.session_id AS s, m.id, json_object('role', json_extract(m.data, '$.role')) AS info
         FROM message m WHERE json_valid(m.data) AND json_type(m.data) = 'object'
        ORDER BY m.session_id, m.time_created, m.id`,
    )
    .iterate() as Iterable<{ s: string; id: string; info: string }>) {
    const info: unknown = JSON.parse(row.info);
    const message: JsonObject = { info: isJsonObject(info) ? info : {}, parts: parts.get(row.id) ?? [] };
    const list = sessions.get(row.s);
    if (list === undefined) sessions.set(row.s, [message]);
    else list.push(message);
  }
  const counts = new Map<string, number>();
  for (const [id, messages] of sessions) {
    const transcript = openCodeCodec.toCommon(
      { kind: 'object', json: { info: { id }, messages } },
      { sessionId: id, timestamp: '1970-01-01T00:00:00Z' },
    );
    counts.set(id, transcript.messages.length);
  }
  return counts;
}
