/**
 * An agent's background work, live: the commands `shell {isBackground: true}`
 * started and the children `task` started, each under a task id the model
 * awaits. It enforces the limits (concurrent commands, concurrent children,
 * a wall-clock limit per command), answers `await`, and ends everything on
 * Stop, deleteAgent and shutdown (`stopAll`). Every task is in the TaskBook
 * before it starts and marked when it ends, so a crash leaves a record of
 * what it cut (task-book.ts).
 */
import { randomBytes } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import type { LaunchSpec } from '../sandbox/confinement.ts';
import type { Scrubber } from '../secrets/scrub.ts';
import type { JsonValue } from '@sendbox/txcript';
import { startBackgroundCommand, type BackgroundCommand, type CommandEnd } from './background-command.ts';
import type { TaskKind, TaskRecord, TaskStore } from './task-book.ts';
import { readOutputTail, TaskOutput } from './task-output.ts';
import { shareOutput, type SharedTaskOutput } from './shared-output.ts';
import {
  AWAIT_OUTPUT_CAP_BYTES,
  matchesScrubbed,
  OutputElsewhere,
  PATTERN_OVERLAP_CHARS,
  SCRUB_MARGIN,
  shownText,
} from './output-elsewhere.ts';

export interface TaskLimits {
  /** Background commands running at once (default 4). */
  maxCommands: number;
  /** Wall-clock limit of a background command, ms (default 1 h). */
  maxRuntimeMs: number;
  /** Children running at once (default 2). */
  maxChildren: number;
}

export const DEFAULT_TASK_LIMITS: TaskLimits = {
  maxCommands: 4,
  maxRuntimeMs: 60 * 60_000,
  maxChildren: 2,
};

export { AWAIT_OUTPUT_CAP_BYTES } from './output-elsewhere.ts';
/** Output a live tail carries (the UI's tool row). */
export const TAIL_BYTES = 2048;
/** How often a running command's tail is sent to the UI at most. */
const TAIL_EVERY_MS = 250;
/** Ended tasks whose output files stay open for `await` (the oldest are closed past this). */
const MAX_ENDED_KEPT = 16;
/** How often `await` reads the record of a task that runs on another cluster worker. */
const REMOTE_POLL_MS = 500;

/** What the UI and the gateway see of a task. */
export interface TaskView {
  id: string;
  kind: TaskKind;
  label: string;
  state: 'running' | 'ended' | 'interrupted';
  startedAt: number;
  endedAt?: number;
  /** The tool call that started it (the UI's tool row). */
  toolCallId: string;
  outputPath?: string;
  outputLength?: number;
  exitCode?: number | null;
  /** How it ended (commands): `exited`, `stopped`, `timed-out`, `spawn-error`. */
  reason?: string;
  agentId?: string;
  /** The last TAIL_BYTES of output, scrubbed (commands). */
  tail?: string;
  /** Model steps a subagent took so far. */
  steps?: number;
}

/** A child's result as its parent reads it (subagents/child-report.ts builds it). */
export interface ChildOutcome {
  envelope: 'success' | 'failure';
  payload: { [key: string]: JsonValue };
}

export interface ChildRun {
  /** Settles with the child's result once it ended (its turn closed); never rejects. */
  ended: Promise<ChildOutcome>;
  /** Cancels the child's turn. */
  stop(): void;
}

/** Starts child agents for the `task` tool (the session composes one; subagents/). */
export interface SubagentLauncher {
  /** Starts the child's one turn; `onStep` is told after each of its model steps. */
  start(input: {
    agentId: string;
    description: string;
    prompt: string;
    isBackground: boolean;
    onStep(): void;
  }): ChildRun;
}

export type AwaitResult =
  | { kind: 'unknown'; message: string }
  | { kind: 'refused'; message: string }
  | { kind: 'running'; payload: { [key: string]: JsonValue } }
  | { kind: 'complete'; payload: { [key: string]: JsonValue } };

interface LiveTask {
  record: TaskRecord;
  stop(why?: 'stopped' | 'timed-out'): void;
  /** Settles when the task ended and its end is recorded. */
  done: Promise<void>;
  end: { [key: string]: JsonValue } | null;
  /** Commands: the output file and the offset the model has read up to. */
  output?: TaskOutput;
  seen: number;
  /** Children: what the child did so far (the UI's live row; `await` reports its count). */
  steps: number;
  /** Commands: the last bytes of output, raw (scrubbed when shown). */
  tail: Buffer;
  /** Children: the result, once ended. */
  outcome?: ChildOutcome;
  /** Stopped by Stop, the stop button or deleteAgent: its end needs no wake. */
  stopped: boolean;
}

export interface AgentTasksOptions {
  book: TaskStore;
  limits(): TaskLimits;
  scrubber(): Scrubber;
  now(): number;
  /** A task started, changed (a tail) or ended. */
  emit(view: TaskView): void;
  /** Bytes of a command's output kept in its file (default TASK_OUTPUT_CAP_BYTES). */
  outputCapBytes?: number;
  /**
   * A background task ended on its own (not stopped) and the model was not told yet: its end is
   * in the book, `notice` null (task-wakes.ts wakes the agent for it when it is free).
   */
  untoldEnd?(record: TaskRecord): void;
  /** A cluster's: commands' output shared with the other workers, whose `await` reads it (shared-output.ts). */
  sharedOutput?: SharedTaskOutput;
  /** Where a failure to share output is told (the box's log). */
  log?(line: string): void;
}

export class AgentTasks {
  private readonly live = new Map<string, LiveTask>();
  /** Output of commands on other cluster workers (a cluster's). */
  private readonly elsewhere: OutputElsewhere | undefined;
  private closed = false;

  constructor(private readonly options: AgentTasksOptions) {
    if (options.sharedOutput)
      this.elsewhere = new OutputElsewhere(options.sharedOutput, () => options.scrubber());
  }

  /** Tasks a crash cut, marked interrupted (call once, when the agent is opened). */
  recoverInterrupted(): TaskRecord[] {
    return this.options.book.interruptLeftovers(this.options.now());
  }

  running(kind?: TaskKind): TaskRecord[] {
    return [...this.live.values()]
      .filter((task) => task.end === null && (kind === undefined || task.record.kind === kind))
      .map((task) => task.record);
  }

  /** The latest tasks as the UI shows them: this process's live ones, then recorded ones. */
  views(limit = 50): TaskView[] {
    const live = [...this.live.values()].map((task) => this.viewOf(task));
    const known = new Set(live.map((view) => view.id));
    let recorded: TaskRecord[] = [];
    try {
      recorded = this.options.book.recent(limit);
    } catch {
      recorded = [];
    }
    return [...live, ...recorded.filter((record) => !known.has(record.id)).map(recordView)];
  }

  /**
   * Starts a confined command in the background. `spec` is the shell tool's launch (confinement,
   * proxy, cwd); `label` the scrubbed command. Refused (a model-readable reason) over the limit.
   */
  async startCommand(input: {
    turn: number;
    toolCallId: string;
    /** The subagent whose call starts it (absent: the agent's own turn): TaskStore.started. */
    startedBy?: string;
    label: string;
    sandboxDir: string;
    spec: LaunchSpec & { cwd: string };
  }): Promise<TaskRecord | { refused: string }> {
    const limits = this.options.limits();
    const refused = this.refusal('command', limits.maxCommands);
    if (refused) return { refused };
    const id = `task-${randomBytes(6).toString('hex')}`;
    const output = await TaskOutput.create(input.sandboxDir, id, this.options.outputCapBytes);
    const record = this.recordStart(
      {
        id,
        kind: 'command',
        turn: input.turn,
        toolCallId: input.toolCallId,
        label: input.label,
        outputPath: output.path,
        agentId: null,
        notice: null,
      },
      'The background command',
      input.startedBy,
    );
    if ('refused' in record) {
      await output.close();
      return record;
    }
    const command: BackgroundCommand = startBackgroundCommand(input.spec, output, {
      maxRuntimeMs: limits.maxRuntimeMs,
      now: () => this.options.now(),
    });
    const task: LiveTask = {
      record,
      stop: (why) => command.stop(why),
      done: Promise.resolve(),
      end: null,
      output,
      seen: 0,
      steps: 0,
      tail: Buffer.alloc(0),
      stopped: false,
    };
    output.onChunk((chunk) => {
      const joined = Buffer.concat([task.tail, chunk]);
      task.tail = joined.subarray(Math.max(0, joined.length - TAIL_BYTES - SCRUB_MARGIN));
    });
    this.live.set(id, task);
    const stopTail = this.streamTail(task, output);
    const { sharedOutput } = this.options;
    const sharing =
      sharedOutput &&
      shareOutput(output, id, sharedOutput, (error) =>
        this.options.log?.(
          `task ${id}: its output could not be shared with the other workers: ${error.message}`,
        ),
      );
    task.done = command.ended.then(async (end) => {
      stopTail();
      // Every byte is shared before the end is recorded: a reader elsewhere that sees the end has them.
      await sharing?.flush();
      task.end = { ...commandEnd(end, limits.maxRuntimeMs), outputLength: output.length };
      record.state = 'ended';
      record.endedAt = end.endedAt;
      this.record(record, task.end);
      this.options.emit(this.viewOf(task));
      this.afterEnd(task);
    });
    this.options.emit(this.viewOf(task));
    return record;
  }

  /**
   * Registers a child agent's run as a task (`task` tool). `start` is called once the task is
   * recorded; a refusal over the children's limit is returned before anything starts.
   */
  startChild(input: {
    turn: number;
    toolCallId: string;
    /** The subagent whose call starts it (absent: the agent's own turn): TaskStore.started. */
    startedBy?: string;
    agentId: string;
    label: string;
    /** A background child's end wakes its idle parent; a foreground one's is the tool's result. */
    background: boolean;
    start(onStep: () => void): ChildRun;
  }): TaskRecord | { refused: string } {
    const refused = this.refusal('subagent', this.options.limits().maxChildren);
    if (refused) return { refused };
    const record = this.recordStart(
      {
        id: input.agentId,
        kind: 'subagent',
        turn: input.turn,
        toolCallId: input.toolCallId,
        label: input.label,
        outputPath: null,
        agentId: input.agentId,
        notice: input.background ? null : 'told',
      },
      'The subagent',
      input.startedBy,
    );
    if ('refused' in record) return record;
    const task: LiveTask = {
      record,
      stop: () => undefined,
      done: Promise.resolve(),
      end: null,
      seen: 0,
      steps: 0,
      tail: Buffer.alloc(0),
      stopped: false,
    };
    this.live.set(record.id, task);
    let run: ChildRun;
    try {
      run = input.start(() => {
        task.steps += 1;
        this.options.emit(this.viewOf(task));
      });
    } catch (error) {
      const message = `The subagent could not start: ${(error as Error).message}`;
      run = {
        ended: Promise.resolve({ envelope: 'failure', payload: { agentId: record.id, error: message } }),
        stop: () => undefined,
      };
    }
    task.stop = () => run.stop();
    task.done = run.ended.then((outcome) => {
      task.outcome = outcome;
      task.end = outcome.payload;
      record.state = 'ended';
      record.endedAt = this.options.now();
      this.record(record, outcome.payload);
      this.options.emit(this.viewOf(task));
      this.afterEnd(task);
    });
    this.options.emit(this.viewOf(task));
    return record;
  }

  /** Settles when the task ended (undefined for a task this process does not run). */
  ended(id: string): Promise<void> | undefined {
    return this.live.get(id)?.done;
  }

  /** A child's result once it ended (undefined for a task this process does not run). */
  async childOutcome(id: string): Promise<ChildOutcome | undefined> {
    const task = this.live.get(id);
    if (!task) return undefined;
    await task.done;
    return task.outcome;
  }

  /**
   * `await`: waits until the task ends, `blockUntilMs` passes, `pattern` matches output the model
   * has not seen, or `signal` aborts (Stop). Output shown is what the model has not seen yet.
   */
  async wait(
    id: string,
    options: { blockUntilMs: number; pattern?: RegExp; signal?: AbortSignal },
  ): Promise<AwaitResult> {
    const task = this.live.get(id);
    if (!task) {
      const { record, matched } = await this.untilRecordEnds(id, options);
      if (record?.kind !== 'command' || !this.elsewhere) return this.fromBook(id, record);
      return this.fromBook(id, record, {
        ...(await this.elsewhere.unseen(record)),
        ...(options.pattern ? { regexRequested: true, regexMatched: matched } : {}),
      });
    }
    if (options.pattern && task.record.kind !== 'command') {
      return {
        kind: 'refused',
        message: `regex applies to a background command's output; ${id} is a subagent. Call await without regex.`,
      };
    }
    // An await of it on another worker may have shown some of its output since.
    if (task.output && this.elsewhere) task.seen = Math.max(task.seen, await this.elsewhere.seen(id));
    const matched = await this.until(task, options);
    if (task.end !== null) {
      this.told(task.record);
      return { kind: 'complete', payload: await this.completePayload(task) };
    }
    return {
      kind: 'running',
      payload: await this.runningPayload(task, options.pattern !== undefined, matched),
    };
  }

  /**
   * Stops one task (the UI's stop button); false when it is not running. One that runs on another
   * cluster worker is asked to stop there (the book's `requestStop`).
   */
  stop(id: string): boolean {
    const task = this.live.get(id);
    if (!task) return this.options.book.requestStop?.(id) ?? false;
    if (task.end !== null) return false;
    task.stopped = true;
    task.stop('stopped');
    return true;
  }

  /** Stops every running task (Stop, deleteAgent, shutdown) and waits until they ended. */
  async stopAll(): Promise<void> {
    const running = [...this.live.values()].filter((task) => task.end === null);
    for (const task of running) {
      // Stop and deleteAgent: nobody waits to hear of it. The box closing: the next start tells the model.
      task.stopped = !this.closed;
      task.stop('stopped');
    }
    await Promise.all(running.map((task) => task.done.catch(() => undefined)));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.stopAll();
    for (const task of [...this.live.values()]) this.forget(task);
    this.options.book.close();
  }

  /**
   * A command's last output as the model may read it (scrubbed): from memory while the task is kept
   * live, else as its worker shared it (a cluster's), else from its file in `sandboxDir` (a task of
   * an earlier run); undefined for a child.
   */
  async tailText(record: TaskRecord, sandboxDir: string): Promise<string | undefined> {
    const task = this.live.get(record.id);
    if (task?.output) return this.tailOf(task);
    if (record.kind !== 'command' || !record.outputPath) return undefined;
    // A task another cluster worker ran: its shared output is whole; this sandbox's file may lag.
    const shared = await this.elsewhere?.rawTail(record.id, TAIL_BYTES + SCRUB_MARGIN);
    const raw = shared?.length
      ? shared
      : await readOutputTail(sandboxDir, record.outputPath, TAIL_BYTES + SCRUB_MARGIN);
    const text = this.options.scrubber().text(raw.toString('utf8'));
    return text.length > TAIL_BYTES ? text.slice(-TAIL_BYTES) : text;
  }

  /** Its end is noted (stopped, or awaited: no wake needed) or handed on to wake the agent. */
  private afterEnd(task: LiveTask): void {
    const { record } = task;
    if (record.notice === null && task.stopped) this.told(record);
    else if (record.notice === null && !this.closed) this.options.untoldEnd?.(record);
    this.forgetOldEnded();
  }

  /** The model saw how the task ended (an `await`, or nobody needs to hear of it). */
  private told(record: TaskRecord): void {
    if (record.notice === 'told') return;
    record.notice = 'told';
    try {
      this.options.book.setNotice([record.id], 'told');
    } catch {
      // Not saved: the agent may be woken for it once more, which says no more than the await did.
    }
  }

  /** Writes the task to the book as running, before it starts (a crash after this reports it interrupted). */
  private recordStart(
    fields: Pick<
      TaskRecord,
      'id' | 'kind' | 'turn' | 'toolCallId' | 'label' | 'outputPath' | 'agentId' | 'notice'
    >,
    what: string,
    startedBy: string | undefined,
  ): TaskRecord | { refused: string } {
    const record: TaskRecord = {
      ...fields,
      state: 'running',
      startedAt: this.options.now(),
      endedAt: null,
      outcome: null,
      reported: false,
    };
    try {
      this.options.book.started(startedBy === undefined ? record : { ...record, startedBy });
      return record;
    } catch (error) {
      return {
        refused: `${what} was not started: its record could not be saved (${(error as Error).message}).`,
      };
    }
  }

  private refusal(kind: TaskKind, max: number): string | null {
    if (this.closed) return 'The agent is shutting down: no new background work starts.';
    const running = this.running(kind);
    if (running.length < max) return null;
    const list = running.map((task) => `${task.id} (${task.label})`).join(', ');
    return kind === 'command'
      ? `At most ${max} background commands run at once and ${running.length} are running: ${list}. ` +
          'Await one until it ends, or run this command in the foreground.'
      : `At most ${max} subagents run at once and ${running.length} are running: ${list}. ` +
          'Await one until it ends, or do this work yourself.';
  }

  private record(record: TaskRecord, outcome: unknown): void {
    try {
      this.options.book.ended(record.id, record.endedAt ?? this.options.now(), outcome);
    } catch {
      // The end is kept in memory; after a restart the task is reported interrupted instead.
    }
  }

  /** Resolves true when the pattern matched, false on end, deadline or abort. */
  private until(
    task: LiveTask,
    options: { blockUntilMs: number; pattern?: RegExp; signal?: AbortSignal },
  ): Promise<boolean> {
    const { pattern, signal } = options;
    if (task.end !== null) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const cleanups: Array<() => void> = [];
      let settled = false;
      const finish = (matched: boolean) => {
        if (settled) return;
        settled = true;
        for (const cleanup of cleanups) cleanup();
        resolve(matched);
      };
      // Listening starts before the output already there is read, so no chunk falls between the two.
      if (pattern && task.output) {
        const decoder = new StringDecoder('utf8');
        let carry = '';
        cleanups.push(
          task.output.onChunk((chunk) => {
            const window = carry + decoder.write(chunk);
            carry = window.slice(-PATTERN_OVERLAP_CHARS);
            if (matchesScrubbed(pattern, window, this.options.scrubber())) finish(true);
          }),
        );
        const output = task.output;
        void output.read(task.seen, output.kept).then((bytes) => {
          if (bytes.length > 0 && matchesScrubbed(pattern, bytes.toString('utf8'), this.options.scrubber()))
            finish(true);
          else if (options.blockUntilMs <= 0) finish(false);
        });
      } else if (options.blockUntilMs <= 0) {
        finish(false);
      }
      if (signal?.aborted) finish(false);
      if (settled) return;
      const timer = setTimeout(() => finish(false), Math.max(0, options.blockUntilMs));
      cleanups.push(() => clearTimeout(timer));
      void task.done.then(() => finish(false));
      if (signal) {
        const onAbort = () => finish(false);
        signal.addEventListener('abort', onAbort, { once: true });
        cleanups.push(() => signal.removeEventListener('abort', onAbort));
      }
    });
  }

  private async runningPayload(
    task: LiveTask,
    regexRequested: boolean,
    matched: boolean,
  ): Promise<{ [key: string]: JsonValue }> {
    const runtimeMs = this.options.now() - task.record.startedAt;
    if (task.record.kind === 'subagent') {
      return { taskId: task.record.id, agentId: task.record.id, runtimeMs, steps: task.steps };
    }
    return {
      taskId: task.record.id,
      runtimeMs,
      outputFilePath: task.record.outputPath ?? '',
      outputLength: task.output!.length,
      ...(regexRequested ? { regexRequested: true, regexMatched: matched } : {}),
      output: await this.unseenOutput(task),
    };
  }

  private async completePayload(task: LiveTask): Promise<{ [key: string]: JsonValue }> {
    const end = task.end ?? {};
    if (task.record.kind === 'subagent') return { taskId: task.record.id, ...end };
    const payload = {
      taskId: task.record.id,
      runtimeMs: (task.record.endedAt ?? this.options.now()) - task.record.startedAt,
      outputFilePath: task.record.outputPath ?? '',
      outputLength: task.output!.length,
      ...end,
      output: await this.unseenOutput(task),
    };
    // Everything was shown: later awaits answer from the record, without the file.
    this.forget(task);
    return payload;
  }

  /** Ended tasks kept live (their files open for await); older ones answer from the book. */
  private forgetOldEnded(): void {
    const ended = [...this.live.values()].filter((task) => task.end !== null);
    for (const task of ended.slice(0, Math.max(0, ended.length - MAX_ENDED_KEPT))) this.forget(task);
  }

  private forget(task: LiveTask): void {
    this.live.delete(task.record.id);
    void task.output?.close();
  }

  /** The output since the model last looked, scrubbed; past the cap, its end with a note. */
  private async unseenOutput(task: LiveTask): Promise<string> {
    const output = task.output!;
    const to = output.kept;
    const from = task.seen;
    task.seen = Math.max(task.seen, to);
    if (to <= from) return '';
    // Marked where every worker reads it: the agent's next turn may await it from another.
    await this.elsewhere?.markSeen(task.record.id, to);
    const cut = to - from > AWAIT_OUTPUT_CAP_BYTES;
    const start = cut ? to - AWAIT_OUTPUT_CAP_BYTES - SCRUB_MARGIN : from;
    const text = shownText(await output.read(start, to), cut, this.options.scrubber());
    if (!cut) return text;
    return `[${to - from - AWAIT_OUTPUT_CAP_BYTES} earlier bytes not shown: read ${task.record.outputPath} for them]\n${text}`;
  }

  /**
   * A task this process does not run, as its record holds it: one that still runs on another cluster
   * worker is read again every REMOTE_POLL_MS until it ended or the wait is over.
   */
  private async untilRecordEnds(
    id: string,
    options: { blockUntilMs: number; pattern?: RegExp; signal?: AbortSignal },
  ): Promise<{ record: TaskRecord | undefined; matched: boolean }> {
    const read = () => {
      try {
        return this.options.book.get(id);
      } catch {
        return undefined;
      }
    };
    const deadline = Date.now() + options.blockUntilMs;
    const scan = options.pattern && this.elsewhere?.scanner(id, options.pattern);
    let record = read();
    while (record?.state === 'running' && Date.now() < deadline && !options.signal?.aborted) {
      if (scan && (await scan())) return { record, matched: true };
      await new Promise((resolve) => setTimeout(resolve, Math.min(REMOTE_POLL_MS, deadline - Date.now())));
      record = read();
    }
    return { record, matched: false };
  }

  /** A task this process does not run: one a crash interrupted, one on another cluster worker, or none. */
  private fromBook(
    id: string,
    record: TaskRecord | undefined,
    /** A command's output its worker shared (a cluster), and whether a regex matched it. */
    shared?: { output: string; outputLength: number; regexRequested?: boolean; regexMatched?: boolean },
  ): AwaitResult {
    if (record?.state === 'running') {
      // Only a cluster's record is running without this process running it (its worker is alive).
      const where = `This task runs on cluster worker ${record.worker ?? '(unknown)'}, not on the worker running this turn`;
      return {
        kind: 'running',
        payload: {
          taskId: id,
          runtimeMs: this.options.now() - record.startedAt,
          ...(record.agentId ? { agentId: record.agentId } : {}),
          ...(record.outputPath ? { outputFilePath: record.outputPath } : {}),
          ...shared,
          note: shared
            ? `${where}: its output here is what that worker shared, and its file is there. await it again for more, or for its end.`
            : `${where}, so its live output cannot be shown here. Your files here hold what it wrote up to that worker’s last ` +
              'snapshot of your sandbox. await it again to hear when it ends (its exit code); start it again here ' +
              'if you need to watch its output.',
        },
      };
    }
    if (!record) {
      const known = this.running().map((task) => task.id);
      return {
        kind: 'unknown',
        message:
          `There is no task ${id}. ` +
          (known.length ? `Running tasks: ${known.join(', ')}.` : 'No task of yours is running.'),
      };
    }
    const runtimeMs = (record.endedAt ?? record.startedAt) - record.startedAt;
    if (record.state === 'ended') {
      this.told(record);
      const outcome = typeof record.outcome === 'object' && record.outcome !== null ? record.outcome : {};
      return {
        kind: 'complete',
        payload: {
          taskId: id,
          runtimeMs,
          ...(record.outputPath ? { outputFilePath: record.outputPath } : {}),
          ...(outcome as { [key: string]: JsonValue }),
          ...(record.kind === 'command' ? { output: shared?.output ?? '' } : {}),
        },
      };
    }
    return {
      kind: 'complete',
      payload: {
        taskId: id,
        runtimeMs,
        ...(record.outputPath ? { outputFilePath: record.outputPath } : {}),
        ...(record.agentId ? { agentId: record.agentId } : {}),
        exitCode: null,
        interrupted: true,
        ...(shared ? { output: shared.output } : {}),
        note: record.worker
          ? `Cluster worker ${record.worker} stopped while this task ran, so it was lost; what it wrote up to that worker’s last snapshot of your sandbox is in its file.`
          : 'The box stopped while this task ran, so it was ended; what it wrote before that is in its file.',
      },
    };
  }

  /** Sends the command's tail to the UI as output arrives, at most every TAIL_EVERY_MS. */
  private streamTail(task: LiveTask, output: TaskOutput): () => void {
    let timer: NodeJS.Timeout | null = null;
    const off = output.onChunk(() => {
      if (timer) return;
      timer = setTimeout(() => {
        timer = null;
        if (task.end === null) this.options.emit(this.viewOf(task));
      }, TAIL_EVERY_MS);
    });
    return () => {
      off();
      if (timer) clearTimeout(timer);
    };
  }

  private viewOf(task: LiveTask): TaskView {
    const { record } = task;
    const end = task.end;
    return {
      ...recordFields(record),
      ...(task.output ? { outputLength: task.output.length, tail: this.tailOf(task) } : {}),
      ...(end && 'exitCode' in end ? { exitCode: end.exitCode as number | null } : {}),
      ...(end && typeof end.reason === 'string' ? { reason: end.reason } : {}),
      ...(record.agentId ? { agentId: record.agentId, steps: task.steps } : {}),
    };
  }

  /** The last TAIL_BYTES of a command's output, scrubbed (the bytes before them absorb a secret cut at the window's start). */
  private tailOf(task: LiveTask): string {
    const text = this.options.scrubber().text(task.tail.toString('utf8'));
    return text.length > TAIL_BYTES ? text.slice(-TAIL_BYTES) : text;
  }
}

/** What every view of a task shows of its record. */
function recordFields(
  record: TaskRecord,
): Omit<TaskView, 'outputLength' | 'exitCode' | 'reason' | 'agentId' | 'tail' | 'steps'> {
  return {
    id: record.id,
    kind: record.kind,
    label: record.label,
    state: record.state,
    startedAt: record.startedAt,
    ...(record.endedAt !== null ? { endedAt: record.endedAt } : {}),
    toolCallId: record.toolCallId,
    ...(record.outputPath ? { outputPath: record.outputPath } : {}),
  };
}

/** A task this process does not run, from its record (ended, or interrupted by a crash). */
function recordView(record: TaskRecord): TaskView {
  const outcome = (typeof record.outcome === 'object' && record.outcome !== null ? record.outcome : {}) as {
    exitCode?: unknown;
    reason?: unknown;
    outputLength?: unknown;
    steps?: unknown;
  };
  return {
    ...recordFields(record),
    ...(typeof outcome.outputLength === 'number' ? { outputLength: outcome.outputLength } : {}),
    ...(typeof outcome.exitCode === 'number' || outcome.exitCode === null
      ? { exitCode: outcome.exitCode }
      : {}),
    ...(typeof outcome.reason === 'string' ? { reason: outcome.reason } : {}),
    ...(typeof outcome.steps === 'number' ? { steps: outcome.steps } : {}),
    ...(record.agentId ? { agentId: record.agentId } : {}),
  };
}

/** A command's end as `await` reports it (beside taskId, runtime and output). */
function commandEnd(end: CommandEnd, maxRuntimeMs: number): { [key: string]: JsonValue } {
  return {
    exitCode: end.exitCode,
    ...(end.signal ? { signal: end.signal } : {}),
    ...(end.reason !== 'exited' ? { reason: end.reason } : {}),
    ...(end.reason === 'timed-out'
      ? { note: `It ran past its wall-clock limit of ${maxRuntimeMs} ms and was killed.` }
      : {}),
    ...(end.reason === 'stopped'
      ? { note: 'It was stopped (Stop, the stop button, or the agent closing) and killed.' }
      : {}),
    ...(end.error ? { error: end.error } : {}),
  };
}
