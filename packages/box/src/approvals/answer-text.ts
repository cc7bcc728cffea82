/** What the model reads when an approval card is answered after its turn ended (the box restarted). */
import type { InboxInput } from '../stores/inbox.ts';

export function approvalAnswerText(input: Extract<InboxInput, { kind: 'tool-approval' }>): string {
  const { subject, entryId, decision } = input;
  if (decision === 'deny') {
    return (
      `The user declined the ${subject} call you asked approval for (${entryId}), so it was not run. ` +
      'Do not try it again unless the user asks; go on without it or ask the user what they want instead.'
    );
  }
  return (
    `The user allowed the ${subject} call you asked approval for (${entryId})${decision === 'allow-always' ? ', and every later one' : ''}. ` +
    'It was not run: the box stopped while it waited. If it is still needed, make the call again now; it runs without asking.'
  );
}
