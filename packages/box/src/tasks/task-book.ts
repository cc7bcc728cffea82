/**
 * The durable record of an agent's background work (`agents/<id>/tasks.db`,
 * sendbox's own file: Grok Bot's store.db is left as Grok Bot has it). A task
 * is written `running` before it starts and `ended` when it ends, so after a
 * crash the tasks still `running` are the ones the crash cut: the next open
 * marks them `interrupted`, the next turn tells the model, and the turn closer
 * finds the child agent an interrupted `task` call had started.
 *
 * Opened on first use: an agent that never started a task has no file.
 */
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import { z } from 'zod';

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
  reported INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX IF NOT EXISTS idx_tasks_open ON tasks(state) WHERE state != 'ended';
`;

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
}

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
});

function recordOf(raw: unknown, file: string): TaskRecord {
  const parsed = rowSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(
      `${file}: a row of tasks is not in sendbox's shape (${issue?.path.join('.') ?? ''}: ${issue?.message ?? ''}); ` +
        'move the file aside to start the agent without its task history',
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
  };
}

export class TaskBook {
  private db: Database.Database | null = null;

  constructor(readonly file: string) {}

  /** Records a task as running (before it starts: a crash after this reports it interrupted). */
  started(task: Omit<TaskRecord, 'state' | 'endedAt' | 'outcome' | 'reported'>): void {
    this.open()
      .prepare(
        `INSERT INTO tasks (id, kind, turn, tool_call_id, label, output_path, agent_id, state, started_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?)`,
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
      );
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
    const rows = db.prepare(`SELECT * FROM tasks WHERE state = 'running'`).all();
    db.prepare(`UPDATE tasks SET state = 'interrupted', ended_at = ? WHERE state = 'running'`).run(now);
    return rows.map((row) => ({ ...recordOf(row, this.file), state: 'interrupted' as const, endedAt: now }));
  }

  /** Interrupted tasks the model has not been told about yet. */
  unreported(): TaskRecord[] {
    if (!this.exists()) return [];
    return this.open()
      .prepare(`SELECT * FROM tasks WHERE state = 'interrupted' AND reported = 0 ORDER BY started_at`)
      .all()
      .map((row) => recordOf(row, this.file));
  }

  markReported(ids: readonly string[]): void {
    if (ids.length === 0) return;
    const update = this.open().prepare(`UPDATE tasks SET reported = 1 WHERE id = ?`);
    this.open().transaction(() => ids.forEach((id) => update.run(id)))();
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
    const db = new Database(this.file, { timeout: 5000 });
    try {
      db.pragma('journal_mode = WAL');
      db.exec(DDL);
    } catch (error) {
      db.close();
      throw error;
    }
    this.db = db;
    return db;
  }
}
