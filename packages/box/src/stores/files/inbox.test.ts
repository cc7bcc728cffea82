import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openLedgerForWrite } from '@sendbox/txcript';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { pendingView } from '../../agent/inputs.ts';
import { Inbox, needsRecovery } from './inbox.ts';
import { StoreLock } from './store-lock.ts';
import { StoreWriteError } from '../errors.ts';
import { diskFullError, WritePoints } from '../write-points.ts';
import { inboxContract } from '../inbox.contract.ts';
import { filesBackend } from './backend.ts';

let dir = '';
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = '';
});

async function storeDb(): Promise<string> {
  dir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-inbox-'));
  const file = path.join(dir, 'store.db');
  openLedgerForWrite(file).close();
  return file;
}

const open = (file: string, points = new WritePoints()) => new Inbox(file, new StoreLock(file), points);

describe('the inbox', () => {
  it('commits an input before accept returns, keeps its nonce across reopening, and lists pending inputs in order', async () => {
    const file = await storeDb();
    const inbox = open(file);
    expect(await inbox.accept('n1', { kind: 'prompt', prompt: 'first' }, 1)).toBe(true);
    expect(await inbox.accept('n2', { kind: 'prompt', prompt: 'second' }, 2)).toBe(true);
    // Another connection sees the rows at once: they are committed.
    const reader = new Database(file, { readonly: true });
    expect(reader.prepare('SELECT nonce FROM sendbox_inbox ORDER BY seq').pluck().all()).toEqual([
      'n1',
      'n2',
    ]);
    reader.close();
    await inbox.markStarted('n1', 0);
    inbox.close();

    const again = open(file);
    expect(again.has('n1')).toBe(true);
    expect(await again.accept('n1', { kind: 'prompt', prompt: 'first' }, 3)).toBe(false);
    expect(again.pending().map(pendingView)).toEqual([
      { nonce: 'n2', kind: 'prompt', text: 'second', acceptedAt: 2 },
    ]);
    again.close();
  });

  it('settles a pending input whose user message the ledger holds (a crash between the two commits)', async () => {
    const file = await storeDb();
    const inbox = open(file);
    await inbox.accept('n1', { kind: 'prompt', prompt: 'a' }, 1);
    await inbox.accept(
      'answer:t0s0',
      { kind: 'widget-answer', messageId: 't0s0', text: 'Red', value: 'red' },
      2,
    );
    await inbox.reconcile((nonce) => (nonce === 'n1' ? 4 : undefined));
    expect(inbox.pending().map((row) => row.nonce)).toEqual(['answer:t0s0']);
    inbox.close();
    const again = open(file);
    expect(again.pending().map((row) => row.nonce)).toEqual(['answer:t0s0']);
    again.close();
  });

  it('accepts nothing on a full disk: StoreWriteError, no row, the nonce still free', async () => {
    const file = await storeDb();
    let full = true;
    const inbox = open(file, new WritePoints({ fail: (store) => (full ? diskFullError(store) : null) }));
    let error: unknown;
    try {
      await inbox.accept('n1', { kind: 'prompt', prompt: 'a' }, 1);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(StoreWriteError);
    expect((error as StoreWriteError).diskFull).toBe(true);
    expect(inbox.has('n1')).toBe(false);
    full = false;
    expect(await inbox.accept('n1', { kind: 'prompt', prompt: 'a' }, 1)).toBe(true);
    inbox.close();
  });

  it('group commit: inputs that arrive together share one fdatasync of the WAL, and each is acknowledged (and pending) only after a sync that began after its row', async () => {
    const file = await storeDb();
    const inbox = open(file);
    await inbox.accept('first', { kind: 'prompt', prompt: 'alone' }, 1);
    expect(inbox.syncs).toBe(1);

    const syncsAtAck: number[] = [];
    const arriving = Array.from({ length: 20 }, (_, i) =>
      inbox.accept(`n${i}`, { kind: 'prompt', prompt: `p${i}` }, 2).then((fresh) => {
        syncsAtAck.push(inbox.syncs);
        return fresh;
      }),
    );
    // Committed (a repeat is recognised) but not acknowledged: not pending, so no turn takes it yet.
    expect(inbox.has('n0')).toBe(true);
    expect(inbox.pending().map((row) => row.nonce)).toEqual(['first']);
    const repeat = inbox.accept('n3', { kind: 'prompt', prompt: 'p3' }, 3);
    expect(await Promise.all(arriving)).toEqual(Array.from({ length: 20 }, () => true));
    expect(await repeat).toBe(false);
    // One sync for all twenty: the first caller's started at once (the rows were all written
    // before it ran), the others' was the next one. Never one per input.
    expect(inbox.syncs).toBeLessThanOrEqual(3);
    for (const syncs of syncsAtAck) expect(syncs).toBeGreaterThanOrEqual(2);
    expect(inbox.pending().map((row) => row.nonce)).toEqual([
      'first',
      ...Array.from({ length: 20 }, (_, i) => `n${i}`),
    ]);
    inbox.close();
  });

  it("pending once committed (a routine's fire): its turn may start before the fdatasync, and durable(nonce) waits for one that began after its row", async () => {
    const file = await storeDb();
    const inbox = open(file);
    await inbox.accept('first', { kind: 'prompt', prompt: 'alone' }, 1);
    const before = inbox.syncs;
    expect(await inbox.accept('fire', { kind: 'prompt', prompt: 'tick' }, 2, { pending: 'committed' })).toBe(
      true,
    );
    // Pending at once, with no fdatasync yet.
    expect(inbox.syncs).toBe(before);
    expect(inbox.pending().map((row) => row.nonce)).toEqual(['first', 'fire']);
    await inbox.durable('fire');
    expect(inbox.syncs).toBe(before + 1);
    // On disk: a repeat is refused and resolves at once.
    expect(await inbox.accept('fire', { kind: 'prompt', prompt: 'tick' }, 3, { pending: 'committed' })).toBe(
      false,
    );
    inbox.close();
    const reopened = open(file);
    expect(reopened.pending().map((row) => row.nonce)).toEqual(['first', 'fire']);
    reopened.close();
  });

  it('tells start-up which agents need it: pending inputs, or a started turn without turn-ended', async () => {
    const file = await storeDb();
    expect(needsRecovery(file)).toBe(false);
    const inbox = open(file);
    await inbox.accept('n1', { kind: 'prompt', prompt: 'a' }, 1);
    expect(needsRecovery(file)).toBe(true);
    await inbox.markStarted('n1', 0);
    expect(needsRecovery(file)).toBe(true);
    const ledger = openLedgerForWrite(file);
    ledger.appendEntry({ id: 't0e', kind: 'turn-ended', timestampMs: 1 });
    ledger.close();
    expect(needsRecovery(file)).toBe(false);
    inbox.close();
    expect(needsRecovery(path.join(dir, 'missing.db'))).toBe(false);
  });
});

inboxContract(
  'files',
  filesBackend((home) => {
    const file = path.join(home, 'store.db');
    openLedgerForWrite(file).close();
    return { open: () => open(file), close: (inbox) => inbox.close() };
  }),
);
