/**
 * One scope of memory on disk: `agents/<id>/memory.json` (the agent's own) or `memory.json` at the
 * data dir's top (the user's, shared by every agent). The file is `{entries: [{text, createdAt}]}`,
 * mode 0600, replaced atomically; writes of one file run one after another, so two agents writing
 * the user scope at once both land. A file another writer changed (the user editing it) is read
 * again; one that cannot be read is reported and never written over.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { writeFileAtomic } from '../fs/atomic.ts';
import { fileMark, sameFile, type FileMark } from '../stores/files/file-mark.ts';
import { nearMatches } from './near-matches.ts';

/** Bytes (UTF-8) one scope may hold; past it the model is told to condense (issue 21). */
export const MEMORY_CAP_BYTES = 8 * 1024;

export type MemoryScope = 'agent' | 'user';

export interface MemoryEntry {
  text: string;
  /** Epoch ms. */
  createdAt: number;
}

const memoryFileSchema = z.looseObject({
  entries: z.array(z.looseObject({ text: z.string(), createdAt: z.number().default(0) })),
});

/** A write or forget the model can correct (its message says how); the file is unchanged. */
export class MemoryRefusal extends Error {
  override readonly name = 'MemoryRefusal';
}

/** The bytes a scope's entries take (what the cap counts): their texts, one per line. */
export function memoryBytes(entries: readonly MemoryEntry[]): number {
  return entries.reduce((sum, entry, i) => sum + Buffer.byteLength(entry.text) + (i > 0 ? 1 : 0), 0);
}

export class MemoryFile {
  private cached: { mark: FileMark | null; entries: MemoryEntry[] } | null = null;
  private writes: Promise<unknown> = Promise.resolve();

  constructor(
    readonly file: string,
    readonly scope: MemoryScope,
    private readonly capBytes = MEMORY_CAP_BYTES,
  ) {}

  get cap(): number {
    return this.capBytes;
  }

  /** The entries as the file holds them now (none when it does not exist); throws when it cannot be read. */
  async entries(): Promise<MemoryEntry[]> {
    const mark = fileMark(this.file);
    if (this.cached && sameFile(this.cached.mark, mark)) return this.cached.entries;
    if (mark === null) {
      this.cached = { mark, entries: [] };
      return [];
    }
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw new Error(`${this.file}: cannot read the ${this.scope} memory: ${(error as Error).message}`);
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new Error(
        `${this.file}: the ${this.scope} memory is not valid JSON (${(error as Error).message}); ` +
          'fix the file or move it away (the box does not write over it)',
      );
    }
    const parsed = memoryFileSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(
        `${this.file}: the ${this.scope} memory is not {"entries": [{"text": …}]} ` +
          `(at ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? ''}); ` +
          'fix the file or move it away (the box does not write over it)',
      );
    }
    const entries = parsed.data.entries.map((entry) => ({ text: entry.text, createdAt: entry.createdAt }));
    this.cached = { mark, entries };
    return entries;
  }

  /**
   * Adds an entry. An entry already held is not added twice. A write that would take the scope past
   * its cap is refused with the condense instruction (MemoryRefusal).
   */
  write(text: string, now: number): Promise<{ added: boolean; entries: MemoryEntry[] }> {
    return this.serial(async () => {
      const entries = await this.entries();
      if (entries.some((entry) => entry.text === text)) return { added: false, entries };
      const next = [...entries, { text, createdAt: now }];
      const bytes = memoryBytes(next);
      if (bytes > this.capBytes) {
        throw new MemoryRefusal(
          `Not saved: the ${this.scope} memory would hold ${bytes} bytes, past its cap of ${this.capBytes} ` +
            `(it holds ${memoryBytes(entries)} now in ${entries.length} entries). Condense it first: ` +
            'forget entries that are outdated or say the same thing, and write one shorter entry in ' +
            'their place; then write this one again.',
        );
      }
      await this.save(next);
      return { added: true, entries: next };
    });
  }

  /** Removes every entry whose text is exactly `text`; none: MemoryRefusal listing the near matches. */
  forget(text: string): Promise<{ removed: number; entries: MemoryEntry[] }> {
    return this.serial(async () => {
      const entries = await this.entries();
      const next = entries.filter((entry) => entry.text !== text);
      const removed = entries.length - next.length;
      if (removed === 0) throw new MemoryRefusal(this.noSuchEntry(text, entries));
      await this.save(next);
      return { removed, entries: next };
    });
  }

  private noSuchEntry(text: string, entries: readonly MemoryEntry[]): string {
    const head = `Nothing forgotten: the ${this.scope} memory has no entry that is exactly ${JSON.stringify(text)}.`;
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

  private async save(entries: MemoryEntry[]): Promise<void> {
    await writeFileAtomic(this.file, `${JSON.stringify({ entries }, null, 2)}\n`, { mode: 0o600 });
    this.cached = { mark: fileMark(this.file), entries };
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.writes.then(work, work);
    this.writes = run.catch(() => undefined);
    return run;
  }
}
