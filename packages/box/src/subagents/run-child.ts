/**
 * Runs one subagent: one turn of the turn engine (agent/turn.ts, agent/turn-driver.ts, the same
 * code the parent's turns run) on a context of its own, written to its own transcript through the
 * grok_bot codec (the same TranscriptWriter), starting with `[t0u]\n<prompt>` as real subagent
 * files do [VR subagent fixture]. The transcript is the parent's stores' (`childTranscript`): on
 * files `agent-transcripts/sand-subagent-<uuid>/sand-subagent-<uuid>.jsonl`, in a cluster its rows.
 *
 * What the child shares with its parent, and why:
 * - the model (the parent's provider) and its budget of model steps per turn;
 * - the sandbox folder: the job it is handed is about the parent's files, and what it makes is
 *   where the parent reads it; confinement, network allowlist and secrets are the parent's, so
 *   a child can do nothing its parent could not;
 * - the parent's tools, minus `send_message` (it cannot talk to the user), `update_state` and
 *   `task` (no recursion past the depth the profile allows).
 * It has its own step limit, todo list and turn state; its ledger entries live in memory and
 * go to the parent's UI as events (child-ledger.ts).
 */
import type { CompactedAgent } from '../context/agent-compaction.ts';
import type { Compaction } from '../context/compaction.ts';
import type { ContextLayer, LayerAgent } from '../context/model-call.ts';
import { userRecordTexts } from '../agent/inputs.ts';
import { agentPaths, type AgentPaths } from '../stores/files/layout.ts';
import type { Profile } from '../stores/files/profile.ts';
import { QuestionBook } from '../agent/question-book.ts';
import { runTurn, type StepBudget, type TurnTexts } from '../agent/turn.ts';
import { turnDriver, type TurnContext } from '../agent/turn-driver.ts';
import { TurnStateMachine } from '../agent/turn-state.ts';
import type { SequencedEntry } from '../stores/ledger.ts';
import type { WritePoints } from '../stores/write-points.ts';
import type { ModelMessage, ModelProvider } from '../providers/types.ts';
import type { ChildRun } from '../tasks/agent-tasks.ts';
import type { HostTool, TodoItem, ToolContext } from '../tools/types.ts';
import type { ToolCallRef } from '../agent/tool-dispatch.ts';
import { sendMessageFeature } from '@sendbox/protocol';
import { TranscriptWriter } from '../stores/transcript-writer.ts';
import type { TranscriptLog } from '../stores/transcript.ts';
import { ChildLedger } from './child-ledger.ts';
import { childResult, type ChildCall, type ChildStop } from './child-report.ts';

/** Tools a child never gets: it cannot talk to the user or change its parent's state. */
export const CHILD_EXCLUDED_TOOLS = new Set(['send_message', 'update_state']);

export const CHILD_TURN_TEXTS: TurnTexts = {
  noReplyNotice: 'The subagent ended without a final message.',
  modelFailedNotice: (message) => `A model call failed, so the subagent stopped: ${message}`,
  stepLimitNotice: (steps) => `The subagent was stopped after ${steps} model steps.`,
  stoppedNotice: 'The subagent was stopped.',
  stoppedReminder: 'You were stopped before you finished.',
  stoppedSendSeen: (text) => `Your last message was cut off at: ${text}`,
  interruptedResult: 'Interrupted: the subagent was stopped before this call finished.',
};

/** What a child takes from its parent. */
export interface ChildParent {
  /**
   * The parent agent: its name, sandbox, environment, secrets, scrubber, network allowlist and
   * tool gates are the child's too (an approval a gate asks for is asked on the parent).
   */
  agent: Pick<
    TurnContext,
    | 'id'
    | 'paths'
    | 'profile'
    | 'toolEnv'
    | 'attachments'
    | 'secrets'
    | 'toolGates'
    | 'scrubber'
    | 'allowDomains'
    | 'now'
  >;
  dataDir: string;
  /** Opens the child's transcript in the parent's stores (stores/agent-stores.ts `childTranscript`). */
  transcript(childId: string): Promise<TranscriptLog>;
  provider: ModelProvider;
  /** The parent's tools; the excluded ones are taken out here. */
  tools: readonly HostTool[];
  /** `task` stays in the child's tools only below this depth (1: children start no children). */
  maxDepth: number;
  /** The parent's depth (0: an agent's own turn). */
  depth: number;
  writePoints: WritePoints;
  /** The child's own step limit. */
  maxSteps: number;
  /**
   * The context layers a child's model calls go through, made for the child (its id and paths, an
   * empty ledger): the images of its own tool results, under the host's vision switch. Not the
   * parent's layers: those are about the parent's conversation (its uploads, its notes).
   */
  layers?(child: LayerAgent): readonly ContextLayer[];
  /**
   * What keeps each of the child's model calls inside the model's window, made for the child (its
   * todo list, its questions, the secrets it shares): a long job is pruned and summarised in its own
   * transcript as its parent's turns are (context/compaction.ts). None: the child's whole history.
   */
  compaction?(child: CompactedAgent): Compaction;
  /** The parent turn's budget of model steps, which the child draws from. */
  budget?: StepBudget;
  /** What the child's tool calls get (background commands, its own children past depth 1). */
  toolServices?(childId: string, call: ToolCallRef): Partial<ToolContext>;
  /** Each entry the child's turn writes (the parent's UI shows the child's steps live). */
  onEntry(agentId: string, entry: SequencedEntry): void;
}

export interface ChildJob {
  agentId: string;
  description: string;
  prompt: string;
  isBackground: boolean;
  onStep(): void;
}

/** Starts the child's turn at once; `ended` settles when its turn is over (never rejects). */
export function runChild(parent: ChildParent, job: ChildJob): ChildRun {
  const abort = new AbortController();
  const ended = runChildTurn(parent, job, abort.signal);
  return { ended, stop: () => abort.abort(new Error('the subagent was stopped')) };
}

async function runChildTurn(parent: ChildParent, job: ChildJob, signal: AbortSignal) {
  const startedAt = parent.agent.now();
  const own = agentPaths(parent.dataDir, job.agentId);
  const calls: ChildCall[] = [];
  let stop: ChildStop = 'done';
  let detail: string | undefined;
  let steps = 0;
  const history: ModelMessage[] = [];
  let log: TranscriptLog | undefined;
  try {
    log = await parent.transcript(job.agentId);
    const writer = new TranscriptWriter(
      log,
      new ChildLedger(),
      () => parent.agent.scrubber(),
      (entries) => {
        for (const entry of entries) {
          const e = entry;
          if (e.kind === 'tool-call' && typeof e.name === 'string')
            calls.push({ name: e.name, status: String(e.status) });
          if (e.kind === 'notice') {
            if (e.reason === 'step-limit') stop = 'step-limit';
            else if (e.reason === 'turn-budget') stop = 'turn-budget';
            else if (e.reason === 'stopped') stop = 'stopped';
            else if (e.reason === 'model-failed') {
              stop = 'model-failed';
              detail = typeof e.text === 'string' ? e.text : undefined;
            }
          }
          parent.onEntry(job.agentId, entry);
        }
      },
      parent.writePoints,
    );
    const texts = userRecordTexts(0, job.prompt);
    writer.appendRecords([{ role: 'user', blocks: texts.map((text) => ({ type: 'text' as const, text })) }]);
    history.push({ role: 'user', content: texts.map((text) => ({ type: 'text' as const, text })) });
    const ctx = childContext(parent, job, { ...own, sandbox: parent.agent.paths.sandbox }, writer);
    const counting: ModelProvider = {
      provider: parent.provider.provider,
      model: parent.provider.model,
      step: async (request) => {
        const result = await parent.provider.step(request);
        steps += 1;
        job.onStep();
        return result;
      },
    };
    ctx.state.startTurn();
    await runTurn(history, turnDriver(ctx, 0, counting, { signal }), ctx.state, {
      maxSteps: parent.maxSteps,
      texts: CHILD_TURN_TEXTS,
      signal,
      endsOnText: true,
      ...(parent.budget ? { budget: parent.budget } : {}),
    });
  } catch (error) {
    // A failed write (a full disk) ends the child like a failed model call: the parent is told.
    stop = 'model-failed';
    detail = `the subagent's turn failed: ${(error as Error).message}`;
  } finally {
    log?.close();
  }
  if (signal.aborted && stop === 'done') stop = 'stopped';
  return childResult({
    agentId: job.agentId,
    isBackground: job.isBackground,
    durationMs: parent.agent.now() - startedAt,
    steps,
    calls,
    finalText: stop === 'stopped' ? lastText(history) : finalText(history),
    stop,
    ...(detail ? { detail } : {}),
  });
}

/** The TurnContext of a child's turn (exported for bench/subagent-overhead.ts, which runs the same turn directly). */
export function childContext(
  parent: ChildParent,
  job: ChildJob,
  paths: AgentPaths,
  writer: TranscriptWriter,
): TurnContext {
  const recursion = parent.depth + 1 < parent.maxDepth;
  const tools = parent.tools.filter(
    (tool) => !CHILD_EXCLUDED_TOOLS.has(tool.name) && (recursion || tool.name !== 'task'),
  );
  const name = parent.agent.profile.name;
  const profile: Profile = {
    name: `a subagent of ${name}`,
    description:
      `You do one job for ${name}, described in the first message; ${name} cannot see your work ` +
      'until you finish. You cannot talk to the user. When the job is done, end with a plain-text message ' +
      '(no tool call) that is your whole answer: what you did, what you found, what is left.',
    harness: 'box',
    title: job.description,
  };
  const todos: TodoItem[] = [];
  const { agent } = parent;
  const ctx: TurnContext = {
    id: agent.id,
    paths,
    profile,
    feature: sendMessageFeature({ enabled: false }),
    tools,
    toolEnv: agent.toolEnv,
    todos,
    writer,
    attachments: agent.attachments,
    secrets: agent.secrets,
    toolGates: agent.toolGates,
    contextLayers: parent.layers?.({ id: job.agentId, paths, entries: () => [] }) ?? [],
    state: new TurnStateMachine('idle'),
    questions: new QuestionBook(),
    sendReminderEvery: Number.MAX_SAFE_INTEGER,
    scrubber: () => agent.scrubber(),
    allowDomains: () => agent.allowDomains(),
    now: () => agent.now(),
    ...(parent.toolServices
      ? { toolServices: (call: ToolCallRef) => parent.toolServices!(job.agentId, call) }
      : {}),
  };
  return parent.compaction ? { ...ctx, compaction: parent.compaction(ctx) } : ctx;
}

/** The child's answer: the text of its last step, when that step made no tool call. */
function finalText(history: readonly ModelMessage[]): string {
  const last = history.at(-1);
  if (!last || last.role !== 'assistant') return lastText(history);
  if (typeof last.content === 'string') return last.content;
  if (last.content.some((part) => part.type === 'tool-call')) return lastText(history);
  return last.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
}

/** The last text the child wrote, in any step (what it had when it was cut off). */
function lastText(history: readonly ModelMessage[]): string {
  for (let i = history.length - 1; i >= 0; i--) {
    const message = history[i]!;
    if (message.role !== 'assistant') continue;
    const text =
      typeof message.content === 'string'
        ? message.content
        : message.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
    if (text.trim() !== '') return text;
  }
  return '';
}
