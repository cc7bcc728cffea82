/**
 * One scope of memory, wherever it is kept (issue 21 item 3; issue 25): a file in the data dir
 * (memory-file.ts) or a document every worker of a cluster shares (memory-document.ts). Both keep
 * `{entries: [{text, createdAt}]}` and apply the same rules here: one entry per text, the cap, and
 * a forget by exact text that names the near matches when it misses.
 */
import { z } from 'zod';
import { nearMatches } from './near-matches.ts';

/** Bytes (UTF-8) one scope may hold; past it the model is told to condense (issue 21). */
export const MEMORY_CAP_BYTES = 8 * 1024;

export type MemoryScope = 'agent' | 'user';

export interface MemoryEntry {
  text: string;
  /** Epoch ms. */
  createdAt: number;
}

export interface MemoryStore {
  readonly scope: MemoryScope;
  readonly cap: number;
  /** The entries as kept now (none when there is nothing yet); throws when they cannot be read. */
  entries(): Promise<MemoryEntry[]>;
  /**
   * Adds an entry. An entry already held is not added twice. A write that would take the scope past
   * its cap is refused with the condense instruction (MemoryRefusal).
   */
  write(text: string, now: number): Promise<{ added: boolean; entries: MemoryEntry[] }>;
  /** Removes every entry whose text is exactly `text`; none: MemoryRefusal listing the near matches. */
  forget(text: string): Promise<{ removed: number; entries: MemoryEntry[] }>;
}

/** A write or forget the model can correct (its message says how); what is kept is unchanged. */
export class MemoryRefusal extends Error {
  override readonly name = 'MemoryRefusal';
}

/** The bytes a scope's entries take (what the cap counts): their texts, one per line. */
export function memoryBytes(entries: readonly MemoryEntry[]): number {
  return entries.reduce((sum, entry, i) => sum + Buffer.byteLength(entry.text) + (i > 0 ? 1 : 0), 0);
}

const memorySchema = z.looseObject({
  entries: z.array(z.looseObject({ text: z.string(), createdAt: z.number().default(0) })),
});

/**
 * The entries of a kept value, or an error naming `where` it is kept and `fix` (what the user does:
 * a damaged value is never written over).
 */
export function parseMemory(json: unknown, where: string, scope: MemoryScope, fix: string): MemoryEntry[] {
  const parsed = memorySchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `${where}: the ${scope} memory is not {"entries": [{"text": …}]} ` +
        `(at ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? ''}); ${fix}`,
    );
  }
  return parsed.data.entries.map((entry) => ({ text: entry.text, createdAt: entry.createdAt }));
}

/** `entries` with `text` added (or as they are when it is there already); past the cap: MemoryRefusal. */
export function withEntry(
  entries: MemoryEntry[],
  text: string,
  now: number,
  scope: MemoryScope,
  cap: number,
): { added: boolean; entries: MemoryEntry[] } {
  if (entries.some((entry) => entry.text === text)) return { added: false, entries };
  const next = [...entries, { text, createdAt: now }];
  const bytes = memoryBytes(next);
  if (bytes > cap) {
    throw new MemoryRefusal(
      `Not saved: the ${scope} memory would hold ${bytes} bytes, past its cap of ${cap} ` +
        `(it holds ${memoryBytes(entries)} now in ${entries.length} entries). Condense it first: ` +
        'forget entries that are outdated or say the same thing, and write one shorter entry in ' +
        'their place; then write this one again.',
    );
  }
  return { added: true, entries: next };
}

/** `entries` without those whose text is exactly `text`; none: MemoryRefusal naming the near matches. */
export function withoutEntry(
  entries: MemoryEntry[],
  text: string,
  scope: MemoryScope,
): { removed: number; entries: MemoryEntry[] } {
  const next = entries.filter((entry) => entry.text !== text);
  const removed = entries.length - next.length;
  if (removed === 0) throw new MemoryRefusal(noSuchEntry(text, entries, scope));
  return { removed, entries: next };
}

function noSuchEntry(text: string, entries: readonly MemoryEntry[], scope: MemoryScope): string {
  const head = `Nothing forgotten: the ${scope} memory has no entry that is exactly ${JSON.stringify(text)}.`;
  if (entries.length === 0) return `${head} It is empty.`;
  const near = nearMatches(
    text,
    entries.map((entry) => entry.text),
  );
  if (near.length === 0)
    return `${head} No entry is close to it (${entries.length} entries; they are in your system prompt).`;
  return [
    `${head} Near matches (forget takes the exact text; copy one):`,
    ...near.map((candidate) => `- ${JSON.stringify(candidate)}`),
  ].join('\n');
}
