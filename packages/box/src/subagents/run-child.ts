/**
 * Runs one subagent: one turn of the turn engine (host/turn.ts, host/turn-driver.ts, the same
 * code the parent's turns run) on a context of its own, written to its own transcript
 * `agent-transcripts/sand-subagent-<uuid>/sand-subagent-<uuid>.jsonl` through the grok_bot
 * codec (the same TranscriptWriter), starting with `[t0u]\n<prompt>` as real subagent files do
 * [VR subagent fixture].
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
import { userRecordTexts } from '../host/user-turn.ts';
import { ensurePrivateDir } from '../fs/atomic.ts';
import { agentPaths, type AgentPaths } from '../host/layout.ts';
import type { Profile } from '../host/profile.ts';
import { QuestionBook } from '../host/question-book.ts';
import { runTurn, type StepBudget, type TurnTexts } from '../host/turn.ts';
import { turnDriver, type TurnContext } from '../host/turn-driver.ts';
import { TurnStateMachine } from '../host/turn-state.ts';
import type { SequencedEntry } from '../host/types.ts';
import type { WritePoints } from '../host/write-points.ts';
import type { AttachmentStore } from '../attachments/store.ts';
import type { ModelMessage, ModelProvider } from '../providers/types.ts';
import type { Scrubber } from '../secrets/scrub.ts';
import type { SecretStore } from '../secrets/store.ts';
import type { ChildRun } from '../tasks/agent-tasks.ts';
import type { HostTool, TodoItem } from '../tools/types.ts';
import { sendMessageFeature } from '@sendbox/protocol';
import { TranscriptWriter } from '../transcript/writer.ts';
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
  interruptedResult: 'Interrupted: the subagent was stopped before this call finished.',
};

/** What a child takes from its parent. */
export interface ChildParent {
  dataDir: string;
  /** The parent's name (the child's system prompt says whose job it does). */
  name: string;
  /** The parent's sandbox folder, which the child works in. */
  sandbox: string;
  provider: ModelProvider;
  /** The parent's tools; the excluded ones are taken out here. */
  tools: readonly HostTool[];
  /** `task` stays in the child's tools only below this depth (1: children start no children). */
  maxDepth: number;
  depth: number;
  toolEnv: Readonly<Record<string, string>>;
  attachments: AttachmentStore;
  secrets: SecretStore;
  scrubber(): Scrubber;
  allowDomains(): Promise<readonly string[]>;
  now(): number;
  writePoints: WritePoints;
  /** The child's own step limit. */
  maxSteps: number;
  /** The parent turn's budget of model steps, which the child draws from. */
  budget?: StepBudget;
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
  const startedAt = parent.now();
  const own = agentPaths(parent.dataDir, job.agentId);
  const calls: ChildCall[] = [];
  let stop: ChildStop = 'done';
  let detail: string | undefined;
  let steps = 0;
  const history: ModelMessage[] = [];
  try {
    await ensurePrivateDir(own.transcriptDir);
    const ledger = new ChildLedger(own.jsonl);
    const writer = new TranscriptWriter(
      own.jsonl,
      ledger,
      () => parent.scrubber(),
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
    const ctx = childContext(parent, job, { ...own, sandbox: parent.sandbox }, writer);
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
    await runTurn(history, turnDriver(ctx, 0, counting, { signal, onDraft: () => undefined }), ctx.state, {
      maxSteps: parent.maxSteps,
      texts: CHILD_TURN_TEXTS,
      signal,
      endsOnText: true,
      ...(parent.budget ? { budget: parent.budget } : {}),
    });
    writer.close();
  } catch (error) {
    // A failed write (a full disk) ends the child like a failed model call: the parent is told.
    stop = 'model-failed';
    detail = `the subagent's turn failed: ${(error as Error).message}`;
  }
  if (signal.aborted && stop === 'done') stop = 'stopped';
  return childResult({
    agentId: job.agentId,
    isBackground: job.isBackground,
    durationMs: parent.now() - startedAt,
    steps,
    calls,
    finalText: stop === 'stopped' ? lastText(history) : finalText(history),
    stop,
    ...(detail ? { detail } : {}),
  });
}

function childContext(
  parent: ChildParent,
  job: ChildJob,
  paths: AgentPaths,
  writer: TranscriptWriter,
): TurnContext {
  const recursion = parent.depth + 1 < parent.maxDepth;
  const tools = parent.tools.filter(
    (tool) => !CHILD_EXCLUDED_TOOLS.has(tool.name) && (recursion || tool.name !== 'task'),
  );
  const profile: Profile = {
    name: `a subagent of ${parent.name}`,
    description:
      `You do one job for ${parent.name}, described in the first message; ${parent.name} cannot see your work ` +
      'until you finish. You cannot talk to the user. When the job is done, end with a plain-text message ' +
      '(no tool call) that is your whole answer: what you did, what you found, what is left.',
    harness: 'box',
    title: job.description,
  };
  const todos: TodoItem[] = [];
  return {
    paths,
    profile,
    feature: sendMessageFeature({ enabled: false }),
    tools,
    toolEnv: parent.toolEnv,
    todos,
    writer,
    attachments: parent.attachments,
    secrets: parent.secrets,
    state: new TurnStateMachine('idle'),
    questions: new QuestionBook(),
    sendReminderEvery: Number.MAX_SAFE_INTEGER,
    scrubber: () => parent.scrubber(),
    allowDomains: () => parent.allowDomains(),
    now: () => parent.now(),
  };
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
