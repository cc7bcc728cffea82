/**
 * An approval card's answer as an input of the agent's durable inbox (approvals/gate.ts): every
 * answer is one, whose nonce is the card's. A turn that waits on the card takes it, and it counts
 * as taken once the call's result is in the ledger after the answer; otherwise (the box stopped,
 * or the user sent a prompt first) it starts a turn of its own, which tells the model.
 */
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
 * (`t<N>c<k>`) follows the card's answer entry. A call answered before its answer (the user sent a
 * prompt first, the box stopped) has its result before it, and its answer is not taken.
 */
export function takenApprovalAnswers(rows: ReadonlyArray<{ id: string }>): Map<string, number> {
  const answered = new Set<string>();
  const taken = new Map<string, number>();
  for (const row of rows) {
    const entry = row as Record<string, unknown>;
    if (entry.kind !== 'tool-call' || typeof entry.toolCallId !== 'string') continue;
    const approval = entry.approval as { answers?: unknown; decision?: unknown } | undefined;
    if (approval === undefined) {
      const turn = /^t(\d+)c\d+$/.exec(row.id);
      if (turn && answered.has(entry.toolCallId))
        taken.set(approvalNonce(approvalCardId(entry.toolCallId)), Number(turn[1]));
    } else if (typeof approval.answers === 'string' && approval.decision !== 'stopped') {
      answered.add(entry.toolCallId);
    }
  }
  return taken;
}

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
    'It was not run: the answer came after that turn had ended. If it is still needed, make the call again now; it runs without asking.'
  );
}
