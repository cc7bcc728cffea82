/**
 * One bubble per ledger entry. The switch is exhaustive over entry kinds and send-message
 * types (through `assertNever`), so a type added to the protocol does not compile until it
 * has a bubble here. Bubbles are memoized: a new entry re-renders only itself (and a widget or
 * secret request whose answer just arrived).
 */
import { assertNever } from '@sendbox/protocol';
import { memo, type ReactNode } from 'react';
import type { TranscriptEntry } from '../api/types.ts';
import { CopyButton } from '../CodeBlock.tsx';
import {
  approvalOf,
  bubbleKindFor,
  routineMarkOf,
  type ApprovalOutcome,
  type BubbleKind,
} from '../transcript.ts';
import { ApprovalBubble } from './ApprovalBubble.tsx';
import { AttachmentBubble } from './AttachmentBubble.tsx';
import { CursorAgentBubble } from './CursorAgentBubble.tsx';
import { EventBubble } from './EventBubble.tsx';
import { MessageBubble } from './MessageBubble.tsx';
import { NoticeBubble } from './NoticeBubble.tsx';
import { RoutineRunBubble } from './RoutineRunBubble.tsx';
import { SecretRequestBubble } from './SecretRequestBubble.tsx';
import { TextBubble } from './TextBubble.tsx';
import { ThinkingBubble } from './ThinkingBubble.tsx';
import { ToolCallBubble } from './ToolCallBubble.tsx';
import { UnrecognizedBubble } from './UnrecognizedBubble.tsx';
import { UserAttachmentBubble } from './UserAttachmentBubble.tsx';
import { WidgetBubble } from './WidgetBubble.tsx';

/** Which column a bubble sits in; presentation only. */
const SIDE: Record<BubbleKind, 'user' | 'agent' | 'meta'> = {
  'user-message': 'user',
  'user-attachment': 'user',
  'assistant-message': 'agent',
  text: 'agent',
  attachment: 'agent',
  widget: 'agent',
  'cursor-agent': 'agent',
  'secret-request': 'agent',
  'tool-call': 'meta',
  approval: 'agent',
  notice: 'meta',
  event: 'meta',
  'routine-run': 'meta',
  thinking: 'meta',
  unrecognized: 'meta',
};

export interface BubbleProps {
  entry: TranscriptEntry;
  /**
   * For widgets and secret requests: the recorded answer, if any; for a user message that
   * answers a widget: the answer as labels (`deriveQuestions`).
   */
  answer: string | undefined;
  /** For widgets: the conversation moved past it unanswered (`deriveQuestions`). */
  skipped?: boolean | undefined;
  /** For a failed-model-call notice: it is the latest turn's outcome, so Retry is offered. */
  retryable?: boolean | undefined;
  /** For an approval card: how it was answered (`deriveApprovals`); undefined while it waits. */
  outcome?: ApprovalOutcome | undefined;
}

function body(
  entry: TranscriptEntry,
  answer: string | undefined,
  skipped: boolean,
  retryable: boolean,
  outcome: ApprovalOutcome | undefined,
): ReactNode {
  switch (entry.kind) {
    case 'message': {
      const mark = entry.hidden ? routineMarkOf(entry) : null;
      if (mark) return <RoutineRunBubble mark={mark} />;
      return <MessageBubble entry={entry} shown={answer} />;
    }
    case 'send-message': {
      const message = entry.message;
      switch (message.type) {
        case 'text':
          return <TextBubble message={message} />;
        case 'attachment':
          return <AttachmentBubble message={message} />;
        case 'widget':
          return <WidgetBubble sendId={entry.id} message={message} answer={answer} skipped={skipped} />;
        case 'cursor-agent':
          return <CursorAgentBubble message={message} />;
        case 'secret-request':
          return <SecretRequestBubble sendId={entry.id} message={message} answer={answer} />;
        default:
          return assertNever(message, 'send-message type');
      }
    }
    case 'user-attachment':
      return <UserAttachmentBubble entry={entry} />;
    case 'tool-call': {
      const request = approvalOf(entry);
      if (request) return <ApprovalBubble entryId={entry.id} request={request} outcome={outcome} />;
      return <ToolCallBubble entry={entry} />;
    }
    case 'notice':
      return <NoticeBubble entry={entry} retryable={retryable} />;
    case 'event':
      return <EventBubble entry={entry} />;
    case 'thinking':
      return <ThinkingBubble entry={entry} />;
    case 'turn-ended':
      return null;
    case '$unrecognized':
      return <UnrecognizedBubble entry={entry} />;
    default:
      return assertNever(entry, 'ledger entry kind');
  }
}

export const Bubble = memo(function Bubble({
  entry,
  answer,
  skipped = false,
  retryable = false,
  outcome,
}: BubbleProps) {
  const kind = bubbleKindFor(entry);
  if (kind === null) return null;
  const type = entry.kind === 'send-message' ? entry.message.type : undefined;
  const role = entry.kind === 'message' ? entry.role : undefined;
  const copyable = copyableText(entry);
  const time = entry.timestampMs > 0 && SIDE[kind] !== 'meta' && (
    <time className="bubble-time" dateTime={new Date(entry.timestampMs).toISOString()}>
      {formatTime(entry.timestampMs)}
    </time>
  );
  return (
    <article
      className={`bubble bubble-${kind} side-${SIDE[kind]}`}
      id={`msg-${entry.id}`}
      data-testid="bubble"
      data-entry-id={entry.id}
      data-kind={entry.kind}
      data-type={type}
      data-role={role}
      data-seq={entry.seq}
      aria-label={ariaLabel(kind, entry)}
    >
      {body(entry, answer, skipped, retryable, outcome)}
      {entry.kind === 'send-message' && entry.stopped === true && (
        <p className="bubble-stopped" data-testid="bubble-stopped">
          Stopped: you stopped the agent while it wrote this
        </p>
      )}
      {copyable !== null ? (
        <div className="bubble-foot">
          <CopyButton
            text={copyable}
            label="Copy the whole message"
            testId="copy-message"
            className="copy-button bubble-copy"
          />
          {time}
        </div>
      ) : (
        time
      )}
    </article>
  );
});

/** The words a "Copy" takes whole: a text send's Markdown source, or a message as written. */
function copyableText(entry: TranscriptEntry): string | null {
  if (entry.kind === 'send-message')
    return entry.message.type === 'text' && entry.message.content !== '' ? entry.message.content : null;
  if (entry.kind === 'message') return entry.content === '' || entry.hidden ? null : entry.content;
  return null;
}

function ariaLabel(kind: BubbleKind, entry: TranscriptEntry): string {
  const who = SIDE[kind] === 'user' ? 'You' : SIDE[kind] === 'agent' ? 'Agent' : 'Activity';
  return `${who}: ${kind.replace('-', ' ')} ${entry.id}`;
}

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const dateTimeFormat = new Intl.DateTimeFormat(undefined, {
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
});

function formatTime(ms: number): string {
  const date = new Date(ms);
  return date.toDateString() === new Date().toDateString()
    ? timeFormat.format(date)
    : dateTimeFormat.format(date);
}
