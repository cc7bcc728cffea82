/**
 * Where a routine woke the agent: its run's user message is hidden (the model reads the prompt,
 * the reader does not: grok-bot-format.md §4), so the conversation draws a thin line in its place,
 * which the Routines tab's run links scroll to.
 */
import type { RoutineMark } from '../transcript.ts';

const when = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
});

export function RoutineRunBubble({ mark }: { mark: RoutineMark }) {
  return (
    <div className="notice event" data-testid="routine-run-marker" data-routine-id={mark.id}>
      Routine “{mark.name}” ran ({when.format(mark.instant)})
    </div>
  );
}
