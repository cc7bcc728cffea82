/**
 * A tool call while it runs: its icon, name and line, the time it has run (ticking each second)
 * and the tail of its output so far. Its ledger entry takes its place when the call is over.
 */
import { useEffect, useState } from 'react';
import type { LiveToolView } from '../api/types.ts';
import { formatDuration } from './ToolCallBubble.tsx';

export function LiveToolRow({ tool }: { tool: LiveToolView }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  const elapsed = Math.max(0, now - tool.startedAt);
  return (
    <article
      className="bubble bubble-tool-call side-meta live-tool"
      data-testid="live-tool"
      data-tool-call-id={tool.toolCallId}
      aria-label={`Activity: ${tool.name} running`}
      aria-busy="true"
    >
      <div className="tool-call">
        <div className="tool-row">
          <code className="tool-name">{tool.name}</code>
          {tool.title && (
            <span className="tool-summary" title={tool.title}>
              {tool.title}
            </span>
          )}
          <span className="tool-meta">
            <span className="status-dot status-running" aria-hidden="true" />
            <span className="tool-status">running</span>
            <span className="tool-duration" data-testid="live-tool-elapsed">
              {formatDuration(Math.floor(elapsed / 1000) * 1000)}
            </span>
          </span>
        </div>
        {tool.tail && (
          <pre className="live-tool-tail" data-testid="live-tool-tail">
            {tool.tail.split('\n').slice(-12).join('\n')}
          </pre>
        )}
      </div>
    </article>
  );
}
