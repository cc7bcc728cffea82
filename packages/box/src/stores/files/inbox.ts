/**
 * The durable inbox: the user's inputs (prompts, widget answers, saved
 * secrets) an agent accepted, kept in its own `store.db` in a table of
 * sendbox's (`sendbox_inbox`; Grok Bot's tables are untouched). An input is
 * accepted once its row commits, and only then does the gateway answer 2xx;
 * its nonce stays, so a repeat is recognised across restarts.
 *
 * Input states: `pending` (accepted, its turn not started) → `started` (its
 * user message is in the ledger, with turn N) or `failed` (it could not start;
 * `detail` says why). The ledger is the commit point of a start: an input whose
 * user message is in the ledger is started, whatever its row says (the row is
 * marked after the ledger commit, so a crash between the two leaves it
 * `pending`; `reconcile` settles it on the next open).
 *
 * Group commit (wal-sync.ts): an accept's row commits at once, without an fsync on the event
 * loop; it is acknowledged (and only then pending, so its turn may start) after the WAL's next
 * fdatasync, which covers every input that arrived meanwhile. A failed fdatasync takes its
 * inputs back: nothing is acknowledged that is not on disk.
 */
import Database from 'better-sqlite3';
import type { StoreLock } from './store-lock.ts';
import { StoreWriteError } from '../errors.ts';
import { WalSync } from './wal-sync.ts';
import type { AcceptOptions, InboxInput, InboxRow, InboxStore, InputState } from '../inbox.ts';
import type { WritePoints } from '../write-points.ts';

const INBOX_DDL = `
CREATE TABLE IF NOT EXISTS sendbox_inbox (
  seq INTEGER PRIMARY KEY,
  nonce TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  input TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'pending',
  turn INTEGER,
  accepted_at INTEGER NOT NULL,
  detail TEXT
) STRICT;
CREATE INDEX IF NOT EXISTS idx_sendbox_inbox_pending ON sendbox_inbox(seq) WHERE state = 'pending';
`;

interface RawRow {
  seq: number;
  nonce: string;
  kind: string;
  input: string;
  state: string;
  turn: number | null;
  accepted_at: number;
  detail: string | null;
}

export class Inbox implements InboxStore {
  private readonly db: Database.Database;
  private readonly nonces = new Set<string>();
  private pendingRows: InboxRow[] = [];
  private readonly sync: WalSync;
  /** Inputs committed but not yet on disk, by nonce. */
  private readonly syncing = new Map<string, Promise<void>>();
  /** Inputs pending since their commit whose fdatasync has not yet succeeded. */
  private readonly unsynced = new Set<string>();
  /** Prepared once: preparing cost more than running them, per input. */
  private readonly insertRow: Database.Statement;
  private readonly settleRow: Database.Statement;

  constructor(
    path: string,
    private readonly lock: StoreLock,
    private readonly points: WritePoints,
  ) {
    this.db = new Database(path, { fileMustExist: true, timeout: 5000 });
    // NORMAL, and `accept` waits for the WAL's group fdatasync: an accepted input survives a
    // power cut, not only a crash of the box (docs/runtime.md), without one fsync per input.
    this.db.pragma('synchronous = NORMAL');
    this.sync = new WalSync(`${path}-wal`);
    this.lock.withReleased(() => this.db.exec(INBOX_DDL));
    this.insertRow = this.db.prepare(
      'INSERT INTO sendbox_inbox (nonce, kind, input, accepted_at) VALUES (?, ?, ?, ?)',
    );
    this.settleRow = this.db.prepare(
      'UPDATE sendbox_inbox SET state = ?, turn = ?, detail = ? WHERE nonce = ?',
    );
    this.load();
  }

  /** Reads every nonce and the pending rows again (another connection may have written). */
  load(): void {
    this.nonces.clear();
    for (const row of this.db.prepare('SELECT nonce FROM sendbox_inbox').pluck().all() as string[]) {
      this.nonces.add(row);
    }
    const raw = this.db
      .prepare(`SELECT * FROM sendbox_inbox WHERE state = 'pending' ORDER BY seq`)
      .all() as RawRow[];
    this.pendingRows = raw.map(rowOf);
  }

  /** fdatasyncs of the WAL so far: fewer than the inputs accepted when they arrive together. */
  get syncs(): number {
    return this.sync.syncs;
  }

  has(nonce: string): boolean {
    return this.nonces.has(nonce);
  }

  /** Pending inputs in the order they were accepted. */
  pending(): readonly InboxRow[] {
    return this.pendingRows;
  }

  /**
   * Commits an input and resolves once it is on disk (see the group commit above); false when
   * its nonce was accepted before (then once that input is on disk). With `pending: 'committed'`
   * it resolves, and its turn may start, once the row commits; `durable(nonce)` then says when it
   * is on disk, and a failed fdatasync leaves the row to the next one (its turn may be running).
   */
  async accept(
    nonce: string,
    input: InboxInput,
    acceptedAt: number,
    options?: AcceptOptions,
  ): Promise<boolean> {
    if (this.nonces.has(nonce)) {
      await this.durable(nonce);
      return false;
    }
    const seq = this.write('the input', () =>
      Number(this.insertRow.run(nonce, input.kind, JSON.stringify(input), acceptedAt).lastInsertRowid),
    );
    this.nonces.add(nonce);
    if (options?.pending === 'committed') {
      this.syncAfterStart(nonce);
      this.addPending({ seq, nonce, input, state: 'pending', turn: null, acceptedAt, detail: null });
      return true;
    }
    const onDisk = this.sync.durable().catch((error: unknown) => {
      this.nonces.delete(nonce);
      try {
        this.lock.withReleased(() => this.db.prepare('DELETE FROM sendbox_inbox WHERE seq = ?').run(seq));
      } catch {
        // Not on disk and not taken back: the next open finds it pending and runs it.
      }
      throw new StoreWriteError('inbox', 'the input', error);
    });
    this.syncing.set(nonce, onDisk);
    try {
      await onDisk;
    } finally {
      this.syncing.delete(nonce);
    }
    this.addPending({ seq, nonce, input, state: 'pending', turn: null, acceptedAt, detail: null });
    return true;
  }

  /** Resolves once the input with this nonce is on disk (at once when it is, or is unknown). */
  durable(nonce: string): Promise<void> {
    const syncing = this.syncing.get(nonce);
    if (syncing) return syncing;
    if (this.unsynced.has(nonce)) this.syncAfterStart(nonce);
    return this.syncing.get(nonce) ?? Promise.resolve();
  }

  /** The fdatasync of an input pending since its commit; a failed one is tried again by `durable`. */
  private syncAfterStart(nonce: string): void {
    this.unsynced.add(nonce);
    const onDisk = this.sync.durable().then(
      () => {
        this.unsynced.delete(nonce);
      },
      (error: unknown) => {
        throw new StoreWriteError('inbox', 'the input', error);
      },
    );
    this.syncing.set(nonce, onDisk);
    void onDisk.finally(() => this.syncing.delete(nonce)).catch(() => undefined);
  }

  /** In seq order, whichever of the inputs synced together resumes first. */
  private addPending(row: InboxRow): void {
    const at = this.pendingRows.findIndex((other) => other.seq > row.seq);
    this.pendingRows.splice(at === -1 ? this.pendingRows.length : at, 0, row);
  }

  /** Marks an input started in turn `turn` (after its user message committed in the ledger). */
  markStarted(nonce: string, turn: number): Promise<void> {
    this.settle(nonce, 'started', turn, null);
    return Promise.resolve();
  }

  markFailed(nonce: string, detail: string): Promise<void> {
    this.settle(nonce, 'failed', null, detail);
    return Promise.resolve();
  }

  withdraw(nonce: string, detail: string): Promise<boolean> {
    if (!this.pendingRows.some((row) => row.nonce === nonce)) return Promise.resolve(false);
    this.write('the input state', () => this.settleRow.run('failed', null, detail, nonce));
    this.pendingRows = this.pendingRows.filter((row) => row.nonce !== nonce);
    return Promise.resolve(true);
  }

  /**
   * Settles pending rows whose user message the ledger holds (a crash came between the ledger
   * commit and the row's update): `startedTurn` gives the turn of a nonce, or undefined.
   */
  reconcile(startedTurn: (nonce: string) => number | undefined): Promise<void> {
    for (const row of [...this.pendingRows]) {
      const turn = startedTurn(row.nonce);
      if (turn !== undefined) this.settle(row.nonce, 'started', turn, null);
    }
    return Promise.resolve();
  }

  close(): void {
    this.db.close();
    void this.sync.close();
  }

  private settle(nonce: string, state: InputState, turn: number | null, detail: string | null): void {
    this.pendingRows = this.pendingRows.filter((row) => row.nonce !== nonce);
    try {
      this.write('the input state', () => this.settleRow.run(state, turn, detail, nonce));
    } catch {
      // The ledger already says what happened (the commit point); the row is settled again on the next open.
    }
  }

  private write<T>(what: string, run: () => T): T {
    try {
      this.points.pass('inbox', what);
      return this.lock.withReleased(run);
    } catch (error) {
      throw new StoreWriteError('inbox', what, error);
    }
  }
}

function rowOf(raw: RawRow): InboxRow {
  return {
    seq: raw.seq,
    nonce: raw.nonce,
    input: JSON.parse(raw.input) as InboxInput,
    state: raw.state as InputState,
    turn: raw.turn,
    acceptedAt: raw.accepted_at,
    detail: raw.detail,
  };
}

/**
 * True when an agent's store.db holds pending inputs, or the box's last started turn has no
 * `turn-ended` (start-up opens only those agents). One read-only query; false without the table.
 */
export function needsRecovery(storeDb: string): boolean {
  let db: Database.Database | undefined;
  try {
    db = new Database(storeDb, { readonly: true, fileMustExist: true });
    const row = db
      .prepare(
        `SELECT EXISTS (SELECT 1 FROM sendbox_inbox WHERE state = 'pending')
             OR EXISTS (SELECT 1 FROM sendbox_inbox i
                        WHERE i.seq = (SELECT max(seq) FROM sendbox_inbox WHERE state = 'started')
                          AND NOT EXISTS (SELECT 1 FROM transcript_entries WHERE id = 't' || i.turn || 'e'))`,
      )
      .pluck()
      .get();
    return row === 1;
  } catch {
    return false;
  } finally {
    db?.close();
  }
}
