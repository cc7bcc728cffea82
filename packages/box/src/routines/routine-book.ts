/**
 * One agent's routines and their run history, in `agents/<id>/routines.db` (sendbox's, beside
 * Grok Bot's store.db; 0600). A routine's `last_instant` is the latest scheduled instant that was
 * handed to the agent's inbox; a fire's nonce is the routine id plus that instant, so a fire the
 * box repeats after a crash (the inbox took it, the book did not hear back) is the same input and
 * the inbox keeps it once.
 *
 * Run states: `queued` (in the inbox) → `running` (its turn started: `turn`) → `ok` | `failed`
 * (an error notice in its turn) | `silent` (a silent run that sent nothing).
 */
import { chmodSync, existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { WalSync } from '../stores/files/wal-sync.ts';

const DDL = `
CREATE TABLE IF NOT EXISTS routines (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  schedule TEXT NOT NULL,
  timezone TEXT NOT NULL,
  prompt TEXT NOT NULL,
  silent INTEGER NOT NULL DEFAULT 0,
  paused INTEGER NOT NULL DEFAULT 0,
  anchor INTEGER NOT NULL,
  last_instant INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS routine_runs (
  routine_id TEXT NOT NULL,
  instant INTEGER NOT NULL,
  fired_at INTEGER NOT NULL,
  missed INTEGER NOT NULL DEFAULT 1,
  missed_since INTEGER,
  status TEXT NOT NULL,
  turn INTEGER,
  started_at INTEGER,
  ended_at INTEGER,
  PRIMARY KEY (routine_id, instant)
) STRICT;
CREATE INDEX IF NOT EXISTS idx_routine_runs_turn ON routine_runs(turn) WHERE turn IS NOT NULL;
`;

/** Runs kept per routine (the oldest go first). */
export const RUNS_KEPT = 50;

const routineRow = z.object({
  id: z.string(),
  name: z.string(),
  schedule: z.string(),
  timezone: z.string(),
  prompt: z.string(),
  silent: z.number(),
  paused: z.number(),
  anchor: z.number(),
  last_instant: z.number().nullable(),
  created_at: z.number(),
  updated_at: z.number(),
});

const runRow = z.object({
  routine_id: z.string(),
  instant: z.number(),
  fired_at: z.number(),
  missed: z.number(),
  missed_since: z.number().nullable(),
  status: z.string(),
  turn: z.number().nullable(),
  started_at: z.number().nullable(),
  ended_at: z.number().nullable(),
});

export interface RoutineRecord {
  id: string;
  name: string;
  schedule: string;
  timezone: string;
  prompt: string;
  silent: boolean;
  paused: boolean;
  /** Where `@every` counts from. */
  anchor: number;
  /** The latest instant handed to the inbox (null: never fired). */
  lastInstant: number | null;
  createdAt: number;
  updatedAt: number;
}

export type RunStatus = 'queued' | 'running' | 'ok' | 'failed' | 'silent';

export interface RunRecord {
  routineId: string;
  /** The scheduled instant this run stands for. */
  instant: number;
  firedAt: number;
  /** How many instants it stands for (more than 1 after downtime), from `missedSince`. */
  missed: number;
  missedSince: number | null;
  status: RunStatus;
  /** The agent's turn it opened (its user message is `t<turn>u`). */
  turn: number | null;
  startedAt: number | null;
  endedAt: number | null;
}

/** One agent's routines and runs, wherever they are kept (a routines.db, or a cluster's rows). */
export interface RoutineBookStore {
  /** Resolves once every change made before this call is durable. */
  durable(): Promise<void>;
  all(): RoutineRecord[];
  get(id: string): RoutineRecord | undefined;
  put(routine: RoutineRecord): void;
  delete(id: string): boolean;
  /** A fire the inbox took: the routine's last instant, and its run queued (once per instant). */
  fired(run: Pick<RunRecord, 'routineId' | 'instant' | 'firedAt' | 'missed' | 'missedSince'>): void;
  /** The run's turn started (its session may start it before `fired` is recorded: the row is made here then). */
  started(routineId: string, instant: number, turn: number, at: number): void;
  /** The run of turn `turn` failed (an error notice); it ends with its turn. */
  failed(turn: number): void;
  /** Turn `turn` ended: its run (if it was one) is over. Returns the run, or undefined. */
  ended(turn: number, at: number, delivered: boolean): RunRecord | undefined;
  /** A routine's runs, newest first. */
  runs(routineId: string, limit?: number): RunRecord[];
  close(): void;
}

/** Where every agent's book is: the data dir's files (fileRoutineBooks), or a cluster's rows. */
export interface RoutineBooks {
  /**
   * True when every worker of a cluster shares the books: each arms every routine (the inbox's
   * nonce keeps a fire once), and a change told by another worker is read again.
   */
  readonly shared: boolean;
  /** The agents whose routines start-up arms (of `known`, the agents in the data dir). */
  agents(known: readonly string[]): string[];
  /** True when the agent has a book (without making one). */
  has(agentId: string): boolean;
  /** The agent's book, made on first use. */
  open(agentId: string): RoutineBookStore;
}

/** `agents/<id>/routines.db` in the data dir. */
export function fileRoutineBooks(fileOf: (agentId: string) => string): RoutineBooks {
  return {
    shared: false,
    agents: (known) => known.filter((id) => existsSync(fileOf(id))),
    has: (id) => existsSync(fileOf(id)),
    open: (id) => new RoutineBook(fileOf(id)),
  };
}

export function routineOf(raw: unknown, file: string): RoutineRecord {
  const parsed = routineRow.safeParse(raw);
  if (!parsed.success)
    throw new Error(
      `${file}: a routine row is not in sendbox's shape; move the file aside to drop the routines`,
    );
  const row = parsed.data;
  return {
    id: row.id,
    name: row.name,
    schedule: row.schedule,
    timezone: row.timezone,
    prompt: row.prompt,
    silent: row.silent !== 0,
    paused: row.paused !== 0,
    anchor: row.anchor,
    lastInstant: row.last_instant,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function runOf(raw: unknown): RunRecord {
  const row = runRow.parse(raw);
  return {
    routineId: row.routine_id,
    instant: row.instant,
    firedAt: row.fired_at,
    missed: row.missed,
    missedSince: row.missed_since,
    status: row.status as RunStatus,
    turn: row.turn,
    startedAt: row.started_at,
    endedAt: row.ended_at,
  };
}

export class RoutineBook implements RoutineBookStore {
  private readonly db: Database.Database;
  private readonly sync: WalSync;
  /** Prepared once per book: preparing costs more than running them, and a fire runs several. */
  private readonly sql: ReturnType<typeof statements>;

  constructor(readonly file: string) {
    const fresh = !existsSync(file);
    this.db = new Database(file, { timeout: 5000 });
    if (fresh) chmodSync(file, 0o600);
    this.db.pragma('journal_mode = WAL');
    // No fsync on the event loop (a burst of fires would wait on hundreds): a change of a routine
    // is made durable by `durable()` (wal-sync.ts); a fire's and a run's rows need no fsync of
    // their own, as the inbox is what keeps a fire once (its nonce) and a lost `last_instant`
    // only repeats a fire the inbox refuses.
    this.db.pragma('synchronous = NORMAL');
    this.db.exec(DDL);
    this.sync = new WalSync(`${file}-wal`);
    this.sql = statements(this.db);
  }

  /** Resolves once every change made before this call is on disk. */
  durable(): Promise<void> {
    return this.sync.durable();
  }

  /** fdatasyncs of the WAL so far (tests count them). */
  get syncs(): number {
    return this.sync.syncs;
  }

  all(): RoutineRecord[] {
    return this.sql.all.all().map((row) => routineOf(row, this.file));
  }

  get(id: string): RoutineRecord | undefined {
    const row = this.sql.get.get(id);
    return row === undefined ? undefined : routineOf(row, this.file);
  }

  put(routine: RoutineRecord): void {
    this.sql.put.run({ ...routine, silent: routine.silent ? 1 : 0, paused: routine.paused ? 1 : 0 });
  }

  delete(id: string): boolean {
    return this.db.transaction(() => {
      this.sql.deleteRuns.run(id);
      return this.sql.delete.run(id).changes > 0;
    })();
  }

  /** A fire the inbox took: the routine's last instant, and its run queued (once per instant). */
  fired(run: Pick<RunRecord, 'routineId' | 'instant' | 'firedAt' | 'missed' | 'missedSince'>): void {
    this.db.transaction(() => {
      this.sql.lastInstant.run(run.instant, run.routineId);
      this.sql.queued.run(run.routineId, run.instant, run.firedAt, run.missed, run.missedSince);
      this.sql.trimRuns.run(run.routineId, run.routineId, RUNS_KEPT);
    })();
  }

  /** The run's turn started (its session may start it before `fired` is recorded: the row is made here then). */
  started(routineId: string, instant: number, turn: number, at: number): void {
    this.sql.started.run(routineId, instant, at, turn, at);
  }

  /** The run of turn `turn` failed (an error notice); it ends with its turn. */
  failed(turn: number): void {
    this.sql.failed.run(turn);
  }

  /** Turn `turn` ended: its run (if it was one) is over. Returns the run, or undefined. */
  ended(turn: number, at: number, delivered: boolean): RunRecord | undefined {
    const row = this.sql.openRun.get(turn);
    if (row === undefined) return undefined;
    const run = runOf(row);
    const routine = this.get(run.routineId);
    const status: RunStatus =
      run.status === 'failed' ? 'failed' : !delivered && routine?.silent ? 'silent' : 'ok';
    this.sql.ended.run(status, at, run.routineId, run.instant);
    return { ...run, status, endedAt: at };
  }

  /** A routine's runs, newest first. */
  runs(routineId: string, limit = RUNS_KEPT): RunRecord[] {
    return this.sql.runs.all(routineId, limit).map(runOf);
  }

  close(): void {
    this.db.close();
    void this.sync.close();
  }
}

function statements(db: Database.Database) {
  return {
    all: db.prepare('SELECT * FROM routines ORDER BY created_at, id'),
    get: db.prepare('SELECT * FROM routines WHERE id = ?'),
    put: db.prepare(
      `INSERT INTO routines (id, name, schedule, timezone, prompt, silent, paused, anchor, last_instant, created_at, updated_at)
       VALUES (@id, @name, @schedule, @timezone, @prompt, @silent, @paused, @anchor, @lastInstant, @createdAt, @updatedAt)
       ON CONFLICT(id) DO UPDATE SET name = @name, schedule = @schedule, timezone = @timezone, prompt = @prompt,
         silent = @silent, paused = @paused, anchor = @anchor, last_instant = @lastInstant, updated_at = @updatedAt`,
    ),
    deleteRuns: db.prepare('DELETE FROM routine_runs WHERE routine_id = ?'),
    delete: db.prepare('DELETE FROM routines WHERE id = ?'),
    lastInstant: db.prepare(
      'UPDATE routines SET last_instant = MAX(COALESCE(last_instant, 0), ?) WHERE id = ?',
    ),
    queued: db.prepare(
      `INSERT INTO routine_runs (routine_id, instant, fired_at, missed, missed_since, status)
       VALUES (?, ?, ?, ?, ?, 'queued')
       ON CONFLICT (routine_id, instant) DO UPDATE SET fired_at = excluded.fired_at,
         missed = excluded.missed, missed_since = excluded.missed_since`,
    ),
    trimRuns: db.prepare(
      `DELETE FROM routine_runs WHERE routine_id = ? AND instant NOT IN
         (SELECT instant FROM routine_runs WHERE routine_id = ? ORDER BY instant DESC LIMIT ?)`,
    ),
    started: db.prepare(
      `INSERT INTO routine_runs (routine_id, instant, fired_at, status, turn, started_at)
       VALUES (?, ?, ?, 'running', ?, ?)
       ON CONFLICT (routine_id, instant) DO UPDATE SET status = 'running', turn = excluded.turn,
         started_at = excluded.started_at`,
    ),
    failed: db.prepare(`UPDATE routine_runs SET status = 'failed' WHERE turn = ? AND ended_at IS NULL`),
    openRun: db.prepare('SELECT * FROM routine_runs WHERE turn = ? AND ended_at IS NULL'),
    ended: db.prepare(
      'UPDATE routine_runs SET status = ?, ended_at = ? WHERE routine_id = ? AND instant = ?',
    ),
    runs: db.prepare('SELECT * FROM routine_runs WHERE routine_id = ? ORDER BY instant DESC LIMIT ?'),
  };
}
