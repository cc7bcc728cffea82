/**
 * What the model reads when background work it started ended while it was idle: the host's
 * words in a user record, `[SAND_HIDDEN_PROMPT][A background task just completed] …` as Grok Bot
 * writes that wake (docs/formats/grok-bot.md, "Background wakes"): one line saying what finished,
 * a block per task, then what to do about it. The `[SAND_HIDDEN_PROMPT]` marker is added where
 * every hidden user record gets it (agent/inputs.ts); this is the text after it.
 */
import type { TaskRecord } from './task-book.ts';

export const TASK_WAKE_CUE = '[A background task just completed]';

/** What the model is asked to do with the results (sendbox's own words). */
const INSTRUCTION =
  'Pick the work back up: look at the result, then carry on or wrap up. If it is new and matters to ' +
  'the user, or they asked to hear when it finished, tell them with send_message and name what ' +
  'finished (they cannot see your background tasks). If it is stale or already handled, end the turn ' +
  'without a message.';

export interface WokenTask {
  record: TaskRecord;
  /** A command's last output, scrubbed (absent after a restart: the file has it). */
  tail?: string | undefined;
}

export function taskWakeText(tasks: readonly WokenTask[]): string {
  const intro =
    tasks.length === 1
      ? 'A background task you started has finished.'
      : `${tasks.length} background tasks you started have finished.`;
  return [`${TASK_WAKE_CUE} ${intro}`, '', tasks.map(block).join('\n\n'), '', INSTRUCTION].join('\n');
}

type Outcome = { [key: string]: unknown };

function block({ record, tail }: WokenTask): string {
  const outcome = (
    typeof record.outcome === 'object' && record.outcome !== null ? record.outcome : {}
  ) as Outcome;
  if (record.kind === 'subagent') {
    const stop = typeof outcome.stopReason === 'string' ? outcome.stopReason : null;
    const verb = stop === null ? 'finished' : stop === 'stopped' ? 'was stopped' : 'ended early';
    return [
      `Background task "${record.label}" (subagent ${record.id}) ${verb}:`,
      text(outcome.result, '(no result recorded)'),
      ...(typeof outcome.toolCalls === 'string' ? [outcome.toolCalls] : []),
    ].join('\n');
  }
  const code = outcome.exitCode;
  const reason = typeof outcome.reason === 'string' ? outcome.reason : 'exited';
  const verb =
    reason === 'stopped' ? 'was stopped' : reason === 'exited' && code === 0 ? 'finished' : 'failed';
  const lines = [
    `Background task "${record.label}" (shell ${record.id}) ${verb}:`,
    `Exit code: ${typeof code === 'number' ? code : 'none'}${reason === 'exited' ? '' : ` (${reason})`}.`,
    ...(typeof outcome.note === 'string' ? [outcome.note] : []),
    ...(typeof outcome.error === 'string' ? [`Error: ${outcome.error}`] : []),
    `Output: ${typeof outcome.outputLength === 'number' ? outcome.outputLength : 0} bytes in ${record.outputPath ?? 'its file'}; ` +
      `await {taskId: "${record.id}"} returns what you have not seen.`,
  ];
  if (tail !== undefined && tail.trim() !== '') lines.push('Its last output:', tail.trimEnd());
  return lines.join('\n');
}

function text(value: unknown, fallback: string): string {
  return typeof value === 'string' && value.trim() !== '' ? value : fallback;
}
