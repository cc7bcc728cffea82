/**
 * The rows cluster workers wrote, read straight from PostgreSQL with the lease epoch of each, and an
 * agent's approval rules set in its profile row as the settings would (tests only).
 */
import type { Database } from '../stores/postgres/database.ts';

export interface LedgerRow {
  seq: number;
  id: string;
  entry: Record<string, unknown>;
  epoch: number | null;
}

export interface TranscriptRow {
  seq: number;
  text: string;
  epoch: number | null;
}

/** The agent's ledger rows in seq order, with the lease epoch each was written under. */
export async function ledgerRows(db: Database, agentId: string): Promise<LedgerRow[]> {
  const result = await db.pool.query<{ seq: string; id: string; entry: string; epoch: string | null }>(
    `SELECT seq, id, entry, epoch FROM ${db.table('ledger')} WHERE agent_id = $1 ORDER BY seq`,
    [agentId],
  );
  return result.rows.map((row) => ({
    seq: Number(row.seq),
    id: row.id,
    entry: JSON.parse(row.entry) as Record<string, unknown>,
    epoch: row.epoch === null ? null : Number(row.epoch),
  }));
}

/** The agent's transcript rows (each the exact JSONL lines of one append) in seq order. */
export async function transcriptRows(db: Database, agentId: string): Promise<TranscriptRow[]> {
  const result = await db.pool.query<{ seq: string; text: string; epoch: string | null }>(
    `SELECT seq, text, epoch FROM ${db.table('transcript')} WHERE agent_id = $1 ORDER BY seq`,
    [agentId],
  );
  return result.rows.map((row) => ({
    seq: Number(row.seq),
    text: row.text,
    epoch: row.epoch === null ? null : Number(row.epoch),
  }));
}

/** Sets the agent's approval rules (`{"shell": "ask"}`) in its profile row, read by every worker. */
export async function setApprovalRules(
  db: Database,
  agentId: string,
  approvals: Record<string, 'ask' | 'auto'>,
): Promise<void> {
  const { rows } = await db.pool.query<{ profile: string }>(
    `SELECT profile FROM ${db.table('profiles')} WHERE agent_id = $1`,
    [agentId],
  );
  const profile = { ...(JSON.parse(rows[0]!.profile) as Record<string, unknown>), approvals };
  await db.pool.query(
    `UPDATE ${db.table('profiles')} SET profile = $2, version = version + 1 WHERE agent_id = $1`,
    [agentId, JSON.stringify(profile)],
  );
}
