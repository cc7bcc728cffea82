/**
 * The store lock of the focused agent (grok-bot-format.md §9: `createAgent`
 * "leaves the new agent active with store.db locked"; txcript unlocks it by
 * opening another agent before it writes the ledger).
 *
 * For sendbox it is a second SQLite connection that holds `BEGIN IMMEDIATE`
 * on the focused agent's store.db: any other writer (another process, or
 * txcript seeding a ledger) waits its busy timeout and then fails with
 * SQLITE_BUSY, while readers go on reading (WAL). The host's own writer
 * releases the lock for the length of each write, synchronously, and takes it
 * back at once, so no event-loop turn passes while it is released.
 */
import type { LedgerEntry } from '@sendbox/protocol';
import type { LedgerWriter } from '@sendbox/txcript';
import Database from 'better-sqlite3';

export class StoreLock {
  private db: Database.Database | null = null;
  private wanted = false;

  constructor(
    readonly path: string,
    private readonly busyTimeoutMs = 5000,
  ) {}

  get held(): boolean {
    return this.db?.inTransaction === true;
  }

  /** Takes the lock; throws SQLITE_BUSY if another connection keeps writing past the busy timeout. */
  hold(): void {
    this.wanted = true;
    this.db ??= new Database(this.path, { fileMustExist: true, timeout: this.busyTimeoutMs });
    if (!this.db.inTransaction) this.db.exec('BEGIN IMMEDIATE');
  }

  release(): void {
    this.wanted = false;
    if (this.db) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      this.db.close();
      this.db = null;
    }
  }

  /** Runs a write of the host's own with the lock released, then takes the lock back. */
  withReleased<T>(write: () => T): T {
    if (!this.wanted || !this.db) return write();
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
    try {
      return write();
    } finally {
      try {
        this.db.exec('BEGIN IMMEDIATE');
      } catch {
        // Another writer slipped in; the next write or focus takes the lock back.
      }
    }
  }

  /** `inner` with every write done while the lock is released (see `withReleased`). */
  guard(inner: LedgerWriter): LedgerWriter {
    return Object.assign(Object.create(inner) as LedgerWriter, {
      appendEntries: (entries: readonly LedgerEntry[]) =>
        this.withReleased(() => inner.appendEntries(entries)),
      appendEntry: (entry: LedgerEntry) => this.withReleased(() => inner.appendEntry(entry)),
      setKv: (key: string, value: Parameters<LedgerWriter['setKv']>[1]) =>
        this.withReleased(() => inner.setKv(key, value)),
      updateKv: (key: string, update: Parameters<LedgerWriter['updateKv']>[1]) =>
        this.withReleased(() => inner.updateKv(key, update)),
      close: () => inner.close(),
    });
  }
}
