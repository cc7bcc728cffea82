/**
 * One scope of memory kept as a StoredDocument (issue 25): in a cluster, a sealed row every worker
 * shares (stores/postgres/sealed-documents.ts), so what an agent saved in a turn on one worker is in
 * its next turn's system prompt on any other, and the user scope is one for the whole cluster.
 * Every read goes to the document; a write or forget is one `update` of it, whose changes never
 * interleave across workers, so two workers writing at once both land. A refused change (the cap, a
 * forget that finds nothing, a value that is not memory) writes nothing, nor does a duplicate save.
 */
import { existsSync } from 'node:fs';
import type { StoredDocument } from '../stores/documents.ts';
import {
  MEMORY_CAP_BYTES,
  parseMemory,
  withEntry,
  withoutEntry,
  type MemoryEntry,
  type MemoryScope,
  type MemoryStore,
} from './memory-store.ts';

export class DocumentMemory implements MemoryStore {
  constructor(
    private readonly document: StoredDocument,
    /** Where it is kept, for errors (a row's name). */
    private readonly where: string,
    readonly scope: MemoryScope,
    readonly cap = MEMORY_CAP_BYTES,
  ) {}

  async entries(): Promise<MemoryEntry[]> {
    return this.parse(await this.document.read());
  }

  async write(text: string, now: number): Promise<{ added: boolean; entries: MemoryEntry[] }> {
    // A duplicate changes nothing: the row is kept as it is, not sealed and written again.
    const entries = await this.entries();
    if (entries.some((entry) => entry.text === text)) return { added: false, entries };
    return this.document.update((current) => {
      const next = withEntry(this.parse(current), text, now, this.scope, this.cap);
      return { value: { entries: next.entries }, result: next };
    });
  }

  forget(text: string): Promise<{ removed: number; entries: MemoryEntry[] }> {
    return this.document.update((current) => {
      const next = withoutEntry(this.parse(current), text, this.scope);
      return { value: { entries: next.entries }, result: next };
    });
  }

  private parse(value: unknown): MemoryEntry[] {
    if (value === undefined) return [];
    return parseMemory(
      value,
      this.where,
      this.scope,
      'the box does not write over it: delete the row to start this memory empty',
    );
  }
}

/**
 * At a cluster worker's start: a cluster with no user memory yet takes the entries of the
 * `memory.json` in the worker's data dir (an operator moving a single box to a cluster keeps what
 * its agents saved for the user). Once the cluster has its own, a data dir's file is not read: the
 * answer says so, for the box log. A file that cannot be read is reported by `entries` and adopts nothing.
 */
export async function adoptMemory(
  document: StoredDocument,
  file: MemoryStore & { file: string },
): Promise<'adopted' | 'ignored' | 'none'> {
  if ((await document.read()) !== undefined) return existsSync(file.file) ? 'ignored' : 'none';
  if (!existsSync(file.file)) return 'none';
  const entries = await file.entries();
  return document.update((current) =>
    current === undefined
      ? { value: { entries }, result: 'adopted' as const }
      : { value: current, result: 'ignored' as const },
  );
}
