/** The LedgerStore contract: every backend's ledger passes it (run by stores/files/ledger.test.ts). */
import type { LedgerEntry } from '@sendbox/protocol';
import { describe, expect, it } from 'vitest';
import { useBackend, type Backend } from './contract.ts';
import type { LedgerStore } from './ledger.ts';

const notice = (id: string, text = id): LedgerEntry => ({ id, kind: 'notice', text, timestampMs: 1 });

export function ledgerContract(backend: string, make: Backend<LedgerStore>): void {
  describe(`LedgerStore contract (${backend})`, () => {
    const open = useBackend(make);

    it('appends entries with ascending seqs and reads them back in order', async () => {
      const ledger = await open();
      const first = ledger.appendEntries([notice('t0n0'), notice('t0e')]);
      const second = ledger.appendEntries([notice('t1n0')]);
      const seqs = [...first, ...second];
      expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
      expect(new Set(seqs).size).toBe(3);
      const read = ledger.readLedgerEntries();
      expect(read.warnings).toEqual([]);
      expect(read.rows.map((row) => [row.seq, row.id, row.entry.kind])).toEqual([
        [seqs[0], 't0n0', 'notice'],
        [seqs[1], 't0e', 'notice'],
        [seqs[2], 't1n0', 'notice'],
      ]);
      expect(ledger.readEntriesAfter(seqs[0]!).rows.map((row) => row.id)).toEqual(['t0e', 't1n0']);
      expect(ledger.countEntries()).toBe(3);
    });

    it('commits a batch whole: an invalid entry fails it and nothing of it is stored', async () => {
      const ledger = await open();
      ledger.appendEntries([notice('t0n0')]);
      const bad = { id: 't0n1', kind: 'notice' } as unknown as LedgerEntry; // no text
      expect(() => ledger.appendEntries([notice('t0n2'), bad])).toThrow();
      expect(ledger.readLedgerEntries().rows.map((row) => row.id)).toEqual(['t0n0']);
      expect(ledger.countEntries()).toBe(1);
    });

    it('keeps entries and kv values across a reopen, and another handle sees appends', async () => {
      const ledger = await open();
      ledger.appendEntries([notice('t0n0')]);
      ledger.setKv('unreadState', { unreadCount: 2 });
      expect(ledger.getKv('unreadState')).toEqual({ unreadCount: 2 });
      expect(ledger.getKv('absent')).toBeUndefined();
      const other = await open();
      expect(other.readLedgerEntries().rows.map((row) => row.id)).toEqual(['t0n0']);
      expect(other.getKv('unreadState')).toEqual({ unreadCount: 2 });
      other.appendEntries([notice('t0e')]);
      expect(ledger.countEntries()).toBe(2);
    });

    it('updates a kv value from what is stored now, a write by another handle included', async () => {
      const ledger = await open();
      const other = await open();
      const add = (n: number) => (current: unknown) => ({
        count: ((current as { count?: number } | undefined)?.count ?? 0) + n,
      });
      expect(ledger.updateKv('counter', add(1))).toEqual({ count: 1 });
      other.setKv('counter', { count: 10 });
      expect(ledger.updateKv('counter', add(2))).toEqual({ count: 12 });
      expect(other.getKv('counter')).toEqual({ count: 12 });
    });
  });
}
