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
 * The answer to each widget or secret-request send, by the send's id: the content (the label the
 * user clicked) of the user `message` that answers it (`questionAnswers`: its `replyTo`, else the
 * latest open widget for a Grok Bot answer; the ledger never rewrites the send).
 */
export function deriveAnswers(entries: readonly TranscriptEntry[]): ReadonlyMap<string, string> {
  const answers = new Map<string, string>();
  for (const [id, entry] of questionAnswers(entries as readonly AnswerableEntry[])) {
    if ('content' in entry && typeof entry.content === 'string') answers.set(id, entry.content);
  }
  return answers;
}

/**
 * Widget sends marked `dismissOnMoveOn` (grok-bot-format.md §6) that the user moved on from:
 * a later user prompt (a visible user message that answers nothing) arrived while they were
 * still unanswered. The bubble shows them dismissed instead of still asking. One pass from the
 * end: a widget is dismissed when a prompt follows it and no answer to it exists.
 */
export function deriveDismissed(
  entries: readonly TranscriptEntry[],
  answers: ReadonlyMap<string, string>,
): ReadonlySet<string> {
  const dismissed = new Set<string>();
  let promptFollows = false;
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i]!;
    if (
      entry.kind === 'message' &&
      entry.role === 'user' &&
      !entry.hidden &&
      entry.respondedValue === undefined &&
      entry.replyTo === undefined &&
      entry.widgetSkipped === undefined
    ) {
      promptFollows = true;
    } else if (
      promptFollows &&
      entry.kind === 'send-message' &&
      entry.message.type === 'widget' &&
      entry.message.widget.dismissOnMoveOn === true &&
      !answers.has(entry.id)
    ) {
      dismissed.add(entry.id);
    }
  }
  return dismissed;
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
  | 'notice'
  | 'thinking'
  | 'unrecognized';

/**
 * The bubble for an entry, or `null` for entries never drawn (hidden user messages, turn
 * ends). Exhaustive over ledger kinds and send types: a new one fails to compile here.
 */
export function bubbleKindFor(entry: TranscriptEntry): BubbleKind | null {
  switch (entry.kind) {
    case 'message':
      if (entry.hidden) return null;
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
      return 'tool-call';
    case 'notice':
      return 'notice';
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
