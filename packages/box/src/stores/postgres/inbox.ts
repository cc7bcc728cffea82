/**
 * An agent's inbox in PostgreSQL (`inbox` table, one row per (agent, nonce)). Accepting an input is
 * one transaction (issue 25 §2): the row (`ON CONFLICT (agent_id, nonce) DO NOTHING`: a nonce
 * another gateway accepted is a repeat here too) and its turn job on pg-boss, committed together
 * with the other inputs this worker accepts meanwhile (accept-batch.ts); `accept` resolves after
 * the commit, so the gateway's 2xx comes after it. What `has` and `pending` answer is the
 * rows as read at open and changed through this handle; `load` reads them again.
 */
import type { PgBoss } from 'pg-boss';
import { StoreWriteError } from '../errors.ts';
import type { InboxInput, InboxRow, InboxStore, InputState } from '../inbox.ts';
import type { Database } from './database.ts';
import { acceptBatchOf } from './accept-batch.ts';

interface RawRow {
  seq: string;
  nonce: string;
  input: InboxInput;
  state: string;
  turn: number | null;
  accepted_at: string;
  detail: string | null;
}

export class PgInbox implements InboxStore {
  private readonly nonces = new Set<string>();
  /** The last row `load` read (its seq). */
  private lastRead = 0;
  private pendingRows: InboxRow[] = [];
  /** Row updates, in the order they were asked for. */
  private settling: Promise<void> = Promise.resolve();

  private constructor(
    private readonly db: Database,
    private readonly boss: PgBoss,
    private readonly agentId: string,
  ) {}

  static async open(db: Database, boss: PgBoss, agentId: string): Promise<PgInbox> {
    const inbox = new PgInbox(db, boss, agentId);
    await inbox.load();
    return inbox;
  }

  /**
   * Reads the rows again: the first time all of them, then only the rows after the last one read and
   * the pending ones (a row's nonce never changes, only its state), so a turn worker that keeps the
   * agent between jobs (host/turn-sessions.ts) reads what changed, not the agent's whole inbox.
   */
  async load(): Promise<void> {
    const { rows } = await this.db.pool.query<RawRow>(
      `SELECT seq, nonce, input, state, turn, accepted_at, detail FROM ${this.db.table('inbox')}
       WHERE agent_id = $1 AND (seq > $2 OR state = 'pending') ORDER BY seq`,
      [this.agentId, this.lastRead],
    );
    for (const row of rows) {
      this.nonces.add(row.nonce);
      this.lastRead = Math.max(this.lastRead, Number(row.seq));
    }
    this.pendingRows = rows.filter((row) => row.state === 'pending').map(rowOf);
  }

  has(nonce: string): boolean {
    return this.nonces.has(nonce);
  }

  pending(): readonly InboxRow[] {
    return this.pendingRows;
  }

  async accept(nonce: string, input: InboxInput, acceptedAt: number): Promise<boolean> {
    if (this.nonces.has(nonce)) return false;
    let seq: number | null;
    try {
      // Committed with the inputs the worker accepts meanwhile (accept-batch.ts), before this resolves.
      seq = await acceptBatchOf(this.db, this.boss).accept({
        agentId: this.agentId,
        nonce,
        input,
        acceptedAt,
      });
    } catch (error) {
      throw new StoreWriteError('inbox', 'the input', error);
    }
    this.nonces.add(nonce);
    if (seq === null) return false;
    const row: InboxRow = { seq, nonce, input, state: 'pending', turn: null, acceptedAt, detail: null };
    const at = this.pendingRows.findIndex((other) => other.seq > seq);
    this.pendingRows.splice(at === -1 ? this.pendingRows.length : at, 0, row);
    return true;
  }

  /** `accept` resolves after its commit: nothing is left to wait for. */
  durable(): Promise<void> {
    return Promise.resolve();
  }

  markStarted(nonce: string, turn: number): Promise<void> {
    return this.settle(nonce, 'started', turn, null);
  }

  markFailed(nonce: string, detail: string): Promise<void> {
    return this.settle(nonce, 'failed', null, detail);
  }

  async withdraw(nonce: string, detail: string): Promise<boolean> {
    if (!this.pendingRows.some((row) => row.nonce === nonce)) return false;
    await this.settling;
    const { rowCount } = await this.db.pool
      .query(
        `UPDATE ${this.db.table('inbox')} SET state = 'failed', detail = $1 WHERE agent_id = $2 AND nonce = $3 AND state = 'pending'`,
        [detail, this.agentId, nonce],
      )
      .catch((error: unknown) => {
        throw new StoreWriteError('inbox', 'the input state', error);
      });
    this.pendingRows = this.pendingRows.filter((row) => row.nonce !== nonce);
    return rowCount === 1;
  }

  async reconcile(startedTurn: (nonce: string) => number | undefined): Promise<void> {
    for (const row of [...this.pendingRows]) {
      const turn = startedTurn(row.nonce);
      if (turn !== undefined) await this.settle(row.nonce, 'started', turn, null);
    }
  }

  close(): void {
    // The pool is the worker's, shared by every agent: closed with the database.
  }

  private settle(
    nonce: string,
    state: InputState,
    turn: number | null,
    detail: string | null,
  ): Promise<void> {
    this.pendingRows = this.pendingRows.filter((row) => row.nonce !== nonce);
    this.settling = this.settling.then(async () => {
      try {
        await this.db.pool.query(
          `UPDATE ${this.db.table('inbox')} SET state = $1, turn = $2, detail = $3 WHERE agent_id = $4 AND nonce = $5`,
          [state, turn, detail, this.agentId, nonce],
        );
      } catch {
        // The ledger already says what happened (the commit point); `reconcile` settles the row on the next open.
      }
    });
    return this.settling;
  }
}

/**
 * Whether a turn job of the agent has anything to do: a pending input, or a turn the ledger leaves
 * open (a worker died in it). An agent's job runs every input pending when it starts, so the jobs
 * of the inputs it took find none. A deleted agent (no profile row) has none, whatever rows an accept
 * that raced the delete left: its job never runs a turn.
 */
export async function agentHasWork(db: Database, agentId: string): Promise<boolean> {
  const { rows } = await db.pool.query<{ exists: boolean; pending: boolean; last_turn: string | null }>(
    `SELECT EXISTS (SELECT 1 FROM ${db.table('profiles')} WHERE agent_id = $1) AS exists,
            EXISTS (SELECT 1 FROM ${db.table('inbox')} WHERE agent_id = $1 AND state = 'pending') AS pending,
            (SELECT id FROM ${db.table('ledger')} WHERE agent_id = $1 AND id ~ '^t[0-9]+[ue]$'
             ORDER BY seq DESC LIMIT 1) AS last_turn`,
    [agentId],
  );
  const row = rows[0]!;
  return row.exists && (row.pending || (row.last_turn?.endsWith('u') ?? false));
}

/** An agent's pending inputs as the rows hold them now, in accept order (another worker's view of its inbox). */
export async function readPendingRows(db: Database, agentId: string): Promise<InboxRow[]> {
  const { rows } = await db.pool.query<RawRow>(
    `SELECT seq, nonce, input, state, turn, accepted_at, detail FROM ${db.table('inbox')}
     WHERE agent_id = $1 AND state = 'pending' ORDER BY seq`,
    [agentId],
  );
  return rows.map(rowOf);
}

function rowOf(raw: RawRow): InboxRow {
  return {
    seq: Number(raw.seq),
    nonce: raw.nonce,
    input: raw.input,
    state: raw.state as InputState,
    turn: raw.turn,
    acceptedAt: Number(raw.accepted_at),
    detail: raw.detail,
  };
}
