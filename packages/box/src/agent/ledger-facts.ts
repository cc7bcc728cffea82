/**
 * What a session derives from its ledger when it opens or catches up with another writer: the next
 * turn number, the inputs the ledger already started (by nonce, with their turn), the uploads by
 * client nonce, the uploads staged for the next prompt, the questions and their answers, and
 * whether the agent waits on the user. The ledger is the truth; these are its index.
 */
import type { SequencedEntry } from '../stores/ledger.ts';
import type { InboxRow } from '../stores/inbox.ts';
import { openCardAfter, takenApprovalAnswers } from '../approvals/inbox-answer.ts';
import { inputNonceOf } from './inputs.ts';
import type { QuestionBook } from './question-book.ts';
import { uploadPathHere } from './upload-placement.ts';

/** An upload staged for the next prompt: its entry, its name, where it sits in the sandbox. */
export interface PendingUpload {
  id: string;
  fileName: string;
  sandboxPath: string;
}

export interface LedgerFacts {
  /** Nonces of inputs the ledger holds as user messages (prompts and answers). */
  nonces: Set<string>;
  /** The turn each started input's user message opened, by nonce (approval answers: the turn that took them). */
  startedTurns: Map<string, number>;
  /** Upload entry ids by client nonce: a repeated upload gets its first entry back. */
  uploadsByNonce: Map<string, string>;
  /** Uploads after the last prompt: staged for the next one (see inputs.ts uploadsBefore). */
  pendingUploads: PendingUpload[];
  nextTurn: number;
  /** A question or an approval card after the last user message waits for the user. */
  awaitingUser: boolean;
}

/**
 * The facts of `rows` (the ledger, in seq order). `questions` is filled again from the rows, and the
 * answers already accepted in the inbox (`pending`) count as answered, their turn not yet started.
 */
export function ledgerFacts(
  rows: readonly SequencedEntry[],
  pending: readonly InboxRow[],
  questions: QuestionBook,
  sandbox: string,
): LedgerFacts {
  const facts: LedgerFacts = {
    nonces: new Set(),
    startedTurns: new Map(),
    uploadsByNonce: new Map(),
    pendingUploads: [],
    nextTurn: 0,
    awaitingUser: false,
  };
  questions.clear();
  let lastUserSeq = -1;
  let lastPromptSeq = -1;
  let maxTurn = -1;
  for (const row of rows) {
    const entry = row as Record<string, unknown>;
    const turn = /^t(\d+)u$/.exec(row.id);
    if (turn) maxTurn = Math.max(maxTurn, Number(turn[1]));
    if (entry.kind === 'message' && entry.role === 'user') {
      lastUserSeq = row.seq;
      if (typeof entry.clientNonce === 'string') lastPromptSeq = row.seq;
      // The input it started (an answer's: the send it answers; older ledgers say respondedValue).
      const nonce = inputNonceOf(entry);
      if (nonce !== null) {
        facts.nonces.add(nonce);
        facts.startedTurns.set(nonce, turn ? Number(turn[1]) : -1);
      }
    }
    if (entry.kind === 'user-attachment' && typeof entry.clientNonce === 'string') {
      facts.uploadsByNonce.set(entry.clientNonce, row.id);
    }
    if (entry.kind === 'send-message') questions.noteSend(row.id, row.seq, entry.message);
  }
  questions.noteAnswers(rows);
  // Approval answers the waiting call's turn took: settled by its recorded result, not a user message.
  for (const [nonce, turn] of takenApprovalAnswers(rows)) facts.startedTurns.set(nonce, turn);
  facts.nextTurn = maxTurn + 1;
  facts.awaitingUser = questions.awaitsAnswerAfter(lastUserSeq) || openCardAfter(rows, lastUserSeq);
  // Answers already accepted count as answered (their turn may not have started).
  for (const row of pending) {
    if ('messageId' in row.input) questions.markAnswered(row.input.messageId);
  }
  // Uploads staged for the next prompt before a restart: those after the last prompt.
  for (const row of rows) {
    const entry = row as Record<string, unknown>;
    if (row.seq <= lastPromptSeq || entry.kind !== 'user-attachment' || typeof entry.file_name !== 'string')
      continue;
    const sandboxPath = uploadPathHere(sandbox, entry.sandbox_path, entry.file_name);
    facts.pendingUploads.push({ id: row.id, fileName: entry.file_name, sandboxPath });
  }
  return facts;
}
