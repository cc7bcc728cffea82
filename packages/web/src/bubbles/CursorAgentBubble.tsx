/**
 * A reference to a Cursor cloud agent: a card that opens the agent in Cursor (the link comes
 * from the box's template and the card's `bcId`; anything but http(s) stays a plain card).
 */
import type { StoredCursorAgent } from '@sendbox/protocol';
import { useContext } from 'react';
import { DEFAULT_CURSOR_AGENT_URL } from '../api/types.ts';
import { ConversationContext } from '../conversation-context.ts';
import { safeHref } from '../sanitize.ts';

export function cursorAgentHref(template: string, bcId: string): string | null {
  const href = safeHref(template.replaceAll('{bcId}', encodeURIComponent(bcId)));
  return href && /^https?:/i.test(href) ? href : null;
}

export function CursorAgentBubble({ message }: { message: StoredCursorAgent }) {
  const context = useContext(ConversationContext);
  const href = cursorAgentHref(context?.cursorAgentUrl ?? DEFAULT_CURSOR_AGENT_URL, message.bcId);
  const title = message.title ?? 'Untitled agent';
  const body = (
    <>
      <span className="card-eyebrow">Cursor cloud agent</span>
      <strong className="card-title">{title}</strong>
      <code className="card-id">{message.bcId}</code>
    </>
  );
  if (!href) {
    return (
      <div className="cursor-agent-card" data-testid="cursor-agent-card">
        {body}
      </div>
    );
  }
  return (
    <a
      className="cursor-agent-card"
      href={href}
      target="_blank"
      rel="noopener noreferrer"
      title={`Open ${title} in Cursor`}
      data-testid="cursor-agent-card"
    >
      {body}
    </a>
  );
}
