/**
 * An agent's task records in a cluster (`tasks` rows; issue 25): the book of tasks/task-book.ts, the
 * same columns with the agent id beside and the worker whose process runs each task, shared by
 * every worker, so any gateway lists a task started in a turn on another worker with its state.
 *
 * A background process lives on its worker only. When that worker dies (its heartbeat,
 * worker-heartbeats.ts, older than the TTL), its running tasks are lost: any reader of the book
 * (the task list, an `await`, `openSubagent`, a session opening the agent) marks them `interrupted`
 * first, so a record never says `running` for a process that is gone, and the next session opened
 * tells the model. The reader whose statement marked a row is the only one handed it (the row's lock:
 * a reader racing it finds it marked already) and records itself as `lost_by`: it closes a lost
 * child's transcript, once (`interruptLeftovers` returns the rows it marked; any other read hands
 * them to the book's `lost` listener), and records that it did (`closing` cleared). A child whose
 * reader died before that is taken over by the next reader the same way. A stop asked through a gateway whose worker does not run
 * the task is a flag on its row, which the running worker acts on (cluster/task-stops.ts). Calls are
 * synchronous, as the SQLite book's are (sync-sql.ts).
 */
import {
  copiedValues,
  recordOf,
  type TaskNotice,
  type TaskRecord,
  type TaskStart,
  type TaskStore,
} from '../../tasks/task-book.ts';
import type { Database } from './database.ts';
import { fenceCall, fencedError, type AgentFence } from './leases.ts';
import type { StatementResult } from './sync-sql.ts';

/** SQLite's column names and types (bigints as numbers), and the worker. */
const COLUMNS = `id, kind, turn, tool_call_id, label, output_path, child_id AS agent_id, state,
  started_at::float8 AS started_at, ended_at::float8 AS ended_at, outcome, reported, notice, worker`;

export class PgTaskBook implements TaskStore {
  private readonly table: string;
  private readonly label: string;

  constructor(
    private readonly db: Database,
    private readonly agentId: string,
    /** This worker's name (its heartbeat's). */
    private readonly worker: string,
    /** A worker whose heartbeat is older than this is dead. */
    private readonly workerTtlMs: number,
    /**
     * The session's lease fence: a task a turn starts is recorded only while the lease has the
     * turn's epoch (a superseded worker starts nothing). Absent or a null epoch: unfenced.
     */
    private readonly fence?: AgentFence,
    /** Told of the tasks a read other than `interruptLeftovers` marked lost (their children are to be closed). */
    private readonly lost: (records: TaskRecord[]) => void = () => undefined,
  ) {
    this.table = db.table('tasks');
    this.label = `PostgreSQL ${this.table} agent ${agentId}`;
  }

  /**
   * Fenced: a task the agent's own turn starts is recorded only while the lease has the turn's epoch;
   * one a subagent's call starts (`startedBy`) also while that child's row says it runs on this worker
   * (a background child outlives its parent's turn: the epoch moves on, or is parked between jobs),
   * and not once the child was marked lost, so a superseded worker records none.
   */
  started(task: TaskStart): void {
    const fence = fenceCall(
      this.db,
      this.fence,
      12,
      task.startedBy === undefined ? undefined : { childId: task.startedBy, worker: this.worker },
    );
    const values = [
      task.id,
      task.kind,
      task.turn,
      task.toolCallId,
      task.label,
      task.outputPath,
      task.agentId,
      task.startedAt,
      task.notice === undefined ? 'told' : task.notice,
      this.worker,
    ];
    // Fenced: the lease check in the same statement (the row lands only while the epoch holds).
    const insert = `INSERT INTO ${this.table} (agent_id, id, kind, turn, tool_call_id, label, output_path, child_id,
         state, started_at, notice, worker)`;
    try {
      this.query(
        fence
          ? `${insert} SELECT $1, $2, $3, $4, $5, $6, $7, $8, 'running', $9, $10, $11 FROM (SELECT ${fence.sql}) AS fence`
          : `${insert} VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'running', $9, $10, $11)`,
        fence ? [...values, ...fence.values] : values,
      );
    } catch (error) {
      throw this.fence ? fencedError(this.fence, error) : error;
    }
  }

  /** The worker it names is the one it ran on in the original, else this one. */
  copied(record: TaskRecord): void {
    this.query(
      `INSERT INTO ${this.table} (agent_id, id, kind, turn, tool_call_id, label, output_path, child_id, state,
         started_at, ended_at, outcome, reported, notice, worker)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
      [...copiedValues(record), record.worker ?? this.worker],
    );
  }

  /**
   * A task marked lost while its worker was only paused (its heartbeat late) and then ended: its real
   * end wins while the model was not told it was lost (it is then told the end, once); once told
   * "lost", the row stays interrupted with its exit recorded, so the model never hears both. Not
   * fenced: the process ran here and ended, whoever holds the lease now (a refused end would leave the
   * row running under a live worker for ever).
   */
  ended(id: string, endedAt: number, outcome: unknown): void {
    this.query(
      `UPDATE ${this.table}
       SET state = CASE WHEN state = 'interrupted' AND reported = 1 THEN 'interrupted' ELSE 'ended' END,
           ended_at = $3, outcome = $4
       WHERE agent_id = $1 AND id = $2`,
      [id, endedAt, JSON.stringify(outcome)],
    );
  }

  interruptLeftovers(now: number): TaskRecord[] {
    return this.records(this.lapse(now));
  }

  unreported(): TaskRecord[] {
    return this.select(`state = 'interrupted' AND reported = 0 ORDER BY started_at`);
  }

  markReported(ids: readonly string[]): string[] {
    if (ids.length === 0) return [];
    return this.query(
      `UPDATE ${this.table} SET reported = 1 WHERE agent_id = $1 AND id = ANY($2) AND state = 'interrupted'
       RETURNING id`,
      [ids],
    ).rows.map((row) => String(row.id));
  }

  untold(): TaskRecord[] {
    return this.select(`state = 'ended' AND notice IS NULL ORDER BY ended_at, started_at`);
  }

  waking(): Map<string, TaskRecord[]> {
    const byNonce = new Map<string, TaskRecord[]>();
    for (const record of this.select(`notice LIKE 'wake:%' ORDER BY ended_at, started_at`)) {
      const nonce = record.notice!.slice('wake:'.length);
      byNonce.set(nonce, [...(byNonce.get(nonce) ?? []), record]);
    }
    return byNonce;
  }

  /** A wake marks only tasks no other wake took (another worker's session may wake the agent too). */
  setNotice(ids: readonly string[], notice: Exclude<TaskNotice, null>): void {
    if (ids.length === 0) return;
    this.query(
      `UPDATE ${this.table} SET notice = $3 WHERE agent_id = $1 AND id = ANY($2)` +
        (notice.startsWith('wake:') ? ' AND notice IS NULL' : ''),
      [ids, notice],
    );
  }

  get(id: string): TaskRecord | undefined {
    this.lapseAndTell();
    return this.select(`id = $2`, [id])[0];
  }

  recent(limit: number): TaskRecord[] {
    this.lapseAndTell();
    return this.select(`true ORDER BY started_at DESC LIMIT $2`, [limit]);
  }

  byToolCall(turn: number, toolCallId: string): TaskRecord | undefined {
    return this.select(`turn = $2 AND tool_call_id = $3 ORDER BY started_at DESC LIMIT 1`, [
      turn,
      toolCallId,
    ])[0];
  }

  requestStop(id: string): boolean {
    this.lapseAndTell();
    return (
      this.query(
        `UPDATE ${this.table} SET stop_requested = true
         WHERE agent_id = $1 AND id = $2 AND state = 'running' AND worker <> $3`,
        [id, this.worker],
      ).rowCount > 0
    );
  }

  childrenClosed(ids: readonly string[]): void {
    if (ids.length === 0) return;
    this.query(childrenClosedSql(this.table), [ids]);
  }

  close(): void {}

  /** Marks lost what a dead worker left running, and tells the `lost` listener of what it marked. */
  private lapseAndTell(): void {
    const marked = this.records(this.lapse(Date.now()));
    if (marked.length > 0) this.lost(marked);
  }

  /**
   * Marks the running tasks of dead workers (not this one) interrupted, lost by this one; the rows it
   * marked (a row another reader marked first is not among them: the update waits for its lock, then
   * finds it no longer running).
   */
  private lapse(now: number): StatementResult {
    // A child whose reader died before closing it (`closing` still set) is taken over the same way:
    // lost by this worker now, which may then write its transcript's closing records.
    return this.query(
      `UPDATE ${this.table} t
       SET state = 'interrupted', ended_at = CASE WHEN t.state = 'running' THEN $2 ELSE t.ended_at END,
           lost_by = $3, closing = (t.kind = 'subagent')
       WHERE t.agent_id = $1
         AND ((t.state = 'running' AND t.worker <> $3)
              OR (t.state = 'interrupted' AND t.closing AND t.lost_by <> $3))
         AND NOT EXISTS (SELECT 1 FROM ${this.db.table('worker_heartbeats')} h
                         WHERE h.worker = CASE WHEN t.state = 'running' THEN t.worker ELSE t.lost_by END
                           AND h.seen_at > now() - make_interval(secs => $4::float8 / 1000))
       RETURNING ${COLUMNS}`,
      [now, this.worker, this.workerTtlMs],
    );
  }

  private select(where: string, values: readonly unknown[] = []): TaskRecord[] {
    return this.records(
      this.query(`SELECT ${COLUMNS} FROM ${this.table} WHERE agent_id = $1 AND ${where}`, values),
    );
  }

  private records(result: StatementResult): TaskRecord[] {
    return result.rows.map((row) => ({
      ...recordOf(row, this.label, 'the row was not written by sendbox; delete it'),
      worker: String(row.worker),
    }));
  }

  /** One statement, the agent id its first parameter. */
  private query(text: string, values: readonly unknown[] = []): StatementResult {
    return this.db.sync().query(text, [this.agentId, ...values]);
  }
}

/** A task a previous process of a worker's name left running, and the agent it is of. */
export interface LeftoverTask {
  agentId: string;
  task: TaskRecord;
}

/**
 * At a worker's start, before it runs anything: the tasks still `running` under its name are a
 * previous process's of the same name (a restart within the TTL keeps the heartbeat fresh), lost
 * with it, as file mode's open finds a crash's. They are marked interrupted, lost by this worker
 * (which closes their children's transcripts: cluster/leftover-children.ts), and returned, with the
 * children that process had marked lost but not closed yet; the next session that opens or catches
 * up with the agent tells the model.
 */
export async function interruptOwnLeftovers(
  db: Database,
  worker: string,
  now = Date.now(),
): Promise<LeftoverTask[]> {
  const table = db.table('tasks');
  const { rows } = await db.pool.query<Record<string, unknown>>(
    `UPDATE ${table}
     SET state = 'interrupted', ended_at = CASE WHEN state = 'running' THEN $2 ELSE ended_at END,
         lost_by = $1, closing = (kind = 'subagent')
     WHERE (worker = $1 AND state = 'running') OR (lost_by = $1 AND state = 'interrupted' AND closing)
     RETURNING agent_id AS parent_id, ${COLUMNS}`,
    [worker, now],
  );
  return rows.map((row) => ({
    agentId: String(row.parent_id),
    task: {
      ...recordOf(
        row,
        `PostgreSQL ${table} agent ${String(row.parent_id)}`,
        'the row was not written by sendbox; delete it',
      ),
      worker,
    },
  }));
}

/** Records that these interrupted children of the agent had their transcripts closed. */
export async function childrenClosed(db: Database, agentId: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.pool.query(childrenClosedSql(db.table('tasks')), [agentId, ids]);
}

function childrenClosedSql(table: string): string {
  return `UPDATE ${table} SET closing = false WHERE agent_id = $1 AND id = ANY($2)`;
}
