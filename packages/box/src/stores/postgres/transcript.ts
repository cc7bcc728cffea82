/**
 * An agent's model transcript in PostgreSQL: each append is one row of `transcript` holding the exact
 * JSONL lines the grok_bot codec rendered (stores/transcript-writer.ts stays the one writer), so the
 * rows joined in seq order are the file the files backend would hold. An append is one transaction
 * behind the agent's fence (leases.ts): whole or not at all, and refused to a superseded worker.
 *
 * A subagent's transcript is the same log over `subagent_transcript`, the rows of one child of the
 * agent, written behind the parent's fence (database.ts, append_subagent_transcript).
 */
import type { TranscriptLog } from '../transcript.ts';
import type { Database } from './database.ts';
import { fencedError, writeLockKey, type AgentFence } from './leases.ts';

/** Which of the agent's subagents a log is, and the worker that writes it (its task runs there). */
export interface ChildOf {
  childId: string;
  worker: string | null;
}

/** Where a log's rows are: its table, and the key of the agent's (or one child's) rows, `$1` (and `$2`). */
export interface TranscriptRows {
  table: string;
  where: string;
  key: string[];
}

/** The rows of the agent's transcript, or of its subagent `childId`'s. */
export function transcriptRows(db: Database, agentId: string, childId?: string): TranscriptRows {
  return childId === undefined
    ? { table: db.table('transcript'), where: 'agent_id = $1', key: [agentId] }
    : {
        table: db.table('subagent_transcript'),
        where: 'agent_id = $1 AND child_id = $2',
        key: [agentId, childId],
      };
}

export class PgTranscript implements TranscriptLog {
  readonly source: string;
  /** The last seq this log knows of (what it read plus its own appends); null: not read, or another writer appended. */
  private known: number | null = null;
  private readonly rows: TranscriptRows;

  constructor(
    private readonly db: Database,
    private readonly fence: AgentFence,
    private readonly child?: ChildOf,
  ) {
    this.rows = transcriptRows(db, fence.agentId, child?.childId);
    this.source = `postgres ${this.rows.table} agent ${fence.agentId}${child ? ` subagent ${child.childId}` : ''}`;
  }

  append(text: string): void {
    const { db, fence, child } = this;
    let results;
    try {
      // One statement, one round trip: the fence and the row (database.ts).
      results = child
        ? db
            .sync()
            .query(`SELECT ${db.schema}.append_subagent_transcript($1, $2, $3, $4, $5, $6) AS seq`, [
              writeLockKey(db, `${fence.agentId}/${child.childId}`),
              fence.agentId,
              fence.epoch,
              child.worker,
              child.childId,
              text,
            ])
        : db
            .sync()
            .query(`SELECT ${db.schema}.append_transcript($1, $2, $3, $4) AS seq`, [
              writeLockKey(db, fence.agentId),
              fence.agentId,
              fence.epoch,
              text,
            ]);
    } catch (error) {
      throw fencedError(fence, error);
    }
    const seq = Number(results.rows[0]!.seq);
    this.known = this.known !== null && seq === this.known + 1 ? seq : null;
  }

  async read(): Promise<string> {
    const { rows } = await this.db.pool.query<{ seq: string; text: string }>(
      `SELECT seq, text FROM ${this.rows.table} WHERE ${this.rows.where} ORDER BY seq`,
      this.rows.key,
    );
    this.known = rows.length === 0 ? 0 : Number(rows.at(-1)!.seq);
    return rows.map((row) => row.text).join('');
  }

  unchanged(): boolean {
    if (this.known === null) return false;
    const { rows } = this.db
      .sync()
      .query(
        `SELECT COALESCE(max(seq), 0) AS seq FROM ${this.rows.table} WHERE ${this.rows.where}`,
        this.rows.key,
      );
    return Number(rows[0]!.seq) === this.known;
  }

  close(): void {
    // The connection is the worker's: closed with the database.
  }
}
