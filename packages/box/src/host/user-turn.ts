/**
 * A user turn's two records: the ledger `message` entry (what the user typed
 * or picked) and the text the model reads. The model text is derived from
 * ledger data alone (the entry, the question it answers, the uploads before
 * it), so a turn interrupted between the two writes gets exactly the same
 * JSONL record when it is repaired on the next start.
 */
import { answerMessage, userMessageId, type LedgerEntry } from '@sendbox/protocol';
import type { InboxInput } from './inbox.ts';
import { userTurnBlocks, userTurnTexts } from './middleware/guidance.ts';
import { envNameFor, type QuestionBook } from './question-book.ts';

/** The user `message` entry of turn `turn` for an accepted input. */
export function userEntryFor(
  turn: number,
  nonce: string,
  input: InboxInput,
  timestampMs: number,
): LedgerEntry {
  const base = { id: userMessageId(turn), kind: 'message' as const, role: 'user' as const, timestampMs };
  switch (input.kind) {
    case 'prompt':
      return { ...base, content: input.prompt, clientNonce: nonce };
    case 'widget-answer':
      return { ...base, content: input.text, respondedValue: input.messageId };
    case 'secret-answer':
      return { ...base, content: `Provided ${input.label}`, respondedValue: input.messageId };
  }
}

export interface UserEntryFields {
  content: string;
  respondedValue?: string | undefined;
}

/**
 * What the model reads for a user message: the prompt with the files uploaded for it listed after
 * it, or the answer under the question it answers.
 */
export function modelTextOf(
  entry: UserEntryFields,
  uploads: readonly string[],
  questions: QuestionBook,
): string {
  const question = entry.respondedValue === undefined ? undefined : questions.get(entry.respondedValue);
  if (question?.kind === 'widget') return answerMessage(question.id, question.prompt, entry.content);
  if (question?.kind === 'secret-request') {
    const name = envNameFor(question.target!);
    return answerMessage(
      question.id,
      question.prompt,
      `The user saved the secret. Your tools receive it as the environment variable ${name} ` +
        `(for example "$${name}" in shell). Its value is never shown to you; do not ask for it in chat.`,
    );
  }
  return uploads.length
    ? `${entry.content}\n\n${uploads.map((u) => `[The user attached a file: ${u}]`).join('\n')}`
    : entry.content;
}

/** The text blocks of the JSONL user record of turn `turn` (address tag, then the guidance). */
export function userRecordTexts(turn: number, modelText: string, guidance: string | undefined): string[] {
  return userTurnTexts(userTurnBlocks(turn, modelText, guidance));
}
