/**
 * A `message` entry: the user's own words (plain text, as typed) or an assistant message from
 * an imported ledger (Markdown). Answers to widgets are marked as such.
 */
import type { MessageEntry } from '@sendbox/protocol';
import { Markdown } from '../markdown.tsx';

export function MessageBubble({ entry }: { entry: MessageEntry }) {
  if (entry.role === 'assistant') return <Markdown text={entry.content} />;
  return (
    <div className="user-text">
      {(entry.respondedValue !== undefined ||
        entry.widgetSkipped !== undefined ||
        entry.replyTo !== undefined) && <span className="answer-tag">Answer</span>}
      {entry.content}
    </div>
  );
}
