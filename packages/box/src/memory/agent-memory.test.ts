/**
 * MemoryBook's extension: in a cluster a turn's saves go to the place behind the session's lease
 * fence (memory-document.ts over fenced sealed rows), in a single box to the place itself.
 */
import { expect, it } from 'vitest';
import type { ExtensionAgent } from '../agent/extension.ts';
import { noScrub } from '../secrets/scrub.ts';
import type { AgentFence } from '../stores/postgres/leases.ts';
import { MemoryBook, type MemoryPlace } from './agent-memory.ts';
import type { MemoryScope, MemoryStore } from './memory-store.ts';

function recording(writes: string[], where: string, scope: MemoryScope): MemoryStore {
  return {
    scope,
    cap: 10_000,
    entries: () => Promise.resolve([]),
    write: (text) => {
      writes.push(`${where} ${text}`);
      return Promise.resolve({ added: true, entries: [{ text, createdAt: 1 }] });
    },
    forget: () => Promise.resolve({ removed: 1, entries: [] }),
  };
}

function place(
  writes: string[],
  where = 'unfenced',
): MemoryPlace & { behind(fence: AgentFence): MemoryPlace } {
  return {
    user: recording(writes, `${where} user`, 'user'),
    agent: () => recording(writes, `${where} agent`, 'agent'),
    behind: (fence) => place(writes, `epoch ${fence.epoch}`),
  };
}

async function save(book: MemoryBook, fence: AgentFence | undefined, scope: MemoryScope): Promise<void> {
  const agent = {
    id: 'agent-1',
    stores: fence ? { fence } : {},
    scrubber: () => noScrub,
    now: () => 1,
  } as unknown as ExtensionAgent;
  const memory = book.extensionFor(agent).toolServices!({ turn: 0, toolCallId: 'call-1' }).memory!;
  await memory.apply({ action: 'write', text: `a fact for ${scope}`, scope });
}

it('saves a turn’s memory behind its session’s fence when the place has one, else in the place itself', async () => {
  const writes: string[] = [];
  const book = new MemoryBook(place(writes));
  await save(book, { agentId: 'agent-1', epoch: 7 }, 'agent');
  await save(book, { agentId: 'agent-1', epoch: 7 }, 'user');
  await save(book, undefined, 'agent');
  expect(writes).toEqual([
    'epoch 7 agent a fact for agent',
    'epoch 7 user a fact for user',
    'unfenced agent a fact for agent',
  ]);
});
