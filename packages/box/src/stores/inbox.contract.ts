/** The InboxStore contract: every backend's inbox passes it (run by stores/files/inbox.test.ts). */
import { describe, expect, it } from 'vitest';
import { useBackend, type Backend } from './contract.ts';
import type { InboxStore } from './inbox.ts';

export function inboxContract(backend: string, make: Backend<InboxStore>): void {
  describe(`InboxStore contract (${backend})`, () => {
    const open = useBackend(make);

    it('accepts a nonce once, and keeps pending inputs in the order they came', async () => {
      const inbox = await open();
      expect(await inbox.accept('a', { kind: 'prompt', prompt: 'one' }, 1)).toBe(true);
      expect(await inbox.accept('b', { kind: 'retry' }, 2)).toBe(true);
      expect(await inbox.accept('a', { kind: 'prompt', prompt: 'again' }, 3)).toBe(false);
      expect(inbox.has('a')).toBe(true);
      expect(inbox.has('c')).toBe(false);
      expect(inbox.pending().map((row) => [row.nonce, row.input, row.state, row.acceptedAt])).toEqual([
        ['a', { kind: 'prompt', prompt: 'one' }, 'pending', 1],
        ['b', { kind: 'retry' }, 'pending', 2],
      ]);
    });

    it('keeps what it accepted, and what started or failed, across a reopen', async () => {
      const first = await open();
      await first.accept('a', { kind: 'prompt', prompt: 'one' }, 1);
      await first.accept('b', { kind: 'prompt', prompt: 'two' }, 2);
      await first.accept('c', { kind: 'prompt', prompt: 'three' }, 3);
      await first.markStarted('a', 0);
      await first.markFailed('b', 'no model');
      expect(first.pending().map((row) => row.nonce)).toEqual(['c']);
      const again = await open();
      expect(again.pending().map((row) => row.nonce)).toEqual(['c']);
      // A nonce stays accepted whatever became of its input.
      for (const nonce of ['a', 'b', 'c']) expect(again.has(nonce)).toBe(true);
      expect(await again.accept('b', { kind: 'prompt', prompt: 'two' }, 4)).toBe(false);
    });

    it('withdraws a pending input for good, and refuses one that started or was never sent', async () => {
      const inbox = await open();
      await inbox.accept('a', { kind: 'prompt', prompt: 'one' }, 1);
      await inbox.accept('b', { kind: 'prompt', prompt: 'two' }, 2);
      await inbox.markStarted('a', 0);
      expect(await inbox.withdraw('a', 'removed by the user')).toBe(false);
      expect(await inbox.withdraw('nope', 'removed by the user')).toBe(false);
      expect(await inbox.withdraw('b', 'removed by the user')).toBe(true);
      expect(inbox.pending()).toEqual([]);
      expect(inbox.has('b')).toBe(true);
      expect((await open()).pending()).toEqual([]);
    });

    it('reconciles pending inputs whose turn the ledger says started', async () => {
      const inbox = await open();
      await inbox.accept('a', { kind: 'prompt', prompt: 'one' }, 1);
      await inbox.accept('b', { kind: 'prompt', prompt: 'two' }, 2);
      await inbox.reconcile((nonce) => (nonce === 'a' ? 7 : undefined));
      expect(inbox.pending().map((row) => row.nonce)).toEqual(['b']);
      expect((await open()).pending().map((row) => row.nonce)).toEqual(['b']);
    });
  });
}
