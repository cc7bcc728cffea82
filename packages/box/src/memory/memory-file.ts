/**
 * One scope of memory on disk: `agents/<id>/memory.json` (the agent's own) or `memory.json` at the
 * data dir's top (the user's, shared by every agent). The file is `{entries: [{text, createdAt}]}`,
 * mode 0600, replaced atomically; writes of one file run one after another, so two agents writing
 * the user scope at once both land. A file another writer changed (the user editing it) is read
 * again; one that cannot be read is reported and never written over.
 */
import { readFile } from 'node:fs/promises';
import { writeFileAtomic } from '../fs/atomic.ts';
import { fileMark, sameFile, type FileMark } from '../stores/files/file-mark.ts';
import {
  MEMORY_CAP_BYTES,
  parseMemory,
  withEntry,
  withoutEntry,
  type MemoryEntry,
  type MemoryScope,
  type MemoryStore,
} from './memory-store.ts';

/** What the user does with a damaged file (the box never writes over it). */
const FIX = 'fix the file or move it away (the box does not write over it)';

export class MemoryFile implements MemoryStore {
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
        `${this.file}: the ${this.scope} memory is not valid JSON (${(error as Error).message}); ${FIX}`,
      );
    }
    const entries = parseMemory(json, this.file, this.scope, FIX);
    this.cached = { mark, entries };
    return entries;
  }

  write(text: string, now: number): Promise<{ added: boolean; entries: MemoryEntry[] }> {
    return this.serial(async () => {
      const next = withEntry(await this.entries(), text, now, this.scope, this.capBytes);
      if (next.added) await this.save(next.entries);
      return next;
    });
  }

  forget(text: string): Promise<{ removed: number; entries: MemoryEntry[] }> {
    return this.serial(async () => {
      const next = withoutEntry(await this.entries(), text, this.scope);
      await this.save(next.entries);
      return next;
    });
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
