/**
 * The listing's message count of a ledger (SQL, ledger-message-count.ts) against what `view` shows
 * (the entries read and converted by ledgerToCommon): the same number for every kind and edge, and
 * for random mixes of them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { readLedgerFile, readLedgerSummary } from './ledger-db.ts';
import { ledgerToCommon } from './ledger-to-common.ts';

const dir = mkdtempSync(join(tmpdir(), 'ledger-message-count-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const T = 1_788_485_400_000;
/** One entry of every kind and edge ledgerToCommon tells apart. */
const CASES: Record<string, object> = {
  prompt: { kind: 'message', role: 'user', content: 'hello' },
  emptyMessage: { kind: 'message', role: 'assistant', content: '' },
  reactionOnly: { kind: 'message', role: 'assistant', content: '', reactions: ['👍'] },
  send: { kind: 'send-message', message: { type: 'text', content: 'hi' } },
  sendFile: { kind: 'send-message', message: { type: 'file', path: '/tmp/a.txt' } },
  attachment: {
    kind: 'user-attachment',
    file_name: 'a.png',
    file_path: '/tmp/a.png',
    media_type: 'image/png',
  },
  toolDone: { kind: 'tool-call', name: 'shell', status: 'success', summary: 'ok' },
  toolFailed: { kind: 'tool-call', name: 'shell', status: 'failure' },
  toolRunning: { kind: 'tool-call', name: 'shell', status: 'running' },
  thinking: { kind: 'thinking', text: 'so' },
  emptyThinking: { kind: 'thinking', text: '' },
  userMessage: { kind: 'user-message', content: 'from the phone' },
  receivePrompt: { kind: 'receive-message', prompt: 'via prompt' },
  assistantText: { kind: 'assistant', text: 'via text' },
  emptyUser: { kind: 'user', content: '' },
  notice: { kind: 'notice', text: 'restarted' },
  turnEnded: { kind: 'turn-ended' },
  unknown: { kind: 'hologram', data: 1 },
  branchedTrue: { kind: 'message', role: 'user', content: 'old', branched: true },
  branchedOne: { kind: 'send-message', message: { type: 'text', content: 'old' }, branched: 1 },
};

let files = 0;
function ledgerOf(entries: object[]): string {
  const path = join(dir, `store-${files++}.db`);
  const db = new Database(path);
  db.exec(
    'CREATE TABLE transcript_entries (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, entry TEXT NOT NULL)',
  );
  const insert = db.prepare('INSERT INTO transcript_entries (id, entry) VALUES (?, ?)');
  entries.forEach((e, i) => insert.run(`e${i}`, JSON.stringify({ id: `e${i}`, timestampMs: T + i, ...e })));
  db.close();
  return path;
}

function viewCount(path: string): number {
  const rows = readLedgerFile(path).rows;
  return ledgerToCommon(
    rows.map((r) => r.entry),
    { sessionId: 's' },
  ).transcript.messages.length;
}

describe('a ledger listing counts the messages view shows', () => {
  it.each(Object.entries(CASES))('%s', (_, entry) => {
    const path = ledgerOf([entry]);
    expect(readLedgerSummary(path).messages).toBe(viewCount(path));
  });

  it('for every case the count is what the conversion makes, not the rows', () => {
    const path = ledgerOf(Object.values(CASES));
    const { count, messages } = readLedgerSummary(path);
    expect(count).toBe(Object.keys(CASES).length);
    expect(messages).toBe(viewCount(path));
    expect(messages).not.toBe(count);
  });

  it('for random mixes of them', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...Object.values(CASES)), { maxLength: 30 }), (entries) => {
        const path = ledgerOf(entries);
        expect(readLedgerSummary(path).messages).toBe(viewCount(path));
      }),
      { numRuns: 40 },
    );
  });
});
