/** A reference to a Cursor cloud agent: its title and id. */
import type { StoredCursorAgent } from '@sendbox/protocol';

export function CursorAgentBubble({ message }: { message: StoredCursorAgent }) {
  return (
    <div className="cursor-agent-card" data-testid="cursor-agent-card">
      <span className="card-eyebrow">Cursor cloud agent</span>
      <strong className="card-title">{message.title ?? 'Untitled agent'}</strong>
      <code className="card-id">{message.bcId}</code>
    </div>
  );
}
