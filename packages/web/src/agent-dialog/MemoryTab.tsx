/**
 * What the agent remembers (`listMemory`): its own entries, and the user's, which every agent
 * reads. Each scope shows how full it is against its cap; an entry can be deleted
 * (`forgetMemory`, by its exact text) after an inline "Delete?".
 */
import { useCallback, useEffect, useState } from 'react';
import type { ApiClient } from '../api/client.ts';
import type { MemoryView } from '../api/types.ts';
import { fullTime } from '../relative-time.ts';
import { errorText } from './AgentDialog.tsx';
import { ErrorAlert } from '../ErrorAlert.tsx';

const SCOPE_TITLE = { agent: 'This agent remembers', user: 'Every agent remembers (yours)' } as const;

export function MemoryTab({ client, agentId }: { client: ApiClient; agentId: string }) {
  const [view, setView] = useState<MemoryView | null>(null);
  const [error, setError] = useState<string | null>(null);
  /** The entry asking "Delete?", as `<scope>\n<text>`. */
  const [confirming, setConfirming] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = useCallback(() => {
    client.listMemory(agentId).then(setView, (cause: unknown) => setError(errorText(cause)));
  }, [client, agentId]);
  useEffect(load, [load]);

  function forget(scope: 'agent' | 'user', text: string): void {
    setBusy(true);
    setError(null);
    client
      .forgetMemory(agentId, scope, text)
      .then(setView, (cause: unknown) => {
        setError(errorText(cause));
        load();
      })
      .finally(() => {
        setBusy(false);
        setConfirming(null);
      });
  }

  return (
    <div data-testid="memory-tab">
      <ErrorAlert message={error} testId="memory-error" />
      {!view && !error && <p className="dialog-note">Loading…</p>}
      {view?.scopes.map((scope) => (
        <section key={scope.scope} className="memory-scope" data-testid={`memory-${scope.scope}`}>
          <h3>
            {SCOPE_TITLE[scope.scope]}{' '}
            <span className="dialog-note">
              ({Math.round(scope.bytes / 100) / 10} of {Math.round(scope.cap / 1000)} KB)
            </span>
          </h3>
          {scope.error && (
            <p className="error" role="alert">
              {scope.error}
            </p>
          )}
          {scope.entries.length === 0 && !scope.error && <p className="dialog-note">Nothing yet.</p>}
          <ul className="memory-list">
            {scope.entries.map((entry, index) => {
              const key = `${scope.scope}\n${entry.text}`;
              return (
                <li key={`${index}-${entry.createdAt}`} className="memory-entry" data-testid="memory-entry">
                  <p className="memory-text">{entry.text}</p>
                  <div className="memory-meta">
                    <time dateTime={new Date(entry.createdAt).toISOString()}>
                      {fullTime(entry.createdAt)}
                    </time>
                    {confirming === key ? (
                      <span role="group" aria-label="Delete this memory?">
                        <button
                          type="button"
                          className="danger"
                          disabled={busy}
                          onClick={() => forget(scope.scope, entry.text)}
                          data-testid="memory-delete-confirm"
                        >
                          Delete
                        </button>
                        <button type="button" onClick={() => setConfirming(null)} autoFocus>
                          Keep
                        </button>
                      </span>
                    ) : (
                      <button
                        type="button"
                        aria-label={`Delete the memory “${entry.text.slice(0, 60)}”`}
                        onClick={() => setConfirming(key)}
                        data-testid="memory-delete"
                      >
                        Delete…
                      </button>
                    )}
                  </div>
                </li>
              );
            })}
          </ul>
        </section>
      ))}
      <p className="dialog-note">
        Agents write their memories themselves (tell one “remember that …”). Memory is added to every model
        call and never to the transcript.
      </p>
    </div>
  );
}
