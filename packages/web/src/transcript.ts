/**
 * Pure rules over a conversation's entries: merging live entries in, which entries show, what
 * bubble each one gets, and which widgets and secret requests are already answered.
 */
import { assertNever, questionAnswers, type AnswerableEntry } from '@sendbox/protocol';
import type { TranscriptEntry } from './api/types.ts';

/**
 * Merges entries into a conversation kept in seq order. An entry whose id is already held
 * replaces it in place (a streaming entry updated by the host); a repeat of the same seq is
 * dropped (the event stream and `uploadFile` may both deliver one entry).
 * Returns `current` itself when nothing changed, so React skips the render.
 */
export function mergeEntries(
  current: readonly TranscriptEntry[],
  incoming: readonly TranscriptEntry[],
): readonly TranscriptEntry[] {
  let next: TranscriptEntry[] | null = null;
  let index: Map<string, number> | null = null;
  for (const entry of incoming) {
    const list: readonly TranscriptEntry[] = next ?? current;
    index ??= new Map(list.map((e, i) => [e.id, i]));
    const at = index.get(entry.id);
    if (at !== undefined) {
      if (list[at] === entry) continue;
      next ??= [...current];
      next[at] = entry;
      continue;
    }
    next ??= [...current];
    const last = next[next.length - 1];
    if (!last || last.seq < entry.seq) {
      next.push(entry);
      index.set(entry.id, next.length - 1);
      continue;
    }
    if (next.some((e) => e.seq === entry.seq)) continue;
    // Out of order (rare: an upload response racing the stream): insert and reindex.
    const position = next.findIndex((e) => e.seq > entry.seq);
    next.splice(position, 0, entry);
    index = null;
  }
  return next ?? current;
}

/**
 * The answer to each widget or secret-request send, by the send's id: the content of the user
 * `message` that answers it (`questionAnswers`: its `replyTo`, an older box ledger's
 * `respondedValue`, else the latest open widget for a Grok Bot answer). Bubbles show labels
 * (`answerLabels`).
 */
export function deriveAnswers(entries: readonly TranscriptEntry[]): ReadonlyMap<string, string> {
  return deriveQuestions(entries).answers;
}

/**
 * The answers (`deriveAnswers`), and the questions the conversation moved past: a later user
 * prompt (a visible user message that answers nothing) came while they were unanswered, or the
 * answer was marked `widgetSkipped`. A skipped widget shows so, disabled, instead of still asking.
 */
export function deriveQuestions(entries: readonly TranscriptEntry[]): {
  answers: ReadonlyMap<string, string>;
  skipped: ReadonlySet<string>;
  /** By answering user message id: the answer as the labels clicked, for its bubble. */
  answerTexts: ReadonlyMap<string, string>;
} {
  const answers = new Map<string, string>();
  const skipped = new Set<string>();
  const answerTexts = new Map<string, string>();
  const options = new Map<string, ReadonlyArray<{ label: string; value?: string | undefined }>>();
  for (const entry of entries) {
    if (entry.kind === 'send-message' && entry.message.type === 'widget')
      options.set(entry.id, entry.message.widget.options);
  }
  const answering = new Set<string>();
  for (const [id, entry] of questionAnswers(entries as readonly AnswerableEntry[])) {
    const message = entry as AnswerableEntry & { content?: unknown };
    answering.add(message.id);
    if (message.widgetSkipped === true) {
      skipped.add(id);
      continue;
    }
    const content = typeof message.content === 'string' ? message.content : '';
    answers.set(id, content);
    const choices = options.get(id) ?? [];
    if (choices.length > 0) answerTexts.set(message.id, answerLabels(content, choices).join(', '));
  }
  /** Questions asked since the last prompt, unanswered so far. */
  let open: string[] = [];
  for (const entry of entries) {
    if (
      entry.kind === 'send-message' &&
      (entry.message.type === 'widget' || entry.message.type === 'secret-request')
    ) {
      open.push(entry.id);
      continue;
    }
    if (entry.kind !== 'message' || entry.role !== 'user' || entry.hidden || answering.has(entry.id))
      continue;
    for (const id of open) if (!answers.has(id)) skipped.add(id);
    open = [];
  }
  return { answers, skipped, answerTexts };
}

/** An answer text as the labels the user clicked (a stored value maps back to its option). */
export function answerLabels(
  answer: string,
  options: ReadonlyArray<{ label: string; value?: string | undefined }>,
): string[] {
  return answer
    .split('\n')
    .map(
      (line) =>
        options.find((o) => o.label === line)?.label ?? options.find((o) => o.value === line)?.label ?? line,
    );
}

/** The `routine` mark the box puts on a run's user message: `{id, name, instant, silent}`. */
export interface RoutineMark {
  id: string;
  name: string;
  instant: number;
}

export function routineMarkOf(entry: TranscriptEntry): RoutineMark | null {
  if (entry.kind !== 'message') return null;
  const mark = (entry as { routine?: unknown }).routine;
  if (typeof mark !== 'object' || mark === null) return null;
  const { id, name, instant } = mark as Record<string, unknown>;
  if (typeof id !== 'string' || typeof name !== 'string' || typeof instant !== 'number') return null;
  return { id, name, instant };
}

/** Every bubble the renderer draws; `BubbleKind` keys the component map in Bubble.tsx. */
export type BubbleKind =
  | 'user-message'
  | 'assistant-message'
  | 'text'
  | 'attachment'
  | 'widget'
  | 'cursor-agent'
  | 'secret-request'
  | 'user-attachment'
  | 'tool-call'
  | 'approval'
  | 'notice'
  | 'event'
  | 'routine-run'
  | 'thinking'
  | 'unrecognized';

/**
 * The bubble for an entry, or `null` for entries never drawn (hidden user messages, turn
 * ends). Exhaustive over ledger kinds and send types: a new one fails to compile here.
 */
export function bubbleKindFor(entry: TranscriptEntry): BubbleKind | null {
  switch (entry.kind) {
    case 'message':
      // A routine's run: a thin line where it woke the agent (its prompt stays hidden).
      if (entry.hidden) return routineMarkOf(entry) ? 'routine-run' : null;
      return entry.role === 'user' ? 'user-message' : 'assistant-message';
    case 'send-message': {
      const message = entry.message;
      switch (message.type) {
        case 'text':
          return 'text';
        case 'attachment':
          return 'attachment';
        case 'widget':
          return 'widget';
        case 'cursor-agent':
          return 'cursor-agent';
        case 'secret-request':
          return 'secret-request';
        default:
          return assertNever(message, 'send-message type');
      }
    }
    case 'user-attachment':
      return 'user-attachment';
    case 'tool-call':
      // An approval's answer is shown on its card, not as a row of its own.
      if (approvalAnswerOf(entry)) return null;
      return approvalOf(entry) ? 'approval' : 'tool-call';
    case 'notice':
      return 'notice';
    case 'event':
      return 'event';
    case 'thinking':
      return 'thinking';
    case 'turn-ended':
      return null;
    case '$unrecognized':
      return 'unrecognized';
    default:
      return assertNever(entry, 'ledger entry kind');
  }
}

/** Whether an entry takes a row in the conversation; thinking only when the toggle is on (C1). */
export function isShown(entry: TranscriptEntry, showThinking: boolean): boolean {
  const kind = bubbleKindFor(entry);
  if (kind === null) return false;
  return kind !== 'thinking' || showThinking;
}

/** The highest seq held, for resuming the event stream. */
export function lastSeq(entries: readonly TranscriptEntry[]): number {
  return entries.length === 0 ? 0 : (entries[entries.length - 1]?.seq ?? 0);
}

/**
 * The failed-model-call notice Retry may re-run: the last one, if no user message (a new
 * prompt, an answer or a retry) came after it. `isError` tells such notices (NoticeBubble).
 */
export function retryableNoticeId(
  entries: readonly TranscriptEntry[],
  isError: (entry: Extract<TranscriptEntry, { kind: 'notice' }>) => boolean,
): string | null {
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    if (entry.kind === 'message' && entry.role === 'user') return null;
    if (entry.kind === 'notice' && isError(entry)) return entry.id;
  }
  return null;
}

/** How an approval card was answered (`allow`, `allow-always`, `deny`), or `stopped` with its turn. */
export type ApprovalOutcome = 'allow' | 'allow-always' | 'deny' | 'stopped';

/** What an approval card asks (packages/box/src/approvals/gate.ts): a tool call that waits on the user. */
export interface ApprovalRequest {
  /** The rules' name of the call: `write`, `mcp:github/create_issue`. */
  subject: string;
  /** The MCP server, for an MCP call. */
  server?: string;
  toolName: string;
  /** The call's arguments, scrubbed by the box. */
  args: unknown;
}

/**
 * The approval a tool-call entry asks for: the box writes the card as a `tool-call` with
 * `status: "awaiting-approval"` and an `approval` object (the answer is a second entry).
 */
export function approvalOf(entry: TranscriptEntry): ApprovalRequest | null {
  if (entry.kind !== 'tool-call' || entry.status !== 'awaiting-approval') return null;
  const approval = (entry as { approval?: unknown }).approval;
  if (typeof approval !== 'object' || approval === null) return null;
  const { subject, server, toolName, args } = approval as Record<string, unknown>;
  if (typeof subject !== 'string') return null;
  return {
    subject,
    ...(typeof server === 'string' ? { server } : {}),
    toolName: typeof toolName === 'string' ? toolName : entry.name,
    args,
  };
}

/** The card an answer entry (`<card id>-answer`, `approval: {answers, decision}`) answers, and how. */
export function approvalAnswerOf(entry: TranscriptEntry): { card: string; outcome: ApprovalOutcome } | null {
  if (entry.kind !== 'tool-call') return null;
  const approval = (entry as { approval?: unknown }).approval;
  if (typeof approval !== 'object' || approval === null) return null;
  const { answers, decision } = approval as Record<string, unknown>;
  if (typeof answers !== 'string') return null;
  const outcome: ApprovalOutcome =
    decision === 'allow' || decision === 'allow-always' || decision === 'deny' ? decision : 'stopped';
  return { card: answers, outcome };
}

/** How each answered approval card was answered, by the card's id. */
export function deriveApprovals(entries: readonly TranscriptEntry[]): ReadonlyMap<string, ApprovalOutcome> {
  const outcomes = new Map<string, ApprovalOutcome>();
  for (const entry of entries) {
    const answer = approvalAnswerOf(entry);
    if (answer) outcomes.set(answer.card, answer.outcome);
  }
  return outcomes;
}

/** Whether an approval card still waits for the user (none of the entries answers it). */
export function hasOpenApproval(
  entries: readonly TranscriptEntry[],
  outcomes: ReadonlyMap<string, ApprovalOutcome>,
): boolean {
  return entries.some((entry) => !outcomes.has(entry.id) && approvalOf(entry) !== null);
}
