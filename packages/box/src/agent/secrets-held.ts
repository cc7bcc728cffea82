/**
 * Which of an agent's answered secret requests have no secret in its store: the requests a
 * duplicate copied with its history (`duplicateAgent` never copies secrets), or a secret
 * removed since. The page shows those as not saved here instead of "Saved". Only entry ids
 * leave: never a value, nor the names of the secrets the agent holds.
 */
import { questionAnswers, type AnswerableEntry } from '@sendbox/protocol';
import type { SequencedEntry } from '../stores/ledger.ts';
import { envNameFor } from './question-book.ts';

export function answeredSecretRequestsNotHeld(
  entries: readonly SequencedEntry[],
  held: ReadonlyMap<string, string>,
): string[] {
  const answered = questionAnswers(entries as readonly AnswerableEntry[]);
  const missing: string[] = [];
  for (const entry of entries) {
    if (entry.kind !== 'send-message' || entry.message.type !== 'secret-request') continue;
    if (answered.has(entry.id) && !held.has(envNameFor(entry.message.secretRequest.target)))
      missing.push(entry.id);
  }
  return missing;
}
