import type { LedgerRow } from '@sendbox/txcript';
import { describe, expect, it } from 'vitest';
import { LedgerView } from './ledger-view.ts';
import type { SequencedEntry } from './ledger.ts';

const notice = (id: string, seq: number, text = id): SequencedEntry => ({
  id,
  kind: 'notice',
  text,
  timestampMs: seq,
  seq,
});
const row = (entry: SequencedEntry): LedgerRow => {
  const { seq, ...rest } = entry;
  return { seq, id: rest.id, entry: rest };
};

describe('LedgerView', () => {
  it('answers entries after a seq by binary search, at every boundary', () => {
    const view = new LedgerView();
    view.replace([2, 4, 6, 8].map((seq) => row(notice(`n${seq}`, seq))));
    const ids = (after: number) => view.after(after).map((e) => e.id);
    expect(ids(Number.MIN_SAFE_INTEGER)).toEqual(['n2', 'n4', 'n6', 'n8']);
    expect(ids(0)).toEqual(['n2', 'n4', 'n6', 'n8']);
    expect(ids(2)).toEqual(['n4', 'n6', 'n8']);
    expect(ids(5)).toEqual(['n6', 'n8']);
    expect(ids(8)).toEqual([]);
    expect(ids(100)).toEqual([]);
    expect(new LedgerView().after(0)).toEqual([]);
  });

  it('keeps its JSON equal to JSON.stringify of its entries as they grow and after a fresh read', () => {
    const view = new LedgerView();
    expect(view.json()).toBe('[]');
    view.addOwn([notice('a', 1, 'quote " and \\ and \u2028')]);
    expect(view.json()).toBe(JSON.stringify(view.all()));
    view.addOwn([notice('b', 2), notice('c', 3)]);
    view.addRows([row(notice('d', 4))]);
    expect(view.json()).toBe(JSON.stringify(view.all()));
    expect(JSON.parse(view.json())).toEqual(view.all());
    view.replace([row(notice('z', 9))]);
    expect(view.json()).toBe(JSON.stringify([notice('z', 9)]));
  });

  it('finds entries by id, the first one when an id repeats, and ignores seqs it already holds', () => {
    const view = new LedgerView();
    view.addOwn([notice('a', 1, 'first'), notice('b', 2)]);
    view.addRows([row(notice('b', 2, 'again')), row(notice('a', 3, 'second'))]);
    expect(view.all().map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(view.byId('a')).toMatchObject({ seq: 1, text: 'first' });
    expect(view.byId('b')).toMatchObject({ seq: 2, text: 'b' });
    expect(view.byId('nope')).toBeUndefined();
    expect(view.rowCount).toBe(2); // own entries count as rows; the caller sets the count after a read
  });

  it('catches up with a ledger: rows after its last seq, all again when rows landed before it, shrunk when fewer', () => {
    let rows = [1, 2].map((seq) => row(notice(`n${seq}`, seq)));
    let skipped = 0;
    const ledger = {
      countEntries: () => rows.length + skipped,
      readLedgerEntries: () => ({
        rows,
        warnings: Array.from({ length: skipped }, () => ({ source: 'store.db', message: 'bad row' })),
      }),
      readEntriesAfter: (seq: number) => ({ rows: rows.filter((r) => r.seq > seq), warnings: [] }),
    };
    const view = new LedgerView();
    view.readAll(ledger);
    expect(view.rowCount).toBe(2);
    expect(view.catchUp(ledger)).toBe('same');
    rows = [...rows, row(notice('n3', 3))];
    expect(view.catchUp(ledger)).toBe('added');
    expect(view.all().map((e) => e.id)).toEqual(['n1', 'n2', 'n3']);
    // Another writer's row landed below the last seq held: only a full read sees it.
    rows = [
      row(notice('n1', 1)),
      row(notice('n2', 2)),
      row(notice('n2b', 2.5)),
      row(notice('n3', 3)),
      row(notice('n4', 4)),
    ];
    expect(view.catchUp(ledger)).toBe('added');
    expect(view.all().map((e) => e.id)).toEqual(['n1', 'n2', 'n2b', 'n3', 'n4']);
    expect(view.rowCount).toBe(5);
    // A row readers skip counts as held, so it does not look like a missing row forever.
    skipped = 1;
    expect(view.catchUp(ledger)).toBe('added');
    expect(view.rowCount).toBe(6);
    expect(view.catchUp(ledger)).toBe('same');
    rows = rows.slice(0, 2);
    skipped = 0;
    expect(view.catchUp(ledger)).toBe('shrunk');
  });
});
