/**
 * A cluster's shared task output (tasks/shared-output.ts): `task_output` rows, each a piece of a
 * background command's output as its worker shared it, raw as in its file. Each append drops the
 * pieces wholly older than the newest SHARED_OUTPUT_KEEP_BYTES, in the same statement; a task's
 * first append drops the output of the agent's tasks that ended over KEEP_AFTER_END_MS ago. How far
 * the model has read a task's output is its `tasks` row's `output_seen`.
 */
import { SHARED_OUTPUT_KEEP_BYTES, type SharedTaskOutput } from '../../tasks/shared-output.ts';
import type { Database } from './database.ts';

/** How long the shared output of an ended task is kept (dropped when another task of the agent starts). */
export const KEEP_AFTER_END_MS = 60 * 60_000;

export class PgTaskOutputs implements SharedTaskOutput {
  private readonly table: string;

  constructor(
    private readonly db: Database,
    private readonly agentId: string,
    private readonly keepBytes = SHARED_OUTPUT_KEEP_BYTES,
  ) {
    this.table = db.table('task_output');
  }

  async append(taskId: string, start: number, bytes: Buffer): Promise<void> {
    if (bytes.length === 0) return;
    // A task's first output: the output of the agent's tasks that ended over an hour ago goes (an
    // await after that long answers from the record; the file stays on the task's worker).
    if (start === 0) {
      await this.db.pool.query(
        `DELETE FROM ${this.table} o USING ${this.db.table('tasks')} t
         WHERE o.agent_id = $1 AND t.agent_id = o.agent_id AND t.id = o.task_id
           AND t.state <> 'running' AND t.ended_at < $2`,
        [this.agentId, Date.now() - KEEP_AFTER_END_MS],
      );
    }
    await this.db.pool.query(
      `WITH piece AS (
         INSERT INTO ${this.table} (agent_id, task_id, start_offset, bytes) VALUES ($1, $2, $3, $4)
         ON CONFLICT (agent_id, task_id, start_offset) DO NOTHING
       )
       DELETE FROM ${this.table}
       WHERE agent_id = $1 AND task_id = $2 AND start_offset + octet_length(bytes) <= $3::bigint + $5::bigint - $6::bigint`,
      [this.agentId, taskId, start, bytes, bytes.length, this.keepBytes],
    );
  }

  async since(taskId: string, from: number): Promise<{ start: number; end: number; bytes: Buffer }> {
    const { rows } = await this.db.pool.query<{ start: number; bytes: Buffer }>(
      `SELECT start_offset::float8 AS start, bytes FROM ${this.table}
       WHERE agent_id = $1 AND task_id = $2 AND start_offset + octet_length(bytes) > $3
       ORDER BY start_offset`,
      [this.agentId, taskId, from],
    );
    // The pieces are contiguous unless one was lost (its worker could not share it): then only what
    // follows the gap is given, as if the bytes before it had been dropped.
    let start = from;
    let cursor = from;
    let pieces: Buffer[] = [];
    for (const row of rows) {
      if (row.start > cursor) {
        start = cursor = row.start;
        pieces = [];
      }
      const skip = cursor - row.start;
      if (skip >= row.bytes.length) continue;
      pieces.push(row.bytes.subarray(skip));
      cursor = row.start + row.bytes.length;
    }
    return { start, end: cursor, bytes: Buffer.concat(pieces) };
  }

  async seen(taskId: string): Promise<number> {
    const { rows } = await this.db.pool.query<{ seen: number }>(
      `SELECT output_seen::float8 AS seen FROM ${this.db.table('tasks')} WHERE agent_id = $1 AND id = $2`,
      [this.agentId, taskId],
    );
    return rows[0]?.seen ?? 0;
  }

  async markSeen(taskId: string, upTo: number): Promise<void> {
    await this.db.pool.query(
      `UPDATE ${this.db.table('tasks')} SET output_seen = GREATEST(output_seen, $3)
       WHERE agent_id = $1 AND id = $2 AND output_seen < $3`,
      [this.agentId, taskId, upTo],
    );
  }
}
