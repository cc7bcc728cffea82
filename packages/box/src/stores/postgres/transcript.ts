/**
 * An agent's model transcript in PostgreSQL: each append is one row of `transcript` holding the exact
 * JSONL lines the grok_bot codec rendered (stores/transcript-writer.ts stays the one writer), so the
 * rows joined in seq order are the file the files backend would hold. An append is one transaction
 * behind the agent's fence (leases.ts): whole or not at all, and refused to a superseded worker.
 */
import type { TranscriptLog } from '../transcript.ts';
import type { Database } from './database.ts';
import { fencedError, writeLockKey, type AgentFence } from './leases.ts';

export class PgTranscript implements TranscriptLog {
  readonly source: string;
  /** The last seq this log knows of (what it read plus its own appends); null: not read, or another writer appended. */
  private known: number | null = null;

  constructor(
    private readonly db: Database,
    private readonly fence: AgentFence,
  ) {
    this.source = `postgres ${db.table('transcript')} agent ${fence.agentId}`;
  }

  append(text: string): void {
    let results;
    try {
      // One statement, one round trip: the fence and the row (database.ts, append_transcript).
      results = this.db
        .sync()
        .query(`SELECT ${this.db.schema}.append_transcript($1, $2, $3, $4) AS seq`, [
          writeLockKey(this.db, this.fence.agentId),
          this.fence.agentId,
          this.fence.epoch,
          text,
        ]);
    } catch (error) {
      throw fencedError(this.fence, error);
    }
    const seq = Number(results.rows[0]!.seq);
    this.known = this.known !== null && seq === this.known + 1 ? seq : null;
  }

  async read(): Promise<string> {
    const { rows } = await this.db.pool.query<{ seq: string; text: string }>(
      `SELECT seq, text FROM ${this.db.table('transcript')} WHERE agent_id = $1 ORDER BY seq`,
      [this.fence.agentId],
    );
    this.known = rows.length === 0 ? 0 : Number(rows.at(-1)!.seq);
    return rows.map((row) => row.text).join('');
  }

  unchanged(): boolean {
    if (this.known === null) return false;
    const { rows } = this.db
      .sync()
      .query(`SELECT COALESCE(max(seq), 0) AS seq FROM ${this.db.table('transcript')} WHERE agent_id = $1`, [
        this.fence.agentId,
      ]);
    return Number(rows[0]!.seq) === this.known;
  }

  close(): void {
    // The connection is the worker's: closed with the database.
  }
}
