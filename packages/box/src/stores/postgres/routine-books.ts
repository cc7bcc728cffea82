/**
 * Every agent's routines in a cluster (`routines`, `routine_runs`): the book of routine-book.ts,
 * the same rows with the agent id beside, shared by every worker. Every worker arms every routine;
 * a fire's nonce (the routine and its instant) keeps it once in the inbox, whichever worker fires
 * first, so a routine fires once across workers and still fires when a worker is gone. Calls are
 * synchronous, as the SQLite book's are (sync-sql.ts: one round trip each, the event loop held).
 */
import type { Statement, StatementResult } from './sync-sql.ts';
import {
  RUNS_KEPT,
  routineOf,
  runOf,
  type RoutineBooks,
  type RoutineBookStore,
  type RoutineRecord,
  type RunRecord,
} from '../../routines/routine-book.ts';
import type { Database } from './database.ts';

/** Numbers as numbers (bigint columns come back as text), booleans as the SQLite book's 0 and 1. */
const ROUTINE_COLUMNS = `id, name, schedule, timezone, prompt, silent::int AS silent, paused::int AS paused,
  anchor::float8 AS anchor, last_instant::float8 AS last_instant, created_at::float8 AS created_at,
  updated_at::float8 AS updated_at`;
const RUN_COLUMNS = `routine_id, instant::float8 AS instant, fired_at::float8 AS fired_at, missed,
  missed_since::float8 AS missed_since, status, turn, started_at::float8 AS started_at,
  ended_at::float8 AS ended_at`;

export function pgRoutineBooks(db: Database): RoutineBooks {
  /** Agents known to have routines: start-up's, and every book opened since. */
  const known = new Set<string>();
  return {
    shared: true,
    agents: () => {
      const { rows } = db.sync().query(`SELECT DISTINCT agent_id FROM ${db.table('routines')}`);
      for (const row of rows) known.add(String(row.agent_id));
      return [...known];
    },
    has: (agentId) => known.has(agentId),
    open: (agentId) => {
      known.add(agentId);
      return new PgRoutineBook(db, agentId);
    },
  };
}

class PgRoutineBook implements RoutineBookStore {
  private readonly routines: string;
  private readonly runsTable: string;
  private readonly label: string;

  constructor(
    private readonly db: Database,
    private readonly agentId: string,
  ) {
    this.routines = db.table('routines');
    this.runsTable = db.table('routine_runs');
    this.label = `PostgreSQL ${this.routines} agent ${agentId}`;
  }

  /** Every change committed before it returned. */
  durable(): Promise<void> {
    return Promise.resolve();
  }

  all(): RoutineRecord[] {
    return this.query(
      `SELECT ${ROUTINE_COLUMNS} FROM ${this.routines} WHERE agent_id = $1 ORDER BY created_at, id`,
    ).rows.map((row) => routineOf(row, this.label));
  }

  get(id: string): RoutineRecord | undefined {
    const row = this.query(
      `SELECT ${ROUTINE_COLUMNS} FROM ${this.routines} WHERE agent_id = $1 AND id = $2`,
      [id],
    ).rows[0];
    return row === undefined ? undefined : routineOf(row, this.label);
  }

  put(routine: RoutineRecord): void {
    this.query(
      `INSERT INTO ${this.routines} (agent_id, id, name, schedule, timezone, prompt, silent, paused, anchor,
         last_instant, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
       ON CONFLICT (agent_id, id) DO UPDATE SET name = EXCLUDED.name, schedule = EXCLUDED.schedule,
         timezone = EXCLUDED.timezone, prompt = EXCLUDED.prompt, silent = EXCLUDED.silent,
         paused = EXCLUDED.paused, anchor = EXCLUDED.anchor, last_instant = EXCLUDED.last_instant,
         updated_at = EXCLUDED.updated_at`,
      [
        routine.id,
        routine.name,
        routine.schedule,
        routine.timezone,
        routine.prompt,
        routine.silent,
        routine.paused,
        routine.anchor,
        routine.lastInstant,
        routine.createdAt,
        routine.updatedAt,
      ],
    );
  }

  delete(id: string): boolean {
    const [, deleted] = this.transaction([
      { text: `DELETE FROM ${this.runsTable} WHERE agent_id = $1 AND routine_id = $2`, values: [id] },
      { text: `DELETE FROM ${this.routines} WHERE agent_id = $1 AND id = $2`, values: [id] },
    ]);
    return (deleted?.rowCount ?? 0) > 0;
  }

  fired(run: Pick<RunRecord, 'routineId' | 'instant' | 'firedAt' | 'missed' | 'missedSince'>): void {
    // Every worker that fired the instant records it: the same row, the latest instant kept.
    this.transaction([
      {
        text: `UPDATE ${this.routines} SET last_instant = GREATEST(COALESCE(last_instant, 0), $3)
               WHERE agent_id = $1 AND id = $2`,
        values: [run.routineId, run.instant],
      },
      {
        text: `INSERT INTO ${this.runsTable} (agent_id, routine_id, instant, fired_at, missed, missed_since, status)
               VALUES ($1, $2, $3, $4, $5, $6, 'queued')
               ON CONFLICT (agent_id, routine_id, instant) DO UPDATE SET fired_at = EXCLUDED.fired_at,
                 missed = EXCLUDED.missed, missed_since = EXCLUDED.missed_since`,
        values: [run.routineId, run.instant, run.firedAt, run.missed, run.missedSince],
      },
      {
        text: `DELETE FROM ${this.runsTable} WHERE agent_id = $1 AND routine_id = $2 AND instant NOT IN
                 (SELECT instant FROM ${this.runsTable} WHERE agent_id = $1 AND routine_id = $2
                  ORDER BY instant DESC LIMIT $3)`,
        values: [run.routineId, RUNS_KEPT],
      },
    ]);
  }

  started(routineId: string, instant: number, turn: number, at: number): void {
    this.query(
      `INSERT INTO ${this.runsTable} (agent_id, routine_id, instant, fired_at, status, turn, started_at)
       VALUES ($1, $2, $3, $4, 'running', $5, $4)
       ON CONFLICT (agent_id, routine_id, instant) DO UPDATE SET status = 'running', turn = EXCLUDED.turn,
         started_at = EXCLUDED.started_at`,
      [routineId, instant, at, turn],
    );
  }

  failed(turn: number): void {
    this.query(
      `UPDATE ${this.runsTable} SET status = 'failed' WHERE agent_id = $1 AND turn = $2 AND ended_at IS NULL`,
      [turn],
    );
  }

  ended(turn: number, at: number, delivered: boolean): RunRecord | undefined {
    const row = this.query(
      `SELECT ${RUN_COLUMNS} FROM ${this.runsTable} WHERE agent_id = $1 AND turn = $2 AND ended_at IS NULL`,
      [turn],
    ).rows[0];
    if (row === undefined) return undefined;
    const run = runOf(row);
    const routine = this.get(run.routineId);
    const status = run.status === 'failed' ? 'failed' : !delivered && routine?.silent ? 'silent' : 'ok';
    this.query(
      `UPDATE ${this.runsTable} SET status = $4, ended_at = $5 WHERE agent_id = $1 AND routine_id = $2 AND instant = $3`,
      [run.routineId, run.instant, status, at],
    );
    return { ...run, status, endedAt: at };
  }

  runs(routineId: string, limit = RUNS_KEPT): RunRecord[] {
    return this.query(
      `SELECT ${RUN_COLUMNS} FROM ${this.runsTable} WHERE agent_id = $1 AND routine_id = $2
       ORDER BY instant DESC LIMIT $3`,
      [routineId, limit],
    ).rows.map(runOf);
  }

  close(): void {}

  /** One statement, the agent id its first parameter. */
  private query(text: string, values: readonly unknown[] = []): StatementResult {
    return this.db.sync().query(text, [this.agentId, ...values]);
  }

  private transaction(statements: readonly Statement[]): StatementResult[] {
    return this.db
      .sync()
      .transaction(
        statements.map((step) => ({ text: step.text, values: [this.agentId, ...(step.values ?? [])] })),
      );
  }
}
