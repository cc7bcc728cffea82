/**
 * What a parent reads when its child ends: the child's final text, and a line
 * listing every tool call the child made with its status, so a parent (and
 * the user) can tell a child that did the work from one that only said it did
 * (goose #5812: parents reporting success when no work was done). A child
 * that hit a limit, failed or was stopped says so in its result.
 */
import type { JsonObject } from '@sendbox/txcript';

export type ChildStop =
  /** It ended with its final text. */
  | 'done'
  /** Its own step limit. */
  | 'step-limit'
  /** The parent's turn budget of model steps (children included). */
  | 'turn-budget'
  /** Stop, deleteAgent or shutdown. */
  | 'stopped'
  | 'model-failed';

export interface ChildCall {
  name: string;
  /** `success`, `failure` or `error` (tools/types.ts statusOf). */
  status: string;
}

export interface ChildEnd {
  agentId: string;
  isBackground: boolean;
  durationMs: number;
  /** Model steps the child took. */
  steps: number;
  calls: readonly ChildCall[];
  /** The child's last plain text: its answer. */
  finalText: string;
  stop: ChildStop;
  /** What failed (model-failed) or the limit that was hit. */
  detail?: string;
}

/** `Tool calls made: 3 (shell: success, read: error, shell: success).` or `Tool calls made: none.` */
export function toolCallsLine(calls: readonly ChildCall[]): string {
  if (calls.length === 0) return 'Tool calls made: none.';
  return `Tool calls made: ${calls.length} (${calls.map((call) => `${call.name}: ${call.status}`).join(', ')}).`;
}

const STOP_TEXT: Record<Exclude<ChildStop, 'done'>, string> = {
  'step-limit': 'The subagent hit its step limit before it finished',
  'turn-budget': "The subagent was stopped when the turn's budget of model steps ran out, before it finished",
  stopped: 'The subagent was stopped before it finished',
  'model-failed': 'The subagent stopped because a model call failed',
};

/** The child's result as its parent's `task` result (or `await` complete) carries it. */
export function childResult(end: ChildEnd): { envelope: 'success' | 'failure'; payload: JsonObject } {
  const text = end.finalText.trim() === '' ? '(The subagent ended without a final message.)' : end.finalText;
  const base: JsonObject = {
    agentId: end.agentId,
    isBackground: end.isBackground,
    durationMs: end.durationMs,
  };
  const facts: JsonObject = { steps: end.steps, toolCalls: toolCallsLine(end.calls) };
  if (end.stop === 'done') return { envelope: 'success', payload: { ...base, result: text, ...facts } };
  const why = `${STOP_TEXT[end.stop]}${end.detail ? `: ${end.detail}` : ''}.`;
  const payload: JsonObject = {
    ...base,
    stopReason: end.stop,
    result: end.finalText.trim() === '' ? why : `${why} Its last text: ${end.finalText}`,
    ...facts,
  };
  // A limit still leaves a usable partial result; a failed model call or a stop is a failure.
  return {
    envelope: end.stop === 'step-limit' || end.stop === 'turn-budget' ? 'success' : 'failure',
    payload,
  };
}
