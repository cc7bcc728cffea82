/**
 * Under the conversation's last reply, when the agent is idle: Regenerate (the last prompt sent
 * again) and Edit (the last prompt changed, then sent). Either replaces the last turn: the box
 * keeps the old one in its files, withdrawn, and the page stops showing it (`withdrawnIds`).
 */
import { useEffect, useRef, useState, type FormEvent } from 'react';
import type { ApiClient } from './api/client.ts';
import { newNonce } from './Composer.tsx';
import { ErrorAlert } from './ErrorAlert.tsx';

export interface LastPrompt {
  id: string;
  content: string;
}

export function LastPromptActions({
  client,
  agentId,
  prompt,
  onSent,
}: {
  client: ApiClient;
  agentId: string;
  prompt: LastPrompt;
  /** A revision was accepted: its turn follows (the page shows it queued until it starts). */
  onSent: (sent: { text: string; clientNonce: string }) => void;
}) {
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(prompt.content);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const editor = useRef<HTMLTextAreaElement>(null);
  const editButton = useRef<HTMLButtonElement>(null);

  useEffect(() => {
    setEditing(false);
    setError(null);
  }, [prompt.id]);
  useEffect(() => {
    if (editing) editor.current?.focus();
  }, [editing]);

  async function run(send: (clientNonce: string) => Promise<unknown>, shown: string): Promise<void> {
    setBusy(true);
    setError(null);
    const clientNonce = newNonce();
    try {
      await send(clientNonce);
      setEditing(false);
      onSent({ text: shown, clientNonce });
    } catch (cause) {
      setError(cause instanceof Error ? cause.message : String(cause));
    } finally {
      setBusy(false);
    }
  }

  const regenerate = () =>
    run((clientNonce) => client.regenerateReply({ agentId, clientNonce }), prompt.content);
  const submit = (event?: FormEvent) => {
    event?.preventDefault();
    if (text.trim() === '') {
      setError('The message is empty: type what to send, or Cancel.');
      return;
    }
    void run(
      (clientNonce) => client.editPrompt({ agentId, messageId: prompt.id, prompt: text, clientNonce }),
      text,
    );
  };
  const cancel = () => {
    setEditing(false);
    setError(null);
    editButton.current?.focus();
  };

  return (
    <div className="last-prompt-actions" data-testid="last-prompt-actions">
      {editing ? (
        <form className="edit-prompt" onSubmit={submit} aria-label="Edit your last message">
          <textarea
            ref={editor}
            value={text}
            onChange={(event) => setText(event.target.value)}
            aria-label="Your last message, edited"
            data-testid="edit-prompt-text"
            rows={Math.min(8, Math.max(2, text.split('\n').length))}
            onKeyDown={(event) => {
              if (event.key === 'Escape') {
                event.preventDefault();
                cancel();
              } else if (event.key === 'Enter' && (event.metaKey || event.ctrlKey)) {
                event.preventDefault();
                submit();
              }
            }}
          />
          <div className="edit-prompt-buttons">
            <button type="submit" disabled={busy} data-testid="edit-prompt-send">
              Send edited
            </button>
            <button type="button" onClick={cancel} disabled={busy}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <>
          <button type="button" onClick={() => void regenerate()} disabled={busy} data-testid="regenerate">
            ↻ Regenerate
          </button>
          <button
            ref={editButton}
            type="button"
            onClick={() => {
              setText(prompt.content);
              setEditing(true);
            }}
            disabled={busy}
            data-testid="edit-prompt"
          >
            ✎ Edit last message
          </button>
        </>
      )}
      <ErrorAlert message={error} />
    </div>
  );
}
