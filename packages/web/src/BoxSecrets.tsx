/**
 * The box secrets (`${secret:NAME}` in mcp.json; docs/mcp-client.md, "Box secrets"): their names,
 * the names mcp.json uses that are not set yet (with the servers that need them), and a form to set,
 * replace or delete one. A value is write-only: it goes into the `setBoxSecret` body and nowhere
 * else (the field is cleared once saved, it is never in storage or the URL), and the box only ever
 * answers with names.
 */
import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import type { ApiClient } from './api/client.ts';
import type { BoxSecretsView } from './api/types.ts';
import { ErrorAlert } from './ErrorAlert.tsx';

const NAME = '[A-Za-z_][A-Za-z0-9_]{0,127}';

export function BoxSecrets({ client }: { client: ApiClient }) {
  const [view, setView] = useState<BoxSecretsView | null>(null);
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const valueField = useRef<HTMLInputElement>(null);
  const headingId = useId();

  useEffect(() => {
    client
      .listBoxSecrets()
      .then(setView, (cause: unknown) => setError(cause instanceof Error ? cause.message : String(cause)));
  }, [client]);

  function pick(secret: string): void {
    setName(secret);
    setDone(null);
    valueField.current?.focus();
  }

  function act(action: () => Promise<BoxSecretsView>, message: string): void {
    setBusy(true);
    setError(null);
    setDone(null);
    action()
      .then(
        (next) => {
          setView(next);
          setDone(message);
        },
        (cause: unknown) => setError(cause instanceof Error ? cause.message : String(cause)),
      )
      .finally(() => setBusy(false));
  }

  function save(event: FormEvent<HTMLFormElement>): void {
    event.preventDefault();
    const field = valueField.current;
    if (!field) return;
    const value = field.value;
    const secret = name.trim();
    const replaced = view?.names.includes(secret) ?? false;
    act(
      async () => {
        const next = await client.setBoxSecret(secret, value);
        // Saved: the value leaves the page.
        field.value = '';
        setName('');
        return next;
      },
      `${replaced ? 'Replaced' : 'Saved'} ${secret}. Servers that use it start again with it on their next call.`,
    );
  }

  return (
    <section className="mcp-section" aria-labelledby={headingId} data-testid="box-secrets">
      <h3 id={headingId}>Box secrets</h3>
      <p className="dialog-note">
        Tokens for the servers: write <code>{'${secret:NAME}'}</code> in a server&apos;s environment or
        headers. They are stored encrypted in the box and never shown again, here or to the agents.
      </p>
      {view && view.names.length === 0 && view.missing.length === 0 && (
        <p className="dialog-note">No secrets yet.</p>
      )}
      {view && (view.names.length > 0 || view.missing.length > 0) && (
        <ul className="secret-list">
          {view.names.map((secret) => (
            <li key={secret} data-testid="box-secret" data-name={secret}>
              <code>{secret}</code> <span className="secret-set">set</span>
              <span className="secret-actions">
                <button type="button" onClick={() => pick(secret)} aria-label={`Replace ${secret}`}>
                  Replace
                </button>
                {confirming === secret ? (
                  <>
                    <button
                      type="button"
                      className="danger"
                      data-testid="box-secret-delete-confirm"
                      onClick={() => {
                        setConfirming(null);
                        act(() => client.deleteBoxSecret(secret), `Deleted ${secret}.`);
                      }}
                    >
                      Delete {secret}
                    </button>
                    <button type="button" onClick={() => setConfirming(null)}>
                      Keep
                    </button>
                  </>
                ) : (
                  <button
                    type="button"
                    className="danger"
                    disabled={busy}
                    aria-label={`Delete ${secret}`}
                    data-testid="box-secret-delete"
                    onClick={() => setConfirming(secret)}
                  >
                    Delete
                  </button>
                )}
              </span>
            </li>
          ))}
          {view.missing.map((missing) => (
            <li key={missing.name} data-testid="box-secret-missing" data-name={missing.name}>
              <code>{missing.name}</code>{' '}
              <span className="secret-missing">not set: {missing.servers.join(', ')} cannot start</span>
              <span className="secret-actions">
                <button type="button" onClick={() => pick(missing.name)} aria-label={`Set ${missing.name}`}>
                  Set
                </button>
              </span>
            </li>
          ))}
        </ul>
      )}
      <form className="secret-form-row" onSubmit={save} aria-label="Set a box secret">
        <label>
          Name
          <input
            required
            pattern={NAME}
            title="Letters, digits and _, not starting with a digit"
            value={name}
            onChange={(event) => setName(event.target.value)}
            autoComplete="off"
            spellCheck={false}
            placeholder="GITHUB_TOKEN"
            data-testid="box-secret-name"
          />
        </label>
        <label>
          Value
          <input
            ref={valueField}
            required
            type="password"
            name="box-secret-value"
            autoComplete="new-password"
            spellCheck={false}
            data-testid="box-secret-value"
          />
        </label>
        <button type="submit" className="primary" disabled={busy} data-testid="box-secret-save">
          Save secret
        </button>
      </form>
      {done && (
        <p className="dialog-saved" role="status" data-testid="box-secret-done">
          {done}
        </p>
      )}
      <ErrorAlert message={error} />
    </section>
  );
}
