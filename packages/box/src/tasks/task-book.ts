/**
 * The durable record of an agent's background work (`agents/<id>/tasks.db`,
 * sendbox's own file: Grok Bot's store.db is left as Grok Bot has it). A task
 * is written `running` before it starts and `ended` when it ends, so after a
 * crash the tasks still `running` are the ones the crash cut: the next open
 * marks them `interrupted`, the next turn tells the model, and the turn closer
 * finds the child agent an interrupted `task` call had started.
 *
 * A background task that ended on its own is also recorded as told to the model or not (`notice`):
 * NULL until an `await` showed its end or a wake input carried it (`wake:<nonce>`, then `told` once
 * the inbox holds that input), so after a crash the next open finishes exactly the wakes it owes
 * (tasks/task-wakes.ts).
 *
 * Opened on first use: an agent that never started a task has no file.
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { z } from 'zod';
import type { AgentFence } from '../stores/postgres/leases.ts';

const DDL = `
CREATE TABLE IF NOT EXISTS tasks (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  turn INTEGER NOT NULL,
  tool_call_id TEXT NOT NULL,
  label TEXT NOT NULL,
  output_path TEXT,
  agent_id TEXT,
  state TEXT NOT NULL,
  started_at INTEGER NOT NULL,
  ended_at INTEGER,
  outcome TEXT,
  reported INTEGER NOT NULL DEFAULT 0,
  notice TEXT DEFAULT 'told',
  closing INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX IF NOT EXISTS idx_tasks_open ON tasks(state) WHERE state != 'ended';
`;

/** Books written before `notice` existed: their tasks count as told (no wake for old work). */
const ADD_NOTICE = `ALTER TABLE tasks ADD COLUMN notice TEXT DEFAULT 'told'`;
/**
 * Books written before `closing` existed: none of their children waits to be closed. `closing` is 1
 * from when a child's task is marked interrupted until its transcript was closed.
 */
const ADD_CLOSING = `ALTER TABLE tasks ADD COLUMN closing INTEGER NOT NULL DEFAULT 0`;

/** Whether the model was told a task's end: not yet (null), in a wake input not yet accepted, or told. */
export type TaskNotice = null | `wake:${string}` | 'told';

export type TaskKind = 'command' | 'subagent';
export type TaskState = 'running' | 'ended' | 'interrupted';

export interface TaskRecord {
  id: string;
  kind: TaskKind;
  /** The turn whose tool call started it. */
  turn: number;
  toolCallId: string;
  /** The command (scrubbed) or the child's description. */
  label: string;
  outputPath: string | null;
  /** A child's `sand-subagent-<uuid>`. */
  agentId: string | null;
  state: TaskState;
  startedAt: number;
  endedAt: number | null;
  /** How it ended, as the tool that reports it wrote it (JSON). */
  outcome: unknown;
  /** An interrupted task the model was told about. */
  reported: boolean;
  /** Whether the model was told how it ended (see the header). */
  notice: TaskNotice;
  /** The cluster worker whose process runs it (a cluster's records only: stores/postgres/task-book.ts). */
  worker?: string;
}

/** What `TaskStore.started` records. */
export type TaskStart = Omit<
  TaskRecord,
  'state' | 'endedAt' | 'outcome' | 'reported' | 'notice' | 'worker'
> & {
  notice?: TaskNotice;
  startedBy?: string;
};

/**
 * Where an agent's task records are kept: `tasks.db` in its folder (TaskBook), or a cluster's rows
 * every worker shares (stores/postgres/task-book.ts). Calls are synchronous, as SQLite's are.
 */
export interface TaskStore {
  /**
   * Records a task as running (before it starts: a crash after this reports it interrupted).
   * `startedBy`: the subagent whose call starts it (absent: the agent's own turn); a cluster's book
   * fences the record on that child's run as well as on the turn's lease epoch.
   */
  started(task: TaskStart): void;
  /**
   * Records, as it stands, a task that ended in the agent this one is a copy of (duplicateAgent: the
   * subagents whose transcripts the copy takes along); a running one is refused.
   */
  copied(record: TaskRecord): void;
  /**
   * Records a task's end. In a cluster a task can be marked interrupted while it still runs (its
   * worker paused): once the model was told it was lost it stays interrupted, its outcome recorded.
   */
  ended(id: string, endedAt: number, outcome: unknown): void;
  /**
   * Marks the tasks a crash cut as `interrupted` and returns them (call on open, before any task of
   * this process starts): in a file every task still `running`; in a cluster those whose worker died.
   * With them come the interrupted children whose transcripts a crash (or a dead reader) left
   * unclosed: a child marked interrupted stays to be closed until `childrenClosed` records it.
   */
  interruptLeftovers(now: number): TaskRecord[];
  /** Records that these interrupted children's transcripts were closed (the mark above is cleared). */
  childrenClosed(ids: readonly string[]): void;
  /** Interrupted tasks the model has not been told about yet. */
  unreported(): TaskRecord[];
  /**
   * Marks these interrupted tasks told; the ids it marked. A task that ended meanwhile (a cluster
   * worker that was only paused) is not marked: its end is told instead.
   */
  markReported(ids: readonly string[]): string[];
  /** Tasks that ended with their end not told to the model yet, oldest first. */
  untold(): TaskRecord[];
  /** Tasks put in a wake input whose acceptance was not recorded (a crash between the two), by nonce. */
  waking(): Map<string, TaskRecord[]>;
  /** Records what the model was told of these tasks' ends (one transaction). */
  setNotice(ids: readonly string[], notice: Exclude<TaskNotice, null>): void;
  get(id: string): TaskRecord | undefined;
  /** The latest tasks, newest first (the UI's rows after a reload). */
  recent(limit: number): TaskRecord[];
  /** The task a tool call of turn `turn` started (the turn closer's question for an open `task` call). */
  byToolCall(turn: number, toolCallId: string): TaskRecord | undefined;
  /**
   * Asks the worker running a task this process does not run to stop it (a cluster's book: that
   * worker stops it within a second); false when no such task is running. Absent: nothing else runs tasks.
   */
  requestStop?(id: string): boolean;
  close(): void;
}

/**
 * Opens an agent's task book for one of its sessions: `fence` is the session's stores' lease fence (a
 * cluster's), which a turn's task rows pass; `lost` is told of the tasks a read of the book marked
 * lost (a cluster's book: their worker died), so their children's transcripts get closed.
 */
export type TaskBookOpener = (
  agentId: string,
  fence: AgentFence | undefined,
  lost: (records: TaskRecord[]) => void,
) => TaskStore;

const rowSchema = z.object({
  id: z.string(),
  kind: z.enum(['command', 'subagent']),
  turn: z.number().int(),
  tool_call_id: z.string(),
  label: z.string(),
  output_path: z.string().nullable(),
  agent_id: z.string().nullable(),
  state: z.enum(['running', 'ended', 'interrupted']),
  started_at: z.number(),
  ended_at: z.number().nullable(),
  outcome: z.string().nullable(),
  reported: z.number(),
  notice: z
    .string()
    .regex(/^(wake:.+|told)$/)
    .nullable(),
});

/** A row (SQLite's columns) as a record; `where` and `fix` name the store and the way out in an error. */
export function recordOf(
  raw: unknown,
  where: string,
  fix = 'move the file aside to start the agent without its task history',
): TaskRecord {
  const parsed = rowSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `${where}: a row of tasks is not in sendbox's shape (${issue?.path.join('.') ?? ''}: ${issue?.message ?? ''}); ${fix}`,
    );
  }
  const row = parsed.data;
  let outcome: unknown = null;
  try {
    outcome = row.outcome === null ? null : JSON.parse(row.outcome);
  } catch {
    outcome = null;
  }
  return {
    id: row.id,
    kind: row.kind,
    turn: row.turn,
    toolCallId: row.tool_call_id,
    label: row.label,
    outputPath: row.output_path,
    agentId: row.agent_id,
    state: row.state,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    outcome,
    reported: row.reported !== 0,
    notice: row.notice as TaskNotice,
  };
}

/** A copied record's columns, in `TaskBook.copied`'s order (a cluster's book adds its own after them). */
export function copiedValues(record: TaskRecord): unknown[] {
  if (record.state === 'running')
    throw new Error(`task ${record.id} is still running: only an ended task is copied`);
  return [
    record.id,
    record.kind,
    record.turn,
    record.toolCallId,
    record.label,
    record.outputPath,
    record.agentId,
    record.state,
    record.startedAt,
    record.endedAt,
    record.outcome === null ? null : JSON.stringify(record.outcome),
    record.reported ? 1 : 0,
    record.notice,
  ];
}

export class TaskBook implements TaskStore {
  private db: Database.Database | null = null;

  constructor(readonly file: string) {}

  /** Records a task as running (before it starts: a crash after this reports it interrupted). */
  started(task: TaskStart): void {
    this.open()
      .prepare(
        `INSERT INTO tasks (id, kind, turn, tool_call_id, label, output_path, agent_id, state, started_at, notice)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)`,
      )
      .run(
        task.id,
        task.kind,
        task.turn,
        task.toolCallId,
        task.label,
        task.outputPath,
        task.agentId,
        task.startedAt,
        task.notice === undefined ? 'told' : task.notice, // only a background task's end is owed a wake
      );
  }

  copied(record: TaskRecord): void {
    this.open()
      .prepare(
        `INSERT INTO tasks (id, kind, turn, tool_call_id, label, output_path, agent_id, state, started_at, ended_at,
                            outcome, reported, notice)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(...copiedValues(record));
  }

  ended(id: string, endedAt: number, outcome: unknown): void {
    this.open()
      .prepare(`UPDATE tasks SET state = 'ended', ended_at = ?, outcome = ? WHERE id = ?`)
      .run(endedAt, JSON.stringify(outcome), id);
  }

  /**
   * Marks every task still `running` as `interrupted` (call on open, before any task of this
   * process starts: those rows are what a crash left) and returns them.
   */
  interruptLeftovers(now: number): TaskRecord[] {
    if (!this.exists()) return [];
    const db = this.open();
    return db.transaction(() => {
      // Children a crash left between their mark and their close, then what this crash cut.
      const unclosed = db.prepare(`SELECT * FROM tasks WHERE state = 'interrupted' AND closing = 1`).all();
      const cut = db
        .prepare(
          `UPDATE tasks SET state = 'interrupted', ended_at = ?, closing = (kind = 'subagent')
           WHERE state = 'running' RETURNING *`,
        )
        .all(now);
      return [...unclosed, ...cut].map((row) => recordOf(row, this.file));
    })();
  }

  childrenClosed(ids: readonly string[]): void {
    if (ids.length === 0) return;
    const update = this.open().prepare(`UPDATE tasks SET closing = 0 WHERE id = ?`);
    this.open().transaction(() => ids.forEach((id) => update.run(id)))();
  }

  /** Interrupted tasks the model has not been told about yet. */
  unreported(): TaskRecord[] {
    if (!this.exists()) return [];
    return this.open()
      .prepare(`SELECT * FROM tasks WHERE state = 'interrupted' AND reported = 0 ORDER BY started_at`)
      .all()
      .map((row) => recordOf(row, this.file));
  }

  markReported(ids: readonly string[]): string[] {
    if (ids.length === 0) return [];
    const update = this.open().prepare(
      `UPDATE tasks SET reported = 1 WHERE id = ? AND state = 'interrupted'`,
    );
    return this.open().transaction(() => ids.filter((id) => update.run(id).changes > 0))();
  }

  /** Tasks that ended with their end not told to the model yet, oldest first. */
  untold(): TaskRecord[] {
    if (!this.exists()) return [];
    return this.open()
      .prepare(`SELECT * FROM tasks WHERE state = 'ended' AND notice IS NULL ORDER BY ended_at, started_at`)
      .all()
      .map((row) => recordOf(row, this.file));
  }

  /** Tasks put in a wake input whose acceptance was not recorded (a crash between the two), by nonce. */
  waking(): Map<string, TaskRecord[]> {
    const byNonce = new Map<string, TaskRecord[]>();
    if (!this.exists()) return byNonce;
    const rows = this.open()
      .prepare(`SELECT * FROM tasks WHERE notice LIKE 'wake:%' ORDER BY ended_at, started_at`)
      .all()
      .map((row) => recordOf(row, this.file));
    for (const record of rows) {
      const nonce = record.notice!.slice('wake:'.length);
      byNonce.set(nonce, [...(byNonce.get(nonce) ?? []), record]);
    }
    return byNonce;
  }

  /** Records what the model was told of these tasks' ends (one transaction). */
  setNotice(ids: readonly string[], notice: Exclude<TaskNotice, null>): void {
    if (ids.length === 0) return;
    const db = this.open();
    const update = db.prepare(`UPDATE tasks SET notice = ? WHERE id = ?`);
    db.transaction(() => ids.forEach((id) => update.run(notice, id)))();
  }

  get(id: string): TaskRecord | undefined {
    if (!this.exists()) return undefined;
    const row = this.open().prepare(`SELECT * FROM tasks WHERE id = ?`).get(id);
    return row === undefined ? undefined : recordOf(row, this.file);
  }

  /** The latest tasks, newest first (the UI's rows after a reload). */
  recent(limit: number): TaskRecord[] {
    if (!this.exists()) return [];
    return this.open()
      .prepare(`SELECT * FROM tasks ORDER BY started_at DESC LIMIT ?`)
      .all(limit)
      .map((row) => recordOf(row, this.file));
  }

  /** The task a tool call of turn `turn` started (the turn closer's question for an open `task` call). */
  byToolCall(turn: number, toolCallId: string): TaskRecord | undefined {
    if (!this.exists()) return undefined;
    const row = this.open()
      .prepare(`SELECT * FROM tasks WHERE turn = ? AND tool_call_id = ? ORDER BY started_at DESC LIMIT 1`)
      .get(turn, toolCallId);
    return row === undefined ? undefined : recordOf(row, this.file);
  }

  close(): void {
    this.db?.close();
    this.db = null;
  }

  private exists(): boolean {
    return this.db !== null || existsSync(this.file);
  }

  private open(): Database.Database {
    if (this.db) return this.db;
    // A cluster worker that never held the agent has no folder of it beside the sandbox yet.
    mkdirSync(path.dirname(this.file), { recursive: true, mode: 0o700 });
    const db = new Database(this.file, { timeout: 5000 });
    try {
      db.pragma('journal_mode = WAL');
      db.exec(DDL);
      const columns = db.prepare(`SELECT name FROM pragma_table_info('tasks')`).pluck().all();
      if (!columns.includes('notice')) db.exec(ADD_NOTICE);
      if (!columns.includes('closing')) db.exec(ADD_CLOSING);
    } catch (error) {
      db.close();
      throw error;
    }
    this.db = db;
    return db;
  }
}
