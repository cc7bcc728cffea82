/**
 * A `message` entry: the user's own words (plain text, as typed) or an assistant message from
 * an imported ledger (Markdown). Answers to widgets are marked as such.
 */
import type { MessageEntry } from '@sendbox/protocol';
import { LONG_TEXT, LongText } from '../LongText.tsx';
import { Markdown } from '../markdown.tsx';

/** `shown`: a widget answer as the labels the user clicked (the entry may hold the values). */
export function MessageBubble({ entry, shown }: { entry: MessageEntry; shown?: string | undefined }) {
  if (entry.role === 'assistant') return <Markdown text={entry.content} />;
  if (entry.content.length > LONG_TEXT) return <LongText text={entry.content} />;
  return (
    <div className="user-text">
      {(entry.respondedValue !== undefined ||
        entry.widgetSkipped !== undefined ||
        entry.replyTo !== undefined) && <span className="answer-tag">Answer</span>}
      {shown ?? entry.content}
    </div>
  );
}
