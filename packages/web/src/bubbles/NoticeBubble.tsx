/**
 * A host notice, compact (a model switch, "You stopped the turn."). A notice typed as an error
 * (`level: "error"`: a failed model call, the step cap, a turn the box could not finish) is an
 * alert instead: it says what failed and, while it is the latest turn's outcome, offers Retry,
 * which re-runs the turn.
 */
import type { NoticeEntry } from '@sendbox/protocol';
import { useContext, useState } from 'react';
import { ConversationContext } from '../conversation-context.ts';
import { ConnectCard, connectServerOf } from './ConnectCard.tsx';

/** Whether a notice reports a failure. */
export function isErrorNotice(entry: NoticeEntry): boolean {
  return entry.level === 'error';
}

export function NoticeBubble({ entry, retryable = false }: { entry: NoticeEntry; retryable?: boolean }) {
  const context = useContext(ConversationContext);
  const [state, setState] = useState<'idle' | 'busy' | 'sent'>('idle');
  const [error, setError] = useState<string | null>(null);
  // Where the model's memory of the conversation was summarised (context/compaction.ts): a thin rule.
  if (entry.reason === 'context-summarized') {
    return (
      <div className="context-marker" role="separator" title={entry.text} data-testid="context-marker">
        <span>Summarised for the model above this line</span>
      </div>
    );
  }
  const server = connectServerOf(entry);
  if (server !== null) return <ConnectCard entry={entry} server={server} />;
  if (!isErrorNotice(entry)) return <div className="notice">{entry.text}</div>;
  const canRetry = retryable && context !== null && !context.readOnly && state !== 'sent';
  return (
    <div className="notice-error" role="alert" data-testid="error-notice">
      <p className="notice-error-text">
        <strong>Something failed.</strong> {entry.text}
      </p>
      {canRetry && (
        <button
          type="button"
          disabled={state === 'busy'}
          data-testid="retry-turn"
          onClick={() => {
            setState('busy');
            setError(null);
            context.client.retryTurn(context.agentId).then(
              () => setState('sent'),
              (cause: unknown) => {
                setState('idle');
                setError(cause instanceof Error ? cause.message : String(cause));
              },
            );
          }}
        >
          {state === 'busy' ? 'Retrying…' : 'Retry'}
        </button>
      )}
      {error && <p className="error">{error}</p>}
    </div>
  );
}
