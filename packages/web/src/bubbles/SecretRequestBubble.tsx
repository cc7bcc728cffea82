/**
 * A secret request: a masked field whose value is read from the form element on submit, sent
 * with `submitSecret`, and cleared at once. It never enters React state, a log or the ledger;
 * afterwards the bubble only says it was saved, with the label.
 */
import type { SecretTarget, StoredSecretRequest } from '@sendbox/protocol';
import { assertNever } from '@sendbox/protocol';
import { useContext, useId, useRef, useState, type FormEvent } from 'react';
import { ApiError } from '../api/client.ts';
import { ConversationContext } from '../conversation-context.ts';
import { createSingleFlight } from '../single-flight.ts';
import { ErrorAlert } from '../ErrorAlert.tsx';

export function describeTarget(target: SecretTarget): string {
  switch (target.kind) {
    case 'env':
      return `environment variable ${target.name}`;
    case 'channel-credential':
      return `${target.platform} ${target.field}`;
    default:
      return assertNever(target, 'secret target');
  }
}

export function SecretRequestBubble({
  sendId,
  message,
  answer,
}: {
  sendId: string;
  message: StoredSecretRequest;
  answer: string | undefined;
}) {
  const context = useContext(ConversationContext);
  const request = message.secretRequest;
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const flight = useRef(createSingleFlight());
  const inputId = useId();
  const readOnly = !context || context.readOnly;

  async function submit(event: FormEvent<HTMLFormElement>): Promise<void> {
    event.preventDefault();
    const input = event.currentTarget.elements.namedItem('secret');
    if (!(input instanceof HTMLInputElement) || !context) return;
    const value = input.value;
    input.value = '';
    if (value === '') return;
    setError(null);
    try {
      await flight.current.run(async () => {
        setBusy(true);
        try {
          await context.client.submitSecret({ agentId: context.agentId, messageId: sendId, value });
        } catch (cause) {
          if (!(cause instanceof ApiError && cause.status === 409)) throw cause;
        } finally {
          setBusy(false);
        }
        setSaved(true);
        context.focusComposer();
      });
    } catch (cause) {
      // The gateway never echoes the value, so its message is safe to show.
      setError(`${cause instanceof Error ? cause.message : String(cause)} Enter it again to retry.`);
    }
  }

  const done = saved || answer !== undefined;
  // Answered in the agent this one was duplicated from: the secret stayed there.
  const notHere = done && !saved && (context?.secretRequestsNotHeld.has(sendId) ?? false);
  return (
    <div className="secret-request" data-testid="secret-request" data-saved={done && !notHere}>
      <span className="card-eyebrow">Secret requested · stored for {describeTarget(request.target)}</span>
      {notHere ? (
        <p className="secret-not-here" role="status" data-testid="secret-not-here">
          Not saved in this agent: {request.label} was saved in the agent this one was copied from, and
          secrets are not copied. Ask the agent to request it again if it needs it.
        </p>
      ) : done ? (
        <p className="secret-saved" role="status" data-testid="secret-saved">
          <LockIcon />
          Saved: {request.label}
        </p>
      ) : (
        <form className="secret-form" onSubmit={(event) => void submit(event)} autoComplete="off">
          <label htmlFor={inputId}>{request.label}</label>
          {request.description && <p className="secret-description">{request.description}</p>}
          <div className="secret-row">
            <input
              id={inputId}
              name="secret"
              type="password"
              autoComplete="off"
              spellCheck={false}
              data-testid="secret-input"
              disabled={busy || readOnly}
              required
            />
            <button type="submit" data-testid="secret-submit" disabled={busy || readOnly}>
              {busy ? 'Saving…' : 'Save'}
            </button>
          </div>
          <p className="secret-hint">
            Goes straight to sendbox’s secret store; it is never written to the conversation.
          </p>
        </form>
      )}
      <ErrorAlert message={error} />
    </div>
  );
}

/** A padlock drawn in SVG: an emoji would be tofu where no colour-emoji font is installed. */
function LockIcon() {
  return (
    <svg
      className="secret-lock"
      data-testid="secret-lock"
      viewBox="0 0 24 24"
      width="14"
      height="14"
      aria-hidden="true"
      focusable="false"
    >
      <rect x="5" y="11" width="14" height="10" rx="2" fill="currentColor" />
      <path d="M8 11V8a4 4 0 0 1 8 0v3" fill="none" stroke="currentColor" strokeWidth="2" />
    </svg>
  );
}
