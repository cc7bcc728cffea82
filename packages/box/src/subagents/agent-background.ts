/**
 * An agent's background work as its session composes it: the task registry
 * (tasks/agent-tasks.ts) over the agent's task book, the launcher of its
 * children (run-child.ts), and what the session asks of them at its seams:
 *
 * - on open: tasks a crash cut are marked interrupted and their children's
 *   transcripts closed (`recover`); the next turn tells the model (`note`);
 * - per tool call: what `shell` (isBackground), `task` and `await` need (`toolContext`);
 * - per turn: the step budget a turn shares with its children (`turnBudget`);
 * - the turn closer: an interrupted `task` call names its child (`closerDetail`);
 * - lifecycle: Stop, deleteAgent and shutdown end everything (`stopAll`, `close`);
 * - the gateway: `listTasks`, `stopTask`, `openSubagent` (`views`, `stop`, `childSteps`).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { grokBot, type JsonObject } from '@sendbox/txcript';
import type { AttachmentStore } from '../attachments/store.ts';
import { agentPaths } from '../host/layout.ts';
import { stepBudget, type StepBudget } from '../host/turn.ts';
import type { SequencedEntry } from '../host/types.ts';
import type { WritePoints } from '../host/write-points.ts';
import type { ModelProvider } from '../providers/types.ts';
import { isNotFound } from '../sandbox/paths.ts';
import type { Scrubber } from '../secrets/scrub.ts';
import type { SecretStore } from '../secrets/store.ts';
import { AgentTasks, type TaskView } from '../tasks/agent-tasks.ts';
import { interruptedNote } from '../tasks/interrupted-note.ts';
import { backgroundLimits, type BackgroundSettings } from '../tasks/limits.ts';
import { TaskBook } from '../tasks/task-book.ts';
import type { HostTool, ToolContext } from '../tools/types.ts';
import { closeInterruptedChildren, interruptedTaskDetail } from './child-closer.ts';
import { childSteps } from './child-steps.ts';
import { runChild } from './run-child.ts';

/** What the background work of an agent tells the UI. */
export type BackgroundEvent =
  | { type: 'task'; agentId: string; task: TaskView }
  | { type: 'subagent-entry'; agentId: string; subagentId: string; entry: SequencedEntry };

export interface AgentBackgroundOptions {
  agentId: string;
  dataDir: string;
  name(): string;
  sandbox: string;
  provider(): ModelProvider | null;
  tools(): readonly HostTool[];
  toolEnv: Readonly<Record<string, string>>;
  attachments: AttachmentStore;
  secrets: SecretStore;
  scrubber(): Scrubber;
  allowDomains(): Promise<readonly string[]>;
  settings(): BackgroundSettings | undefined;
  now(): number;
  writePoints: WritePoints;
  emit(event: BackgroundEvent): void;
}

/** The file of an agent's task book: sendbox's, beside Grok Bot's store.db. */
export function taskBookFile(dataDir: string, agentId: string): string {
  return path.join(agentPaths(dataDir, agentId).agentDir, 'tasks.db');
}

export class AgentBackground {
  readonly tasks: AgentTasks;
  private readonly book: TaskBook;
  private unreported: string[] = [];

  constructor(private readonly options: AgentBackgroundOptions) {
    this.book = new TaskBook(taskBookFile(options.dataDir, options.agentId));
    this.tasks = new AgentTasks({
      book: this.book,
      limits: () => backgroundLimits(options.settings()),
      scrubber: () => options.scrubber(),
      now: () => options.now(),
      emit: (task) => options.emit({ type: 'task', agentId: options.agentId, task }),
    });
  }

  /** On open, before any turn: what a crash cut is marked interrupted and its children closed. */
  async recover(): Promise<void> {
    const interrupted = this.tasks.recoverInterrupted();
    await closeInterruptedChildren(
      this.options.dataDir,
      interrupted,
      this.options.scrubber(),
      this.options.writePoints,
    );
    this.unreported = this.book.unreported().map((task) => task.id);
  }

  /** The hidden prompt the next turn's user record carries about interrupted work (null: none). */
  note(): string | null {
    if (this.unreported.length === 0) return null;
    return interruptedNote(this.book.unreported().filter((task) => this.unreported.includes(task.id)));
  }

  /** The note went into a committed user record: it is not told again. */
  noted(): void {
    this.book.markReported(this.unreported);
    this.unreported = [];
  }

  /** The step budget of one turn, its children's steps included (null: the turn's own cap alone). */
  turnBudget(): StepBudget | undefined {
    const max = backgroundLimits(this.options.settings()).maxStepsPerTurn;
    return max === null ? undefined : stepBudget(max);
  }

  /** What a tool call needs to start and await background work. */
  toolContext(
    turn: number,
    toolCallId: string,
    budget?: StepBudget,
  ): Pick<ToolContext, 'tasks' | 'subagents' | 'call'> {
    const provider = this.options.provider();
    return {
      tasks: this.tasks,
      call: { turn, toolCallId },
      ...(provider
        ? { subagents: { start: (job) => runChild(this.childParent(provider, budget), job) } }
        : {}),
    };
  }

  closerDetail(turn: number): (name: string, input: JsonObject) => JsonObject | undefined {
    return interruptedTaskDetail(this.book, turn);
  }

  views(): TaskView[] {
    return this.tasks.views();
  }

  stop(taskId: string): boolean {
    return this.tasks.stop(taskId);
  }

  stopAll(): Promise<void> {
    return this.tasks.stopAll();
  }

  close(): Promise<void> {
    return this.tasks.close();
  }

  /** A child's steps from its transcript; undefined when this agent started no such child. */
  async childSteps(subagentId: string): Promise<SequencedEntry[] | undefined> {
    const task = this.book.get(subagentId);
    if (!task || task.kind !== 'subagent' || task.agentId !== subagentId) return undefined;
    const file = agentPaths(this.options.dataDir, subagentId).jsonl;
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if (isNotFound(error)) return [];
      throw error;
    }
    const records = grokBot.text
      .parse(text, file)
      .records.flatMap((line) => (line.kind === 'record' ? [line.json] : []));
    return childSteps(records, this.options.scrubber());
  }

  private childParent(provider: ModelProvider, budget: StepBudget | undefined) {
    const limits = backgroundLimits(this.options.settings());
    const o = this.options;
    return {
      dataDir: o.dataDir,
      name: o.name(),
      sandbox: o.sandbox,
      provider,
      tools: o.tools(),
      maxDepth: limits.maxDepth,
      depth: 0,
      toolEnv: o.toolEnv,
      attachments: o.attachments,
      secrets: o.secrets,
      scrubber: () => o.scrubber(),
      allowDomains: () => o.allowDomains(),
      now: () => o.now(),
      writePoints: o.writePoints,
      maxSteps: limits.subagentMaxSteps,
      ...(budget ? { budget } : {}),
      onEntry: (subagentId: string, entry: SequencedEntry) =>
        o.emit({ type: 'subagent-entry', agentId: o.agentId, subagentId, entry }),
    };
  }
}
