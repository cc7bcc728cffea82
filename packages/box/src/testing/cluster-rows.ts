/**
 * The rows cluster workers wrote, read straight from PostgreSQL with the lease epoch of each
 * (tests only).
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
