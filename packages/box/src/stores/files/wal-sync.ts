/**
 * Group commit for an SQLite database in WAL mode: commits run with `synchronous = NORMAL`
 * (no fsync on the event loop) and whoever needs a commit durable asks `durable()`, which
 * resolves after an fdatasync of the WAL that started after that commit. One fdatasync covers
 * every commit made before it started; while one runs, the next callers share the next one.
 * The fdatasync runs on the thread pool, so a slow disk never stalls the box's event loop.
 *
 * Why it is as safe as `synchronous = FULL`: a WAL commit is durable once its frames are on
 * disk, and fdatasync on any descriptor of the WAL file flushes them all (Linux syncs the
 * inode). A checkpoint meanwhile syncs the WAL itself before copying it into the database.
 */
import { open, type FileHandle } from 'node:fs/promises';

export class WalSync {
  private handle: Promise<FileHandle> | null = null;
  /** The fdatasync running now, and the one the callers since it started wait for. */
  private running: Promise<void> | null = null;
  private next: Promise<void> | null = null;
  private closed = false;
  private done = 0;

  constructor(private readonly walPath: string) {}

  /** fdatasyncs finished so far (tests and benchmarks count them). */
  get syncs(): number {
    return this.done;
  }

  /** Resolves once every commit made before this call is on disk. */
  durable(): Promise<void> {
    if (this.closed) return Promise.reject(new Error(`${this.walPath} is closed`));
    if (!this.running) return (this.running = this.syncNow());
    // Commits made now may have missed the running fdatasync: they ride on the next one.
    this.next ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.next = null;
        return (this.running = this.syncNow());
      });
    return this.next;
  }

  /** Waits for a running fdatasync and closes the WAL's descriptor. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([this.running, this.next]);
    const handle = await this.handle?.catch(() => null);
    await handle?.close();
  }

  private async syncNow(): Promise<void> {
    try {
      // The WAL exists once the first commit is written; the descriptor stays open after.
      this.handle ??= open(this.walPath, 'r');
      const handle = await this.handle.catch((error: unknown) => {
        this.handle = null;
        throw error;
      });
      await handle.datasync();
      this.done += 1;
    } finally {
      // With callers waiting, `next` takes over `running` as it starts.
      if (this.next === null) this.running = null;
    }
  }
}
