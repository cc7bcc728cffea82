/**
 * The unread state's rules (agent/unread.ts): on one store.db (a box), and on PostgreSQL with the
 * turn's writer and the user's gateway on two handles, as two workers of a cluster are.
 */
import { describe, expect, it } from 'vitest';
import { useBackend } from '../stores/contract.ts';
import { filesBackend } from '../stores/files/backend.ts';
import { openFileLedger } from '../stores/files/ledger.ts';
import { StoreLock } from '../stores/files/store-lock.ts';
import type { LedgerStore, SequencedEntry } from '../stores/ledger.ts';
import { clusterBackend, useServices } from '../stores/postgres/backend.ts';
import { PgLedger } from '../stores/postgres/ledger.ts';
import { UnreadBook } from './unread.ts';
import path from 'node:path';

let seq = 0;
const entry = (kind: string): SequencedEntry =>
  ({ id: `e${++seq}`, kind, text: 'x', timestampMs: 1, seq }) as unknown as SequencedEntry;
const send = () => entry('send-message');
const turnEnded = () => entry('turn-ended');

/** A clock that moves 10 ms per reading, shared by every book of a test (one wall clock). */
function clock(): () => number {
  let t = 1_000;
  return () => (t += 10);
}

describe('UnreadBook on one store.db', () => {
  const open = useBackend<LedgerStore>(
    filesBackend((home) => {
      const file = path.join(home, 'store.db');
      return { open: () => openFileLedger(file, new StoreLock(file)), close: (ledger) => ledger.close() };
    }),
  );

  it('counts the visible entries of a turn at its end, and opening the agent reads them all', async () => {
    const ledger = await open();
    const book = new UnreadBook(
      () => ledger,
      clock(),
      () => false,
    );
    book.count([entry('thinking'), send(), entry('notice')]);
    expect(book.current.unreadCount).toBe(2);
    expect(ledger.getKv('unreadState')).toBeUndefined(); // not stored per entry
    book.count([send(), turnEnded()]);
    expect(ledger.getKv('unreadState')).toMatchObject({ unreadCount: 3 });
    book.markRead();
    expect(ledger.getKv('unreadState')).toMatchObject({ unreadCount: 0, isManuallyUnread: false });
    expect(book.current.lastViewedAt).toBeGreaterThan(0);
  });

  it('counts nothing while the agent is open, and keeps the count when it cannot be stored', async () => {
    const ledger = await open();
    let focused = true;
    const now = clock();
    const book = new UnreadBook(
      () => ledger,
      now,
      () => focused,
    );
    book.count([send(), turnEnded()]);
    expect(ledger.getKv('unreadState')).toMatchObject({ unreadCount: 0 });
    focused = false;
    const full: Pick<LedgerStore, 'getKv' | 'updateKv'> = {
      getKv: (key) => ledger.getKv(key),
      updateKv: () => {
        throw new Error('ENOSPC: no space left on device');
      },
    };
    let store: Pick<LedgerStore, 'getKv' | 'updateKv'> = full;
    const later = new UnreadBook(
      () => store,
      now,
      () => focused,
    );
    later.reload();
    later.count([send(), turnEnded()]);
    expect(later.current.unreadCount).toBe(1);
    store = ledger;
    later.count([send(), turnEnded()]);
    expect(ledger.getKv('unreadState')).toMatchObject({ unreadCount: 2 });
  });
});

describe('UnreadBook with the turn on one worker and the user on another', () => {
  const services = useServices();
  const open = useBackend<PgLedger>(
    clusterBackend(services, ({ db, agentId }) => ({
      open: () => new PgLedger(db, { agentId, epoch: null }),
      close: (ledger) => ledger.close(),
    })),
  );

  it('keeps a "read" set through the gateway during a turn, and counts only what came after it', async () => {
    const now = clock();
    const workerLedger = await open();
    const gatewayLedger = await open();
    const worker = new UnreadBook(
      () => workerLedger,
      now,
      () => false,
    );
    const gateway = new UnreadBook(
      () => gatewayLedger,
      now,
      () => false,
    );
    // Unread from an earlier turn.
    worker.count([send(), send(), turnEnded()]);
    expect(gatewayLedger.getKv('unreadState')).toMatchObject({ unreadCount: 2 });
    // A turn writes two bubbles; the user opens the agent through the gateway; one more, then the end.
    worker.count([send()]);
    worker.count([send()]);
    gateway.reload();
    gateway.markRead();
    const readAt = gateway.current.lastViewedAt;
    worker.count([send(), turnEnded()]);
    const stored = gatewayLedger.getKv('unreadState') as { unreadCount: number; lastViewedAt: number };
    expect(stored.lastViewedAt).toBe(readAt);
    expect(stored.unreadCount).toBe(1);
    expect(worker.current).toEqual(stored);
  });

  it('keeps counting after another worker counted (a turn that moved): the stored count grows', async () => {
    const now = clock();
    const first = await open();
    const second = await open();
    const before = new UnreadBook(
      () => first,
      now,
      () => false,
    );
    before.count([send(), turnEnded()]);
    const after = new UnreadBook(
      () => second,
      now,
      () => false,
    );
    after.count([send(), send(), turnEnded()]);
    expect(second.getKv('unreadState')).toMatchObject({ unreadCount: 3 });
  });
});
