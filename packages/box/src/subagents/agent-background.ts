/**
 * An agent's background work, composed for its session through the session's extension seam
 * (agent/extension.ts): the task registry (tasks/agent-tasks.ts) over the agent's task book and
 * the launcher of its children (run-child.ts).
 *
 * - opened (and caughtUp, a cluster's kept session): tasks a crash or a dead worker cut are marked
 *   interrupted, their children's transcripts closed, and the model is told before its next turn
 *   (a hidden prompt in the JSONL, once);
 * - ready (idle between turns): background work that ended untold wakes it (tasks/task-wakes.ts);
 * - per tool call: what `shell` (isBackground), `task` and `await` need (`toolServices`);
 * - per turn: the step budget a turn shares with its children (`turnBudget`);
 * - the turn closer: an interrupted `task` call names its child (`interruptedDetail`);
 * - lifecycle (`AgentBackgrounds`): Stop, deleteAgent and shutdown end everything;
 * - the gateway: `listTasks`, `stopTask`, `openSubagent` (`views`, `stop`, `childSteps`).
 */
import path from 'node:path';
import type { JsonObject } from '@sendbox/txcript';
import type { AgentExtension, WakeDoor } from '../agent/extension.ts';
import type { CompactedAgent } from '../context/agent-compaction.ts';
import type { Compaction } from '../context/compaction.ts';
import type { ContextLayer, LayerAgent } from '../context/model-call.ts';
import type { ToolCallRef } from '../agent/tool-dispatch.ts';
import { stepBudget, type StepBudget } from '../agent/turn.ts';
import type { TurnContext } from '../agent/turn-driver.ts';
import type { ModelProvider } from '../providers/types.ts';
import type { AgentStores } from '../stores/agent-stores.ts';
import { fileChildTranscripts } from '../stores/files/agent-stores.ts';
import { agentPaths } from '../stores/files/layout.ts';
import type { SequencedEntry } from '../stores/ledger.ts';
import { readRecords, type TranscriptLog } from '../stores/transcript.ts';
import type { WritePoints } from '../stores/write-points.ts';
import { AgentTasks, type TaskView } from '../tasks/agent-tasks.ts';
import { interruptedNote } from '../tasks/interrupted-note.ts';
import { backgroundLimits } from '../tasks/limits.ts';
import { TaskBook, type TaskBookOpener, type TaskRecord, type TaskStore } from '../tasks/task-book.ts';
import type { SharedTaskOutput } from '../tasks/shared-output.ts';
import { TaskWakes } from '../tasks/task-wakes.ts';
import type { HostTool, ToolContext } from '../tools/types.ts';
import { closeInterruptedChildren, interruptedTaskDetail } from './child-closer.ts';
import { ChildCopies } from './child-copies.ts';
import { childSteps } from './child-steps.ts';
import { runChild, type ChildParent } from './run-child.ts';

/** What the background work of an agent tells the UI. */
export type BackgroundEvent =
  | { type: 'task'; agentId: string; task: TaskView }
  | { type: 'subagent-entry'; agentId: string; subagentId: string; entry: SequencedEntry };

/** What every agent's background work takes from the host. */
export interface BackgroundHost {
  dataDir: string;
  provider(): ModelProvider | null;
  /** The host's tools (a child gets them minus its exclusions). */
  tools(): readonly HostTool[];
  writePoints: WritePoints;
  emit(event: BackgroundEvent): void;
  /** The context layers of a child's model calls (run-child.ts `layers`); none when absent. */
  childLayers?(child: LayerAgent): readonly ContextLayer[];
  /** What fits a child's model calls into the model's window (run-child.ts `compaction`); none when absent. */
  childCompaction?(child: CompactedAgent): Compaction;
  /**
   * Where an agent's task records are kept (default: `tasks.db` in its folder; a cluster's: its rows,
   * behind the session's lease `fence`).
   */
  taskBook?: TaskBookOpener;
  /** Where commands' output is shared with other workers (a cluster's: tasks/shared-output.ts); default none. */
  taskOutput?(agentId: string): SharedTaskOutput;
  /** The box's log (a failure to share output is told there). */
  log?(line: string): void;
}

/**
 * What a session's background work takes from its stores: the lease fence its task records are
 * written behind, and its children's transcripts. Absent: no fence, and the JSONL files of the data dir.
 */
export type BackgroundStores = Partial<Pick<AgentStores, 'fence' | 'childTranscript'>>;

/** The file of an agent's task book: sendbox's, beside Grok Bot's store.db. */
export function taskBookFile(dataDir: string, agentId: string): string {
  return path.join(agentPaths(dataDir, agentId).agentDir, 'tasks.db');
}

export class AgentBackground implements AgentExtension {
  readonly tasks: AgentTasks;
  readonly wakes: TaskWakes;
  private readonly book: TaskStore;
  /** Opens a child's transcript (the session's stores'). */
  private readonly transcript: (childId: string) => Promise<TranscriptLog>;
  private budget: { turn: number; budget: StepBudget } | null = null;
  /** The closing of the children a read of the book found lost (in order; never rejects). */
  private closing: Promise<void> = Promise.resolve();
  private sessionClosed = false;

  constructor(
    private readonly host: BackgroundHost,
    /** The agent's session (read lazily: it is still being built when this is). */
    private readonly agent: TurnContext,
    stores: BackgroundStores = {},
    /** Told when the session closes (AgentBackgrounds lets this go once none of its tasks runs). */
    private readonly onClosed: (background: AgentBackground) => void = () => undefined,
  ) {
    this.book =
      host.taskBook?.(agent.id, stores.fence, (lost) => this.closeLost(lost)) ??
      new TaskBook(taskBookFile(host.dataDir, agent.id));
    this.transcript = stores.childTranscript ?? fileChildTranscripts(host.dataDir);
    this.tasks = new AgentTasks({
      book: this.book,
      limits: () => backgroundLimits(agent.profile.background),
      scrubber: () => agent.scrubber(),
      now: () => agent.now(),
      emit: (task) => host.emit({ type: 'task', agentId: agent.id, task }),
      untoldEnd: () => this.wakes.flush(),
      ...(host.taskOutput ? { sharedOutput: host.taskOutput(agent.id) } : {}),
      log: (line) => host.log?.(line),
    });
    this.wakes = new TaskWakes(
      this.book,
      (text) => agent.scrubber().text(text),
      (record) => this.tasks.tailText(record, agent.paths.sandbox),
    );
  }

  ready(door: WakeDoor): void {
    this.wakes.ready(door);
  }

  closed(): void {
    this.sessionClosed = true;
    this.onClosed(this);
  }

  /** Still needed: its session is open, or a task it started runs (a stop must reach it). */
  get live(): boolean {
    return !this.sessionClosed || this.tasks.running().length > 0;
  }

  /** What a crash cut is marked interrupted, its children closed, and the model told once. */
  async opened(): Promise<string | null> {
    await this.closeChildren(this.tasks.recoverInterrupted());
    const unreported = this.book.unreported();
    // Marked first: a note whose write then fails is lost, never told twice. One that ended since
    // it was read (its worker was only paused) is not marked, and its end is told instead.
    const marked = new Set(this.book.markReported(unreported.map((task) => task.id)));
    return interruptedNote(unreported.filter((task) => marked.has(task.id)));
  }

  /**
   * Tasks a read of the book (the task list, an `await`, `openSubagent`) marked lost: this reader
   * alone marked them, so it closes their children's transcripts, after what it closes already.
   */
  private closeLost(lost: TaskRecord[]): void {
    this.closing = this.closing.then(() =>
      this.closeChildren(lost).catch(() => {
        // Left open (the database unreachable): the child's steps read as they were written.
      }),
    );
  }

  private closeChildren(interrupted: readonly TaskRecord[]): Promise<void> {
    return closeInterruptedChildren(
      this.transcript,
      interrupted,
      this.agent.scrubber(),
      this.host.writePoints,
      (task) => this.book.childrenClosed([task.id]),
    );
  }

  /**
   * A kept session caught up (a cluster's turn worker): what was lost with a worker that died since,
   * told once, as on open.
   */
  caughtUp(): Promise<string | null> {
    return this.opened();
  }

  turnBudget(turn: number): StepBudget | undefined {
    const max = backgroundLimits(this.agent.profile.background).maxStepsPerTurn;
    this.budget = max === null ? null : { turn, budget: stepBudget(max) };
    return this.budget?.budget;
  }

  toolServices(call: ToolCallRef): Partial<ToolContext> {
    const budget = this.budget?.turn === call.turn ? this.budget.budget : undefined;
    return this.servicesAt(0, call, budget);
  }

  interruptedDetail(turn: number, name: string, input: JsonObject): JsonObject | undefined {
    return interruptedTaskDetail(this.book, turn)(name, input);
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

  /** Every subagent this agent started. */
  childIds(): string[] {
    return this.book
      .recent(Number.MAX_SAFE_INTEGER)
      .flatMap((task) => (task.kind === 'subagent' && task.agentId ? [task.agentId] : []));
  }

  /** The subagents a copy of this agent takes along, each with its id in the copy (child-copies.ts). */
  childCopies(): ChildCopies {
    return ChildCopies.of(this.book.recent(Number.MAX_SAFE_INTEGER));
  }

  /** Writes `copies` of this agent's children into `copy`'s task book and transcripts (duplicateAgent). */
  copyChildrenInto(copy: AgentBackground, copies: ChildCopies): Promise<void> {
    return copies.copy(
      { book: this.book, transcript: this.transcript },
      { book: copy.book, transcript: copy.transcript },
    );
  }

  /**
   * A child's steps from its transcript, read through the agent's stores (a cluster's rows, wherever
   * the child ran); undefined when this agent started no such child (its task book says).
   */
  async childSteps(subagentId: string): Promise<SequencedEntry[] | undefined> {
    const task = this.book.get(subagentId);
    if (!task || task.kind !== 'subagent' || task.agentId !== subagentId) return undefined;
    // A child this read found lost is closed first, so its steps show its calls' ends.
    await this.closing;
    const log = await this.transcript(subagentId);
    try {
      return childSteps(await readRecords(log), this.agent.scrubber());
    } finally {
      log.close();
    }
  }

  /**
   * What a call at `depth` (0: the agent's own turn) gets: the agent's task registry, and a
   * launcher of children while the profile's depth allows one more level.
   */
  private servicesAt(
    depth: number,
    call: ToolContext['call'] & ToolCallRef,
    budget: StepBudget | undefined,
  ): Partial<ToolContext> {
    const provider = this.host.provider();
    const limits = backgroundLimits(this.agent.profile.background);
    return {
      tasks: this.tasks,
      call,
      ...(provider && depth < limits.maxDepth
        ? { subagents: { start: (job) => runChild(this.childParent(provider, depth, budget), job) } }
        : {}),
    };
  }

  private childParent(provider: ModelProvider, depth: number, budget: StepBudget | undefined): ChildParent {
    const limits = backgroundLimits(this.agent.profile.background);
    const agent = this.agent;
    return {
      agent,
      dataDir: this.host.dataDir,
      transcript: this.transcript,
      provider,
      tools: this.host.tools(),
      maxDepth: limits.maxDepth,
      depth,
      writePoints: this.host.writePoints,
      maxSteps: limits.subagentMaxSteps,
      ...(this.host.childLayers ? { layers: (child: LayerAgent) => this.host.childLayers!(child) } : {}),
      ...(this.host.childCompaction
        ? { compaction: (child: CompactedAgent) => this.host.childCompaction!(child) }
        : {}),
      ...(budget ? { budget } : {}),
      // A child's own calls: its ids are its own, so the book keys them under the child; what they
      // start is fenced on the child's run as well as on the lease (it outlives the parent's turn).
      toolServices: (childId, call) =>
        this.servicesAt(
          depth + 1,
          { turn: call.turn, toolCallId: `${childId}/${call.toolCallId}`, subagentId: childId },
          budget,
        ),
      onEntry: (subagentId, entry) =>
        this.host.emit({ type: 'subagent-entry', agentId: agent.id, subagentId, entry }),
    };
  }
}

/**
 * Every agent's background work, for the host: made per session, ended by the lifecycle. An agent
 * may have several sessions in one process (a cluster worker: its gateway's and the turn worker's,
 * kept between jobs), each with its own live tasks; the latest one answers for the agent, and a stop
 * finds the one that runs the task. A session's background goes only once its session closed and
 * none of its tasks runs: an open session may start a task at any time.
 */
export class AgentBackgrounds {
  private readonly byAgent = new Map<string, AgentBackground[]>();

  constructor(private readonly host: BackgroundHost) {}

  /** The session's extension (the host's `extensions` seam). */
  for(agent: TurnContext, stores?: BackgroundStores): AgentBackground {
    const background = new AgentBackground(this.host, agent, stores, () => this.prune(agent.id));
    this.byAgent.set(agent.id, [...this.live(agent.id), background]);
    return background;
  }

  private live(agentId: string): AgentBackground[] {
    return (this.byAgent.get(agentId) ?? []).filter((background) => background.live);
  }

  private prune(agentId: string): void {
    const live = this.live(agentId);
    if (live.length > 0) this.byAgent.set(agentId, live);
    else this.byAgent.delete(agentId);
  }

  /** The agent's latest session's. */
  of(agentId: string): AgentBackground | undefined {
    return this.byAgent.get(agentId)?.at(-1);
  }

  /** The subagents the agent ever started, as its task book has them (their transcripts go with it). */
  childIds(agentId: string): string[] {
    return this.of(agentId)?.childIds() ?? [];
  }

  /** Stops a task: in the session that runs it here, else as the latest session's book says. */
  stop(agentId: string, taskId: string): boolean {
    const all = this.byAgent.get(agentId) ?? [];
    const running = all.find((background) => background.tasks.ended(taskId) !== undefined);
    return (running ?? all.at(-1))?.stop(taskId) ?? false;
  }

  /**
   * Stops a task this process runs (a stop asked through another gateway), opening nothing; false
   * when no session here runs it.
   */
  stopHere(agentId: string, taskId: string): boolean {
    const all = this.byAgent.get(agentId) ?? [];
    return all.find((background) => background.tasks.ended(taskId) !== undefined)?.stop(taskId) ?? false;
  }

  /** The user pressed Stop: every task of the agent ends (commands' trees killed, children cancelled). */
  async turnCancelled(agentId: string): Promise<void> {
    await Promise.all((this.byAgent.get(agentId) ?? []).map((background) => background.stopAll()));
  }

  async agentDeleted(agentId: string): Promise<void> {
    const all = this.byAgent.get(agentId) ?? [];
    this.byAgent.delete(agentId);
    await Promise.all(all.map((background) => background.close()));
  }

  async hostClosed(): Promise<void> {
    const all = [...this.byAgent.values()].flat();
    this.byAgent.clear();
    await Promise.allSettled(all.map((background) => background.close()));
  }
}
