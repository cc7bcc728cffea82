/**
 * Hermes rows, value-exact: every column of a session's `sessions` row and of
 * each of its active `messages` rows comes back from the export document
 * txcript reads (and from that document's text, rendered and parsed again):
 * numbers and REAL times as they are stored, NULLs as null, structured
 * content (`\0json:` + JSON) and tool calls as the JSON values they hold, or
 * as the text stored when that is not JSON. Rows of a rewound branch
 * (`active = 0`) are left out, as Hermes's exporter leaves them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import {
  HE_ARCHIVED_ID,
  HE_MAIN_ID,
  HE_OLD_ID,
  HE_REWOUND,
  writeHermesDb,
} from '../../../test/fixtures/hermes/generate.ts';
import type { JsonObject } from '../../model/common.ts';
import type { Warning } from '../types.ts';
import { hermesText, readHermesExport } from './index.ts';

const dir = mkdtempSync(join(tmpdir(), 'txcript-hermes-rows-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const db = join(dir, 'state.db');
writeHermesDb(db);

const STRUCTURED = '\0json:';

/** What a stored value is, as the export document carries it. */
function exported(column: string, value: unknown): unknown {
  const json = (text: string): unknown => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  };
  if (column === 'content' && typeof value === 'string' && value.startsWith(STRUCTURED))
    return json(value.slice(STRUCTURED.length));
  if (column === 'tool_calls' && typeof value === 'string' && value !== '') return json(value);
  return value;
}

describe.each([HE_MAIN_ID, HE_OLD_ID, HE_ARCHIVED_ID])('the rows of Hermes session %s', (id) => {
  it('come back value-exact, column by column, from the export document and from its text', () => {
    const sql = new Database(db, { readonly: true });
    try {
      const session = sql.prepare('SELECT * FROM sessions WHERE id = ?').get(id) as Record<string, unknown>;
      const rows = sql.prepare('SELECT * FROM messages WHERE session_id = ? ORDER BY id').all(id) as Array<
        Record<string, unknown>
      >;
      const active = rows.filter((r) => r.active === 1);
      expect(active.length).toBeGreaterThan(0);
      const warnings: Warning[] = [];
      const doc = readHermesExport(sql, id, db, warnings)!;
      const text = hermesText.render(hermesText.parse(JSON.stringify(doc), 'x.json').records);
      for (const read of [doc, JSON.parse(text) as JsonObject]) {
        const { messages, ...info } = read;
        expect(info).toEqual(session);
        expect(messages).toEqual(
          active.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, exported(k, v)]))),
        );
        expect(JSON.stringify(messages)).not.toContain(HE_REWOUND);
      }
    } finally {
      sql.close();
    }
  });
});
