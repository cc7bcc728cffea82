/**
 * Approval cards across workers (issue 25). A call waits on its card in the worker running its turn
 * (approvals/gate.ts), and the user may answer through any gateway. The answer is committed there as
 * anywhere (the inbox input, then the `<card>-answer` ledger entry); the entry reaches the waiting
 * worker as every entry does (cluster/events.ts), and the call there takes it. This module is the
 * rest: an `approval_waits` row per agent says which worker's call waits on which card, so the
 * answering gateway can say whether a running turn took the answer (`resumed`).
 *
 * - The row is written before the card is committed, so a gateway that sees the card sees the row.
 *   A new wait of the agent replaces it (one turn of an agent runs at a time, so any other row is
 *   a dead worker's).
 * - A call that takes an answer marks the row taken; a wait that ends otherwise (Stop, a prompt
 *   instead, the box closing) removes it.
 * - The answering gateway reads the row until it is taken, or its worker no longer holds the
 *   agent's lease (dead: the answer then starts a turn of its own after the cut turn, as after a
 *   restart), or it is gone (nothing waits).
 * - A prompt accepted through another gateway while the agent awaits the user asks the waiting
 *   worker to end the wait, as a prompt does in one box (a `yield` note, cluster/events.ts): the
 *   call ends there, its card left open.
 */
import type { SharedApprovalWaits } from '../approvals/gate.ts';
import type { Database } from '../stores/postgres/database.ts';

/** How often the answering gateway reads the row while a live worker's call has not taken the answer yet. */
const POLL_MS = 25;
/** Longest the answering gateway waits for a live worker's call to take the answer (then `resumed: false`). */
const TAKE_TIMEOUT_MS = 30_000;

export class ClusterApprovalWaits implements SharedApprovalWaits {
  constructor(
    private readonly db: Database,
    /** This worker's name, as in the lease rows. */
    private readonly worker: string,
    /** Asks the worker running the agent's turn to end its call's wait (cluster/events.ts `askTurn`). */
    private readonly askYield: (agentId: string) => void,
    private readonly log: (line: string) => void = (line) => process.stderr.write(`sendbox: ${line}\n`),
  ) {}

  async waiting(agentId: string, cardId: string): Promise<void> {
    await this.db.pool.query(
      `INSERT INTO ${this.db.table('approval_waits')} (agent_id, card_id, worker) VALUES ($1, $2, $3)
       ON CONFLICT (agent_id) DO UPDATE SET card_id = EXCLUDED.card_id, worker = EXCLUDED.worker, taken = false,
         yield_asked = false`,
      [agentId, cardId, this.worker],
    );
  }

  yieldElsewhere(agentId: string): void {
    // Stored as well, for the waiting worker to read at its lease's renewal (Leases.renew): a
    // worker whose listener is reconnecting misses the note.
    this.db.pool
      .query(
        `UPDATE ${this.db.table('approval_waits')} SET yield_asked = true WHERE agent_id = $1 AND NOT taken`,
        [agentId],
      )
      .catch((error: unknown) =>
        this.log(`a prompt's yield of agent ${agentId}'s card was not stored: ${(error as Error).message}`),
      );
    this.askYield(agentId);
  }

  async openWaits(): Promise<{ agentId: string; cardId: string }[]> {
    const { rows } = await this.db.pool.query<{ agent_id: string; card_id: string }>(
      `SELECT w.agent_id, w.card_id FROM ${this.db.table('approval_waits')} w
       JOIN ${this.db.table('leases')} l ON l.agent_id = w.agent_id AND l.owner = w.worker AND l.expires_at > now()
       WHERE NOT w.taken`,
    );
    return rows.map((row) => ({ agentId: row.agent_id, cardId: row.card_id }));
  }

  async ended(agentId: string, cardId: string, taken: boolean): Promise<void> {
    const where = 'WHERE agent_id = $1 AND card_id = $2 AND worker = $3';
    await this.db.pool.query(
      taken
        ? `UPDATE ${this.db.table('approval_waits')} SET taken = true ${where}`
        : `DELETE FROM ${this.db.table('approval_waits')} ${where}`,
      [agentId, cardId, this.worker],
    );
  }

  async takenElsewhere(agentId: string, cardId: string): Promise<boolean> {
    const deadline = Date.now() + TAKE_TIMEOUT_MS;
    for (;;) {
      const { rows } = await this.db.pool.query<{ taken: boolean; live: boolean | null }>(
        `SELECT w.taken, (l.owner = w.worker AND l.expires_at > now()) AS live
         FROM ${this.db.table('approval_waits')} w
         LEFT JOIN ${this.db.table('leases')} l ON l.agent_id = w.agent_id
         WHERE w.agent_id = $1 AND w.card_id = $2`,
        [agentId, cardId],
      );
      const row = rows[0];
      if (!row) return false;
      if (row.taken) return true;
      if (row.live !== true || Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }
}
