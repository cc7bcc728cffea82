/** The agent's private text (C1): only rendered while "Show thinking" is on. */
import type { ThinkingEntry } from '@sendbox/protocol';

export function ThinkingBubble({ entry }: { entry: ThinkingEntry }) {
  return (
    <div className="thinking">
      <span className="card-eyebrow">Thinking</span>
      <div className="thinking-text">{entry.text}</div>
    </div>
  );
}
