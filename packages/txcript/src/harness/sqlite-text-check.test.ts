/**
 * Search's byte check asked of a database (sqlite-text-check.ts): a session
 * passes when its rows (every column, any table named), with its titles,
 * hold every needle, and whenever its rows could spell a needle otherwise.
 */
import Database from 'better-sqlite3';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionsHolding, type TextTable } from './sqlite-text-check.ts';

const dir = mkdtempSync(join(tmpdir(), 'txcript-sqlite-check-'));
const file = join(dir, 'state.db');
const TABLES: TextTable[] = [
  { table: 'sessions', sessionColumn: 'id' },
  { table: 'messages', sessionColumn: 'session_id' },
];
const at = (id: string, titles: string[] = []) => ({ locator: `${file}#${id}`, titles });

beforeAll(() => {
  const db = new Database(file);
  db.exec(`CREATE TABLE sessions (id TEXT, title TEXT);
    CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, content TEXT, tool_calls BLOB, n INTEGER)`);
  const s = db.prepare('INSERT INTO sessions VALUES (?, ?)');
  const m = db.prepare('INSERT INTO messages (session_id, content, tool_calls, n) VALUES (?, ?, ?, ?)');
  s.run('plain', 'Deploy notes');
  m.run('plain', 'Ship the RELEASE to staging', null, 4217);
  m.run('plain', 'later', Buffer.from('{"command":"kubectl rollout"}'), null);
  s.run('escaped', 'other');
  m.run('escaped', '{"text":"\\u0052elease"}', null, null);
  s.run('kelvin', 'other');
  m.run('kelvin', 'the \u212Aubernetes rollout', null, null);
  s.run('none', 'nothing');
  m.run('none', 'nothing to see', null, null);
  db.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const passing = async (
  needles: string[],
  sessions = ['plain', 'escaped', 'kelvin', 'none'].map((id) => at(id)),
) =>
  [...(await sessionsHolding(sessions, TABLES, needles))].map((l) => l.slice(l.lastIndexOf('#') + 1)).sort();

describe('the byte check in a database', () => {
  it('needs every needle in the session rows, any column and table, folded', async () => {
    expect(await passing(['release', 'staging'])).toEqual(['escaped', 'plain']);
    // A title column, a blob and a number count; words of two rows and two tables meet.
    expect(await passing(['deploy', 'kubectl', '4217'])).toEqual(['escaped', 'plain']);
    expect(await passing(['release', 'absent'])).toEqual(['escaped']);
  });

  it('passes a session whose rows could spell a needle otherwise: a \\u00 escape, a KELVIN SIGN for k', async () => {
    expect(await passing(['zebra'])).toEqual(['escaped']);
    expect(await passing(['kubernetes'])).toEqual(['escaped', 'kelvin']);
    expect(await passing(['rollout', 'kubernetes'])).toEqual(['escaped', 'kelvin']);
  });

  it("counts the session's titles as part of it", async () => {
    expect(await passing(['banner', 'nothing'], [at('none', ['dark banner fix'])])).toEqual(['none']);
  });

  it('reads a database that holds one session whole (no session column)', async () => {
    const chat = join(dir, 'chat');
    mkdirSync(chat);
    const db = new Database(join(chat, 'store.db'));
    db.exec('CREATE TABLE blobs (id TEXT, data BLOB); CREATE TABLE meta (key TEXT, value TEXT)');
    db.prepare('INSERT INTO blobs VALUES (?, ?)').run(
      'a',
      Buffer.from('{"role":"user","content":"Tide tables"}'),
    );
    db.prepare('INSERT INTO meta VALUES (?, ?)').run('0', 'harbour');
    db.close();
    const check = (needles: string[]) =>
      sessionsHolding(
        [{ locator: chat, titles: [] }],
        [{ table: 'blobs' }, { table: 'meta' }],
        needles,
        (d) => ({
          file: join(d, 'store.db'),
        }),
      );
    expect([...(await check(['tide', 'harbour']))]).toEqual([chat]);
    expect([...(await check(['tide', 'anchor']))]).toEqual([]);
  });

  it('tells the sessions of a key-value row by its key (keyedBy)', async () => {
    const kv = join(dir, 'state.vscdb');
    const db = new Database(kv);
    db.exec('CREATE TABLE cursorDiskKV (key TEXT, value BLOB)');
    const put = db.prepare('INSERT INTO cursorDiskKV VALUES (?, ?)');
    put.run('composerData:c1', '{"name":"Lighthouse"}');
    put.run('bubbleId:c2:b1', '{"text":"beacon check"}');
    put.run('agentKv:c1', '{"text":"beacon"}');
    db.close();
    const tables: TextTable[] = [
      {
        table: 'cursorDiskKV',
        keyedBy: {
          column: 'key',
          sessions: (key, ids) => (key.startsWith('agentKv:') ? [] : ids.filter((id) => key.includes(id))),
        },
      },
    ];
    const check = async (needles: string[]) =>
      [
        ...(await sessionsHolding(
          [`${kv}#c1`, `${kv}#c2`].map((locator) => ({ locator, titles: [] })),
          tables,
          needles,
        )),
      ]
        .map((l) => l.slice(l.lastIndexOf('#') + 1))
        .sort();
    expect(await check(['lighthouse'])).toEqual(['c1']);
    // The agentKv row names c1 but is not its text here.
    expect(await check(['beacon'])).toEqual(['c2']);
  });

  it('lets through what it cannot check: no database row named, a database it cannot read', async () => {
    const bad = join(dir, 'bad.db');
    writeFileSync(bad, 'not a database'.repeat(100));
    const pass = await sessionsHolding(
      [
        { locator: join(dir, 'folder'), titles: [] },
        { locator: `${bad}#x`, titles: [] },
      ],
      TABLES,
      ['zebra'],
    );
    expect([...pass].sort()).toEqual([`${bad}#x`, join(dir, 'folder')].sort());
  });
});
