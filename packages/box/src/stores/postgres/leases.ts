/**
 * Leases with fencing (issue 25 §2): one owner of an agent's turns at a time.
 *
 * A lease is a row of `leases`: its owner (a worker), its expiry and its epoch, the fencing token.
 * Claiming takes the row when it is free (no lease, an expired one, or the claimer's own) and raises
 * the epoch by one, so every claim has an epoch no earlier claim had. The holder renews it while its
 * turn runs; a holder that stops renewing (dead, or paused past the expiry) loses it to the next
 * claimer. Every write of a turn's results passes the fence first (`fence_agent_write`, database.ts):
 * it commits only while the lease still has the writer's epoch, so a superseded worker writes nothing (its write is refused with
 * a SupersededError, and it stops its turn).
 *
 * Times are the server's (`now()`), so the workers' clocks need not agree.
 */
import type { Database } from './database.ts';

/** How long a lease lasts unless renewed: the turn queue's heartbeat (turn-queue.ts). */
export const LEASE_TTL_MS = 10_000;

export interface Lease {
  agentId: string;
  owner: string;
  epoch: number;
  /** The server's time when it lapses unless renewed (ms since the epoch). */
  expiresAt: number;
  /**
   * The last Stop asked for the agent, as of the last renewal: the agent's last ledger seq then
   * (`askStop`). A turn whose user entry is at or before it was running when it was asked.
   */
  stopSeq?: number;
  /**
   * As of the last renewal: a prompt was accepted while a call of this holder waits on an approval
   * card (cluster/approval-waits.ts), so the wait is to end (it may have ended already).
   */
  yieldAsked?: boolean;
}

/**
 * What an agent's stores write under: the epoch of the lease this worker holds for it, or null when
 * the write belongs to no turn (the agent's creation, the gateway's own notes). Shared by the agent's
 * ledger and transcript; the turn worker sets it when it claims the agent.
 */
export interface AgentFence {
  readonly agentId: string;
  epoch: number | null;
}

/** A write made under an epoch that is no longer the lease's: refused whole, nothing of it stays. */
export class SupersededError extends Error {
  override readonly name = 'SupersededError';
  readonly code = 'SENDBOX_FENCED';

  constructor(
    readonly agentId: string,
    readonly epoch: number,
  ) {
    super(
      `agent ${agentId}: the lease of epoch ${epoch} was taken over by another worker, so this worker's write was refused; the turn goes on there`,
    );
  }
}

export class Leases {
  constructor(
    private readonly db: Database,
    /** This worker's name in the lease rows. */
    readonly owner: string,
    readonly ttlMs = LEASE_TTL_MS,
  ) {}

  /**
   * Takes the agent's lease with a new epoch, when it is free or already this worker's; undefined
   * while another worker holds it unexpired. Concurrent claims are one statement each on one row:
   * at most one of them gets a lease.
   */
  async claim(agentId: string): Promise<Lease | undefined> {
    const leases = this.db.table('leases');
    const { rows } = await this.db.pool.query<{ epoch: string; expires_ms: string }>(
      `INSERT INTO ${leases} AS l (agent_id, owner, epoch, expires_at)
       VALUES ($1, $2, 1, now() + $3 * interval '1 millisecond')
       ON CONFLICT (agent_id) DO UPDATE
         SET owner = EXCLUDED.owner, epoch = l.epoch + 1, expires_at = EXCLUDED.expires_at
         WHERE l.expires_at <= now() OR l.owner = EXCLUDED.owner
       RETURNING epoch, (extract(epoch FROM expires_at) * 1000)::bigint AS expires_ms`,
      [agentId, this.owner, this.ttlMs],
    );
    const row = rows[0];
    if (!row) return undefined;
    return { agentId, owner: this.owner, epoch: Number(row.epoch), expiresAt: Number(row.expires_ms) };
  }

  /**
   * Claims the agent's lease, waiting for a holder's lease to lapse (a dead worker's does within the
   * TTL); throws when it is still held after `timeoutMs`.
   */
  async claimWhenFree(agentId: string, timeoutMs = this.ttlMs * 2, pollMs = 200): Promise<Lease> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const lease = await this.claim(agentId);
      if (lease) return lease;
      if (Date.now() >= deadline) {
        const holder = await this.holder(agentId);
        throw new Error(
          `agent ${agentId}: its lease is still held by ${holder?.owner ?? 'another worker'} (epoch ${holder?.epoch ?? '?'}) after ${timeoutMs} ms; the turn is left queued`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }

  /** Extends the lease; false when its epoch is no longer the agent's (taken over: stop the turn). */
  async renew(lease: Lease): Promise<boolean> {
    const { rows } = await this.db.pool.query<{
      expires_ms: string;
      stop_seq: string | null;
      yield_asked: boolean | null;
    }>(
      `UPDATE ${this.db.table('leases')} l SET expires_at = now() + $3 * interval '1 millisecond'
       WHERE agent_id = $1 AND epoch = $2
       RETURNING (extract(epoch FROM expires_at) * 1000)::bigint AS expires_ms, stop_seq,
         (SELECT w.yield_asked FROM ${this.db.table('approval_waits')} w
          WHERE w.agent_id = l.agent_id AND w.worker = l.owner AND NOT w.taken) AS yield_asked`,
      [lease.agentId, lease.epoch, this.ttlMs],
    );
    const row = rows[0];
    if (!row) return false;
    lease.expiresAt = Number(row.expires_ms);
    if (row.stop_seq !== null) lease.stopSeq = Number(row.stop_seq);
    lease.yieldAsked = row.yield_asked === true;
    return true;
  }

  /**
   * Stores the user's Stop for whichever turn of the agent runs now, wherever (its NOTIFY may be
   * missed): the agent's last ledger seq, read in the same statement. Its holder reads it at its
   * next renewal; a turn that starts after it has a later user entry and is not stopped.
   */
  async askStop(agentId: string): Promise<void> {
    await this.db.pool.query(
      `UPDATE ${this.db.table('leases')}
       SET stop_seq = (SELECT COALESCE(max(seq), 0) FROM ${this.db.table('ledger')} WHERE agent_id = $1)
       WHERE agent_id = $1`,
      [agentId],
    );
  }

  /** Lets the lease lapse now (the turn ended), so the next claimer need not wait; the epoch stays. */
  async release(lease: Lease): Promise<void> {
    await this.db.pool.query(
      `UPDATE ${this.db.table('leases')} SET expires_at = now() WHERE agent_id = $1 AND epoch = $2`,
      [lease.agentId, lease.epoch],
    );
  }

  /** The agent's lease as the table has it (expired or not), if it ever had one. */
  async holder(agentId: string): Promise<Omit<Lease, 'agentId'> | undefined> {
    const { rows } = await this.db.pool.query<{ owner: string; epoch: string; expires_ms: string }>(
      `SELECT owner, epoch, (extract(epoch FROM expires_at) * 1000)::bigint AS expires_ms
       FROM ${this.db.table('leases')} WHERE agent_id = $1`,
      [agentId],
    );
    const row = rows[0];
    return row && { owner: row.owner, epoch: Number(row.epoch), expiresAt: Number(row.expires_ms) };
  }
}

/**
 * The SQLSTATE a fenced write raises when the lease no longer has its epoch (`fence_agent_write` in
 * database.ts, which every ledger and transcript append runs first, in the same statement).
 */
export const FENCED_SQLSTATE = 'SB001';

/** The advisory lock that serializes an agent's ledger and transcript writes in one schema. */
export function writeLockKey(db: Database, agentId: string): string {
  return `sendbox-agent-writes:${db.schema}:${agentId}`;
}

/**
 * The fence of a write made beside the ledger (a task row, a memory document) by a turn: the
 * statement's `fence_agent_write` call (`$n` its first of three parameters), or none when the fence
 * belongs to no turn (null epoch: a gateway's writes stay unfenced). A write a subagent makes
 * (`child`: it runs on `worker`) is `fence_subagent_write`'s (five parameters): it passes under the
 * lease's epoch, or while the child's task row says it runs on that worker (or that worker marked
 * it lost, to close its transcript: database.ts).
 */
export function fenceCall(
  db: Database,
  fence: AgentFence | undefined,
  n: number,
  child?: { childId: string; worker: string },
): { sql: string; values: unknown[] } | null {
  if (!fence || fence.epoch === null) return null;
  if (child) {
    return {
      sql: `${db.schema}.fence_subagent_write($${n}, $${n + 1}, $${n + 2}, $${n + 3}, $${n + 4})`,
      values: [
        writeLockKey(db, `${fence.agentId}/${child.childId}`),
        fence.agentId,
        fence.epoch,
        child.worker,
        child.childId,
      ],
    };
  }
  return {
    sql: `${db.schema}.fence_agent_write($${n}, $${n + 1}, $${n + 2})`,
    values: [writeLockKey(db, fence.agentId), fence.agentId, fence.epoch],
  };
}

/** The write's error, as the caller should see it: a refused fence is a SupersededError. */
export function fencedError(fence: AgentFence, error: unknown): unknown {
  if (fence.epoch !== null && (error as { code?: unknown } | null)?.code === FENCED_SQLSTATE) {
    return new SupersededError(fence.agentId, fence.epoch);
  }
  return error;
}
