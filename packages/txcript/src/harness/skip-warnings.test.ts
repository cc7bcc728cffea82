/**
 * A skipped line, record or value is a warning that names the file (and the
 * line, row or session) and says what the user can do about it, not only what
 * happened.
 */
import { appendFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { writeCoworkHome, CW_BROKEN, CW_MAIN_CLI, CW_MAIN_ID } from '../../test/fixtures/cowork/generate.ts';
import { HE_MAIN_ID, writeHermesDb } from '../../test/fixtures/hermes/generate.ts';
import { OC_MAIN_ID, writeOpenCodeDb } from '../../test/fixtures/opencode/generate.ts';
import { claudeCodeText } from './claude-code/index.ts';
import { coworkStore } from './cowork/index.ts';
import { hermesStore } from './hermes/index.ts';
import { openCodeLocator, openCodeStore } from './opencode/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'txcript-skip-warnings-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a JSONL line that is not a record', () => {
  it('is skipped with a warning that names its line and says how to read it', () => {
    const text = '{"type":"user","message":{"role":"user","content":"hi"}}\n{"type":"assis\n';
    const { warnings } = claudeCodeText.parse(text, 's.jsonl');
    expect(warnings).toContainEqual({
      source: 's.jsonl',
      line: 2,
      message: expect.stringMatching(
        /^malformed JSON .*skipped and the rest read.*repair its JSON there, or delete it/,
      ) as string,
    });
  });
});

describe('Cowork', () => {
  const home = join(dir, 'cowork');
  writeCoworkHome(home);
  const env = { HOME: home };

  it('a record that is not a session: restore it or move it away', async () => {
    const { warnings } = await coworkStore(env).discover();
    const broken = warnings.find((w) => w.source.endsWith(CW_BROKEN));
    expect(broken?.message).toMatch(/skipped, as the app skips it\. If it was a session, restore the file/);
    expect(broken?.message).toMatch(/move it out of \/.+ to stop this warning/);
  });

  it('a transcript line that is not JSON: its line, and how to read it', async () => {
    const transcript = findFile(join(home, '.config'), `${CW_MAIN_CLI}.jsonl`);
    appendFileSync(transcript, '{"type":"user","mess\n');
    const { warnings } = await coworkStore(env).load(CW_MAIN_ID);
    expect(warnings).toContainEqual({
      source: transcript,
      line: expect.any(Number) as number,
      message: expect.stringMatching(/^not JSON; .*repair its JSON there, or delete it/) as string,
    });
  });
});

describe('OpenCode', () => {
  it("a session's model that is not JSON: the session, and the column to set", async () => {
    const db = join(dir, 'opencode.db');
    writeOpenCodeDb(db);
    const sql = new Database(db);
    sql.prepare('UPDATE session SET model = ? WHERE id = ?').run('{"providerID":', OC_MAIN_ID);
    sql.close();
    const { warnings } = await openCodeStore({ OPENCODE_DB: db }).load(OC_MAIN_ID);
    const w = warnings.find((x) => x.message.includes('model'));
    expect(w?.source).toBe(openCodeLocator(db, OC_MAIN_ID));
    expect(w?.message).toMatch(/read without its model\. To keep it, set the column/);
    expect(w?.message).toContain(
      `UPDATE session SET model = '{"providerID":"…","modelID":"…"}' WHERE id = '${OC_MAIN_ID}'`,
    );
  });
});

describe('Hermes', () => {
  it('structured content that is not JSON: the row, and where to repair it', async () => {
    const db = join(dir, 'hermes', 'state.db');
    writeHermesDb(db);
    const sql = new Database(db);
    const row = sql
      .prepare("SELECT id FROM messages WHERE session_id = ? AND role = 'user' ORDER BY id LIMIT 1")
      .get(HE_MAIN_ID) as { id: number };
    sql.prepare('UPDATE messages SET content = ? WHERE id = ?').run('\0json:[{"type":', row.id);
    sql.close();
    const { warnings } = await hermesStore({ HERMES_HOME: join(dir, 'hermes') }).load(HE_MAIN_ID);
    const w = warnings.find((x) => x.message.includes('structured content'));
    expect(w?.source).toBe(db);
    expect(w?.message).toMatch(new RegExp(`^message row ${row.id}: `));
    expect(w?.message).toMatch(/To read its parts, repair the JSON in the content column of that row/);
  });
});

/** The one file named `name` under `root`. */
function findFile(root: string, name: string): string {
  const hits: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name === name) hits.push(join(d, e.name));
    }
  };
  walk(root);
  expect(hits).toHaveLength(1);
  return hits[0]!;
}
