/** A tool call, compact: name, status and the summary the host recorded. */
import type { ToolCallEntry } from '@sendbox/protocol';

export function ToolCallBubble({ entry }: { entry: ToolCallEntry }) {
  const status = entry.status;
  return (
    <div className="tool-call">
      <span
        className={`status-dot status-${/^[a-z-]+$/.test(status) ? status : 'other'}`}
        aria-hidden="true"
      />
      <code className="tool-name">{entry.name}</code>
      <span className="tool-status">{status}</span>
      {entry.summary && <span className="tool-summary">{entry.summary}</span>}
    </div>
  );
}
