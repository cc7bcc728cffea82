/**
 * OpenCode rows, value-exact: every `session`, `message` and `part` row of a
 * session comes back from the export document txcript reads it into (and from
 * that document's text, rendered and parsed again), column by column, the
 * `data` JSON compared as values. A row whose `data` is not a JSON object is
 * the one left out, with a warning. The columns an export document has no
 * place for (OpenCode's own bookkeeping, NOT_EXPORTED) are named, so a new
 * column is a decision, not a silent loss.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import {
  OC_ARCHIVED_ID,
  OC_BAD_PART,
  OC_MAIN_ID,
  OC_OLD_ID,
  writeOpenCodeDb,
} from '../../../test/fixtures/opencode/generate.ts';
import type { JsonObject } from '../../model/common.ts';
import type { Warning } from '../types.ts';
import { openCodeText, readOpenCodeExport } from './index.ts';

const dir = mkdtempSync(join(tmpdir(), 'txcript-opencode-rows-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const db = join(dir, 'opencode.db');
writeOpenCodeDb(db);

/** Columns with no place in an export document (`opencode export` leaves them out too). */
const NOT_EXPORTED = {
  session: [
    'project_id',
    'parent_id',
    'share_url',
    'summary_additions',
    'summary_deletions',
    'summary_files',
    'summary_diffs',
    'revert',
    'permission',
    'time_compacting',
    'time_archived',
  ],
  message: ['time_updated'],
  part: ['time_created', 'time_updated'],
};
const EXPORTED = {
  session: ['id', 'slug', 'directory', 'title', 'version', 'time_created', 'time_updated', 'model'],
  message: ['id', 'session_id', 'time_created', 'data'],
  part: ['id', 'message_id', 'session_id', 'data'],
};

interface Row {
  id: string;
  session_id: string;
  message_id?: string;
  time_created?: number;
  data: string;
}

/** The rows an export document stands for: what `opencode import` writes back from it. */
function rowsOf(doc: JsonObject): { messages: Row[]; parts: Row[] } {
  const messages: Row[] = [];
  const parts: Row[] = [];
  for (const m of doc.messages as Array<{ info: JsonObject; parts: JsonObject[] }>) {
    const { id, sessionID, ...data } = m.info;
    messages.push({ id: id as string, session_id: sessionID as string, data: JSON.stringify(data) });
    for (const p of m.parts) {
      const { id: pid, sessionID: sid, messageID, ...rest } = p;
      parts.push({
        id: pid as string,
        session_id: sid as string,
        message_id: messageID as string,
        data: JSON.stringify(rest),
      });
    }
  }
  return { messages, parts };
}

/** Rows with their `data` as values, in id order (the document orders them its own way). */
const values = (rows: Row[]) =>
  rows
    .map((r) => ({
      id: r.id,
      session_id: r.session_id,
      ...(r.message_id !== undefined ? { message_id: r.message_id } : {}),
      data: JSON.parse(r.data) as unknown,
    }))
    .sort((a, b) => a.id.localeCompare(b.id));

describe.each([OC_MAIN_ID, OC_OLD_ID, OC_ARCHIVED_ID])('the rows of OpenCode session %s', (id) => {
  it('come back value-exact from the export document and from its text', () => {
    const sql = new Database(db, { readonly: true });
    try {
      const session = sql.prepare('SELECT * FROM session WHERE id = ?').get(id) as Record<string, unknown>;
      const messageRows = sql.prepare('SELECT * FROM message WHERE session_id = ?').all(id) as Row[];
      const partRows = (sql.prepare('SELECT * FROM part WHERE session_id = ?').all(id) as Row[]).filter(
        (p) => p.id !== OC_BAD_PART,
      );
      for (const table of ['session', 'message', 'part'] as const) {
        const columns = (sql.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string }>).map(
          (c) => c.name,
        );
        expect(columns.sort()).toEqual([...EXPORTED[table], ...NOT_EXPORTED[table]].sort());
      }
      const warnings: Warning[] = [];
      const doc = readOpenCodeExport(sql, db, id, warnings)!;
      const text = openCodeText.render(openCodeText.parse(JSON.stringify(doc, null, 2), 'x.json').records);
      for (const read of [doc, JSON.parse(text) as JsonObject]) {
        expect(read.info).toEqual({
          id,
          slug: session.slug,
          directory: session.directory,
          title: session.title,
          version: session.version,
          time: { created: session.time_created, updated: session.time_updated },
          ...(typeof session.model === 'string' ? { model: JSON.parse(session.model) as unknown } : {}),
        });
        const back = rowsOf(read);
        // A message row's data without a time of its own takes the row's time_created: the same value.
        const withTimes = messageRows.map((r) => {
          const data = JSON.parse(r.data) as JsonObject;
          return { ...r, data: JSON.stringify({ ...data, time: data.time ?? { created: r.time_created } }) };
        });
        expect(values(back.messages)).toEqual(values(withTimes));
        expect(values(back.parts)).toEqual(values(partRows));
      }
      const bad = (sql.prepare('SELECT session_id FROM part WHERE id = ?').get(OC_BAD_PART) as Row)
        .session_id;
      expect(warnings.map((w) => w.message.includes(OC_BAD_PART))).toEqual(bad === id ? [true] : []);
    } finally {
      sql.close();
    }
  });
});
