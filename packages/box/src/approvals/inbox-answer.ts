/**
 * An approval card's answer as an input of the agent's durable inbox (approvals/gate.ts): every
 * answer is one, whose nonce is the card's. A turn that waits on the card takes it, and it counts
 * as taken once the call's result is in the ledger after the answer; otherwise (the box stopped,
 * or the user sent a prompt first) it starts a turn of its own, which tells the model.
 */
import { hiddenPrompt } from '@sendbox/protocol';
import type { InboxInput } from '../stores/inbox.ts';

/** The ledger id of the card asking for call `toolCallId`. */
export function approvalCardId(toolCallId: string): string {
  return `approval-${toolCallId}`;
}

/** The inbox nonce of the answer to card `entryId`: a card is answered once. */
export function approvalNonce(entryId: string): string {
  return `approval:${entryId}`;
}

/**
 * The answers a running turn took, by nonce, with that turn: a card's call whose result entry
 * (`t<N>c<k>`) follows the card's answer entry, or a card of turn N whose answer is followed by a
 * step of turn N (`t<N>a<k>`, `t<N>c<k>`, `t<N>s<k>`): the turn was resumed after its box stopped,
 * and its resume note told the model (`answersToCutTurn`). A call answered before its answer (the
 * user sent a prompt first, the box stopped) has its result before it, and its answer is not taken;
 * nor is one whose cut turn was ended (only a notice and `t<N>e` follow it).
 */
export function takenApprovalAnswers(rows: ReadonlyArray<{ id: string }>): Map<string, number> {
  const answered = new Set<string>();
  /** Answered cards by their turn: taken by the turn's next step. */
  const waiting = new Map<number, string[]>();
  const taken = new Map<string, number>();
  let turnNow = -1;
  const cardTurns = new Map<string, number>();
  for (const row of rows) {
    const entry = row as Record<string, unknown>;
    const user = /^t(\d+)u$/.exec(row.id);
    if (user) turnNow = Number(user[1]);
    const step = /^t(\d+)[acs]\d+$/.exec(row.id);
    if (step) {
      const turn = Number(step[1]);
      for (const card of waiting.get(turn) ?? []) taken.set(approvalNonce(card), turn);
      waiting.delete(turn);
    }
    if (entry.kind !== 'tool-call' || typeof entry.toolCallId !== 'string') continue;
    const approval = entry.approval as { answers?: unknown; decision?: unknown } | undefined;
    if (approval === undefined) {
      const turn = /^t(\d+)c\d+$/.exec(row.id);
      if (turn && answered.has(entry.toolCallId))
        taken.set(approvalNonce(approvalCardId(entry.toolCallId)), Number(turn[1]));
    } else if (entry.status === 'awaiting-approval') {
      cardTurns.set(row.id, turnNow);
    } else if (typeof approval.answers === 'string' && approval.decision !== 'stopped') {
      answered.add(entry.toolCallId);
      const turn = cardTurns.get(approval.answers);
      if (turn !== undefined) waiting.set(turn, [...(waiting.get(turn) ?? []), approval.answers]);
    }
  }
  return taken;
}

/**
 * The answers to cut turn `turn`'s cards that no call took (the box running the turn stopped while
 * they waited, and the answer was committed meanwhile, through another gateway or just before the
 * stop): the resumed turn tells the model each (`text`, a hidden prompt) and takes its input
 * (`nonce`), so no turn of its own tells the model again.
 */
export function answersToCutTurn(
  turn: number,
  rows: ReadonlyArray<{ id: string }>,
): Array<{ nonce: string; text: string }> {
  const start = rows.findIndex((row) => row.id === `t${turn}u`);
  if (start < 0) return [];
  const cards = new Map<string, Record<string, unknown>>();
  const ran = new Set<unknown>();
  const answers: Array<{ nonce: string; text: string; toolCallId: unknown }> = [];
  for (const row of rows.slice(start + 1)) {
    const entry = row as Record<string, unknown>;
    if (entry.kind !== 'tool-call') continue;
    const approval = entry.approval as
      { subject?: unknown; answers?: unknown; decision?: unknown } | undefined;
    if (approval === undefined) {
      if (new RegExp(`^t${turn}c\\d+$`).test(row.id)) ran.add(entry.toolCallId);
    } else if (entry.status === 'awaiting-approval') {
      cards.set(row.id, entry);
    } else if (typeof approval.answers === 'string' && cards.has(approval.answers)) {
      const decision = APPROVAL_DECISIONS.find((choice) => choice === approval.decision);
      const card = cards.get(approval.answers)!;
      const subject = (card.approval as { subject?: unknown }).subject;
      if (!decision) continue;
      const input = {
        kind: 'tool-approval',
        entryId: approval.answers,
        subject: typeof subject === 'string' ? subject : String(card.name),
        decision,
      } as const;
      const text = hiddenPrompt(approvalAnswerText(input, true));
      answers.push({ nonce: approvalNonce(approval.answers), text, toolCallId: card.toolCallId });
    }
  }
  return answers.filter((answer) => !ran.has(answer.toolCallId)).map(({ nonce, text }) => ({ nonce, text }));
}

const APPROVAL_DECISIONS = ['allow', 'allow-always', 'deny'] as const;

/**
 * Whether a card after the last user message (seq `lastUserSeq`) is still open: its turn ended
 * (the box stopped meanwhile) and the agent waits on the user, as after an unanswered widget.
 */
export function openCardAfter(
  rows: ReadonlyArray<{ id: string; seq: number }>,
  lastUserSeq: number,
): boolean {
  const open = new Set<string>();
  for (const row of rows) {
    const entry = row as Record<string, unknown>;
    if (entry.kind !== 'tool-call' || row.seq <= lastUserSeq) continue;
    if (entry.status === 'awaiting-approval') open.add(row.id);
    const answers = (entry.approval as { answers?: unknown } | undefined)?.answers;
    if (typeof answers === 'string') open.delete(answers);
  }
  return open.size > 0;
}

/** What the model reads when an answer starts a turn of its own (the call's turn did not take it). */
export function approvalAnswerText(
  input: Extract<InboxInput, { kind: 'tool-approval' }>,
  /** Told in the note of the card's own cut turn as it goes on, not in a turn of the answer's own. */
  cut = false,
): string {
  const { subject, entryId, decision } = input;
  if (decision === 'deny') {
    return (
      `The user declined the ${subject} call you asked approval for (${entryId}), so it was not run. ` +
      'Do not try it again unless the user asks; go on without it or ask the user what they want instead.'
    );
  }
  const allowed = `The user allowed the ${subject} call you asked approval for (${entryId})${decision === 'allow-always' ? ', and every later one' : ''}`;
  // Cut: the answer may have reached the call just before the box stopped, so whether it ran is not known.
  const state = cut
    ? ', but this turn was cut before the call had a result (it reads "interrupted"): check its effect first.'
    : '. It was not run: the answer came after that turn had ended.';
  return `${allowed}${state} If it is still needed, make the call again now; it runs without asking.`;
}
