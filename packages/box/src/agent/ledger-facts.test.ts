import { describe, expect, it } from 'vitest';
import type { SequencedEntry } from '../stores/ledger.ts';
import type { InboxRow } from '../stores/inbox.ts';
import { ledgerFacts } from './ledger-facts.ts';
import { QuestionBook } from './question-book.ts';

let seq = 0;
const at = (entry: Record<string, unknown>): SequencedEntry =>
  ({ timestampMs: 1, ...entry, seq: ++seq }) as unknown as SequencedEntry;

describe('ledgerFacts', () => {
  it('derives the next turn, started inputs, uploads by nonce and the uploads staged after the last prompt', () => {
    seq = 0;
    const rows = [
      at({
        id: 't0ua0',
        kind: 'user-attachment',
        file_name: 'a.txt',
        sandbox_path: 'uploads/a.txt',
        clientNonce: 'up-a',
      }),
      at({ id: 't0u', kind: 'message', role: 'user', content: 'hi', clientNonce: 'p0' }),
      at({ id: 't0e', kind: 'turn-ended' }),
      at({ id: 't1u', kind: 'message', role: 'user', content: 'again', clientNonce: 'p1' }),
      at({ id: 't1e', kind: 'turn-ended' }),
      at({
        id: 't2ua0',
        kind: 'user-attachment',
        file_name: 'b.txt',
        sandbox_path: 'uploads/b.txt',
        clientNonce: 'up-b',
      }),
    ];
    const facts = ledgerFacts(rows, [], new QuestionBook(), '/sandbox');
    expect(facts.nextTurn).toBe(2);
    expect([...facts.nonces]).toEqual(['p0', 'p1']);
    expect(facts.startedTurns.get('p1')).toBe(1);
    expect(facts.uploadsByNonce.get('up-a')).toBe('t0ua0');
    // Only the upload after the last prompt waits for the next one.
    expect(facts.pendingUploads).toEqual([
      { id: 't2ua0', fileName: 'b.txt', sandboxPath: '/sandbox/uploads/b.txt' },
    ]);
    expect(facts.awaitingUser).toBe(false);
  });

  it('waits on the user after an open approval card, and counts an accepted answer as answered', () => {
    seq = 0;
    const rows = [
      at({ id: 't0u', kind: 'message', role: 'user', content: 'go', clientNonce: 'p0' }),
      at({
        id: 't0c0-approval',
        kind: 'tool-call',
        name: 'web_fetch',
        status: 'awaiting-approval',
        toolCallId: 'call-1',
        approval: { subject: 'web_fetch' },
      }),
    ];
    const questions = new QuestionBook();
    expect(ledgerFacts(rows, [], questions, '/s').awaitingUser).toBe(true);
    const closed = [
      ...rows,
      at({ id: 't1u', kind: 'message', role: 'user', content: 'never mind', clientNonce: 'p1' }),
    ];
    expect(ledgerFacts(closed, [] as InboxRow[], questions, '/s').awaitingUser).toBe(false);
  });
});
