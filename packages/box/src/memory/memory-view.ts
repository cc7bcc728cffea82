/** Memory as the web UI's memory view shows it (gateway `listMemory`), and its delete (`forgetMemory`). */
import { HostError } from '../agent/errors.ts';
import type { AgentMemory } from './agent-memory.ts';
import {
  MemoryRefusal,
  memoryBytes,
  type MemoryEntry,
  type MemoryScope,
  type MemoryStore,
} from './memory-store.ts';

export interface MemoryScopeView {
  scope: MemoryScope;
  entries: MemoryEntry[];
  bytes: number;
  cap: number;
  /** Set when the scope cannot be read (what is wrong, and what to do); `entries` is then empty. */
  error?: string;
}

export interface MemoryView {
  scopes: MemoryScopeView[];
}

export async function memoryView(memory: AgentMemory): Promise<MemoryView> {
  const scopes: MemoryScopeView[] = [];
  for (const scope of ['agent', 'user'] as const) {
    const file = memory.scope(scope);
    try {
      const entries = await file.entries();
      scopes.push({ scope, entries, bytes: memoryBytes(entries), cap: file.cap });
    } catch (error) {
      scopes.push({ scope, entries: [], bytes: 0, cap: file.cap, error: (error as Error).message });
    }
  }
  return { scopes };
}

/** Removes the entries whose text is exactly `text`; none: 404 naming the near matches. */
export async function forgetEntry(file: MemoryStore, text: string): Promise<void> {
  try {
    await file.forget(text);
  } catch (error) {
    if (error instanceof MemoryRefusal) throw new HostError(error.message, 404);
    throw error;
  }
}
