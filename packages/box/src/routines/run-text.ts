/**
 * What the model reads when a routine runs: `[routine] <name>` and the prompt, as a hidden prompt
 * (the turn's user message is `[SAND_HIDDEN_PROMPT][routine] <name>\n<prompt>`, Grok Bot's wake,
 * grok-bot-format.md §4). After downtime it says how many runs were missed and since when; a
 * silent routine is told it may end without a message.
 */
import type { InboxInput } from '../stores/inbox.ts';

type RoutineInput = Extract<InboxInput, { kind: 'routine' }>;

/**
 * The inbox nonce of a routine's fire: the routine id plus its scheduled instant. A fire repeated
 * after a crash has the same one, and the run's ledger entry (its `routine` mark) gives it back.
 */
export function routineNonce(routineId: string, instant: number): string {
  return `routine:${routineId}:${new Date(instant).toISOString()}`;
}

export function routineRunText(input: RoutineInput): string {
  const lines = [`[routine] ${input.name}`, input.prompt];
  if (input.missed > 1) {
    const since = new Date(input.missedSince ?? input.instant).toISOString();
    lines.push(
      '',
      `(The box was down: this routine was due ${input.missed} times since ${since}. ` +
        `This one run stands for all of them; it was scheduled for ${new Date(input.instant).toISOString()}.)`,
    );
  }
  if (input.silent)
    lines.push(
      '',
      '(A silent routine: send the user a message only if there is something worth telling them.)',
    );
  return lines.join('\n');
}
