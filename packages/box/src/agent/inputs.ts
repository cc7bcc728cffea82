/**
 * A user turn's two records: the ledger `message` entry (what the user typed
 * or picked, in Grok Bot's shape) and the text the model reads. The model
 * text is derived from ledger data alone (the entry, the question it
 * answers, the uploads before it), so a turn interrupted between the two
 * writes gets exactly the same JSONL record when it is repaired on the next
 * start. What the host says in the user role is a hidden prompt
 * (`[SAND_HIDDEN_PROMPT]`), never the user's words; guidance is added per
 * model call and never written (context/injections.ts).
 */
import { uploadPathHere } from './upload-placement.ts';
import {
  answerMessage,
  attachedFilesPrompt,
  hiddenPrompt,
  secretSavedPrompt,
  supersedesMarker,
  userMessageId,
  withAddressTag,
  type LedgerEntry,
} from '@sendbox/protocol';
import type { InboxInput, InboxRow, PendingInput } from '../stores/inbox.ts';
import type { SequencedEntry } from '../stores/ledger.ts';
import { envNameFor, type QuestionBook } from './question-book.ts';
import { routineNonce, routineRunText } from '../routines/run-text.ts';
import { approvalAnswerText, approvalNonce } from '../approvals/inbox-answer.ts';

/** What the model reads when the user retries a turn whose model call failed (the host speaking). */
export const RETRY_PROMPT = 'The previous model call failed. Try again: continue where you left off.';

type UserEntryBase = { id: string; kind: 'message'; role: 'user'; timestampMs: number };

/**
 * One kind of durable inbox input: how its turn's user `message` entry reads (the model's text is
 * derived from that entry, `modelTextOf`), and how it shows while it waits (`pendingInputs`). A new
 * kind is one member of `InboxInput` (stores/inbox.ts) and one entry here; the compiler asks for it.
 */
export interface InputKind<I extends InboxInput> {
  userEntry(base: UserEntryBase, nonce: string, input: I): LedgerEntry;
  /** What the pending bubble shows (a secret never: its label). */
  pendingText(input: I): string;
}

export const INPUT_KINDS: { [K in InboxInput['kind']]: InputKind<Extract<InboxInput, { kind: K }>> } = {
  prompt: {
    userEntry: (base, nonce, input) => ({
      ...base,
      content: input.prompt,
      clientNonce: nonce,
      ...(input.supersedes === undefined ? {} : { supersedes: input.supersedes }),
    }),
    pendingText: (input) => input.prompt,
  },
  'widget-answer': {
    // Grok Bot's shape: the label clicked in content, the option's value in respondedValue.
    userEntry: (base, _nonce, input) => ({
      ...base,
      content: input.text,
      respondedValue: input.value,
      widgetSkipped: false,
      replyTo: input.messageId,
    }),
    pendingText: (input) => input.text,
  },
  'secret-answer': {
    userEntry: (base, _nonce, input) => ({
      ...base,
      content: `Provided ${input.label}`,
      replyTo: input.messageId,
    }),
    pendingText: (input) => `Provided ${input.label}`,
  },
  retry: {
    // Not the user's words: the UI never shows it (`hidden`), the model reads a hidden prompt.
    userEntry: (base) => ({ ...base, content: RETRY_PROMPT, hidden: true }),
    pendingText: () => 'Retry',
  },
  routine: {
    // A hidden user turn, `[SAND_HIDDEN_PROMPT][routine] <name>` then the prompt (§4); the UI shows a marker.
    userEntry: (base, _nonce, input) => ({
      ...base,
      content: routineRunText(input),
      hidden: true,
      routine: { id: input.routineId, name: input.name, instant: input.instant, silent: input.silent },
    }),
    pendingText: (input) => `Routine: ${input.name}`,
  },
  'task-wake': {
    // The host speaking, as Grok Bot's `[A background task just completed]` wake: hidden, like a retry.
    userEntry: (base, _nonce, input) => ({ ...base, content: input.text, hidden: true }),
    pendingText: () => 'A background task finished',
  },
  'tool-approval': {
    // The host speaking: what the user decided on a card whose turn did not take the answer (approvals/gate.ts).
    userEntry: (base, _nonce, input) => ({
      ...base,
      content: approvalAnswerText(input),
      hidden: true,
      approval: { answers: input.entryId, decision: input.decision },
    }),
    pendingText: (input) => `${input.decision === 'deny' ? 'Declined' : 'Allowed'} ${input.subject}`,
  },
};

function kindOf<I extends InboxInput>(input: I): InputKind<I> {
  return INPUT_KINDS[input.kind] as unknown as InputKind<I>;
}

/** The user `message` entry of turn `turn` for an accepted input. */
export function userEntryFor(
  turn: number,
  nonce: string,
  input: InboxInput,
  timestampMs: number,
): LedgerEntry {
  const base = { id: userMessageId(turn), kind: 'message' as const, role: 'user' as const, timestampMs };
  return kindOf(input).userEntry(base, nonce, input);
}

/** A pending input as clients see it (openAgent, listAgents, the event stream). */
export function pendingView(row: InboxRow): PendingInput {
  const { input } = row;
  return {
    nonce: row.nonce,
    kind: input.kind,
    text: kindOf(input).pendingText(input),
    acceptedAt: row.acceptedAt,
  };
}

/** The nonce of an answer: a question is answered once, so its id is the nonce. */
export function answerNonce(messageId: string): string {
  return `answer:${messageId}`;
}

/**
 * The inbox nonce of the input a user `message` entry started, read from the entry alone: a
 * prompt's clientNonce, the answered question's id, an approval card's, a routine run's mark. Null for inputs whose
 * entry does not say (a retry, a task wake). A crash between the entry's commit and the inbox
 * row's update is reconciled with it, and a turn it cut is known as the box's own to close.
 */
export function inputNonceOf(entry: Record<string, unknown>): string | null {
  if (typeof entry.clientNonce === 'string') return entry.clientNonce;
  const answered = [entry.replyTo, entry.respondedValue].find((v) => typeof v === 'string');
  if (answered !== undefined) return answerNonce(answered);
  const approval = entry.approval as { answers?: unknown } | undefined;
  if (typeof approval?.answers === 'string') return approvalNonce(approval.answers);
  const routine = entry.routine as { id?: unknown; instant?: unknown } | undefined;
  if (typeof routine?.id === 'string' && typeof routine.instant === 'number')
    return routineNonce(routine.id, routine.instant);
  return null;
}

export interface UserEntryFields {
  content: string;
  /** The send an answer answers (older sendbox ledgers named it in `respondedValue`). */
  replyTo?: string | undefined;
  respondedValue?: string | undefined;
  /** A message the host wrote in the user role (a retry). */
  hidden?: boolean | undefined;
  /** The user message a prompt sent again replaces (protocol revisions.ts). */
  supersedes?: string | undefined;
}

/**
 * What the model reads for a user message: the prompt with the files uploaded for it listed after
 * it (a hidden prompt), or the answer under the question it answers.
 */
export function modelTextOf(
  entry: UserEntryFields,
  uploads: readonly string[],
  questions: QuestionBook,
): string {
  if (entry.hidden === true) return hiddenPrompt(entry.content);
  const answered = entry.replyTo ?? entry.respondedValue;
  const question = answered === undefined ? undefined : questions.get(answered);
  if (question?.kind === 'widget') return answerMessage(question.id, question.prompt, entry.content);
  if (question?.kind === 'secret-request') {
    return answerMessage(question.id, question.prompt, secretSavedPrompt(envNameFor(question.target!)));
  }
  return uploads.length ? `${entry.content}\n\n${attachedFilesPrompt(uploads)}` : entry.content;
}

/**
 * The sandbox paths of the uploads a prompt at `seq` listed: those after the prompt before it, each
 * where `sandbox` (this machine's) has it (upload-placement.ts `uploadPathHere`).
 */
export function uploadsBefore(
  sandbox: string,
  rows: readonly SequencedEntry[],
  seq: number | undefined,
): string[] {
  if (seq === undefined) return [];
  let from = -1;
  for (const row of rows) {
    const entry = row as Record<string, unknown>;
    if (row.seq < seq && entry.kind === 'message' && typeof entry.clientNonce === 'string') from = row.seq;
  }
  return rows.flatMap((row) => {
    const entry = row as Record<string, unknown>;
    if (row.seq <= from || row.seq >= seq || entry.kind !== 'user-attachment') return [];
    return [uploadPathHere(sandbox, entry.sandbox_path, String(entry.file_name))];
  });
}

/**
 * The sandbox paths of the uploads listed with the prompt `userId` replaced, and with the one that
 * one replaced (regenerate twice): a prompt sent again keeps its files.
 */
export function revisedUploads(
  sandbox: string,
  rows: readonly SequencedEntry[],
  userId: string | undefined,
): string[] {
  if (userId === undefined) return [];
  const entry = rows.find((row) => row.id === userId);
  if (entry === undefined) return [];
  const supersedes = (entry as { supersedes?: unknown }).supersedes;
  const earlier = typeof supersedes === 'string' ? supersedes : undefined;
  return [...revisedUploads(sandbox, rows, earlier), ...uploadsBefore(sandbox, rows, entry.seq)];
}

/**
 * The text blocks of the JSONL user record of turn `turn`: the text under its `[t<N>u]` address tag,
 * then, for a prompt sent in place of an earlier one, the hidden marker naming it (protocol
 * revisions.ts); nothing else. Grok Bot appends its send_message guidance to every user turn (seed 000), yet no
 * real JSONL record holds it: it is added when the model is called, never written
 * (context/injections.ts, docs/formats/grok-bot.md "What the box writes").
 */
export function userRecordTexts(turn: number, modelText: string, supersedes?: string): string[] {
  const texts = [withAddressTag(turn, modelText)];
  if (supersedes !== undefined) texts.push(supersedesMarker(supersedes));
  return texts;
}
