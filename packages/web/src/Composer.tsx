/**
 * Where the user writes: Enter sends, Shift+Enter starts a new line, files upload through
 * `/api/uploadFile`. A prompt keeps its client nonce until it is accepted, so a retry after a
 * network error cannot start a second turn (sendPrompt is idempotent per nonce).
 */
import { forwardRef, useRef, useState, type KeyboardEvent } from 'react';
import type { ApiClient } from './api/client.ts';
import type { TranscriptEntry } from './api/types.ts';

export interface ComposerProps {
  client: ApiClient;
  agentId: string;
  /** Why the composer is disabled, shown in its place; null when it is usable. */
  disabledReason: string | null;
  working: boolean;
  onUploaded: (entry: TranscriptEntry) => void;
}

export function newNonce(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

export const Composer = forwardRef<HTMLTextAreaElement, ComposerProps>(function Composer(
  { client, agentId, disabledReason, working, onUploaded },
  textareaRef,
) {
  const [sending, setSending] = useState(false);
  const [uploading, setUploading] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const pendingNonce = useRef<{ prompt: string; nonce: string } | null>(null);
  const fileInput = useRef<HTMLInputElement>(null);
  const disabled = disabledReason !== null;

  async function send(textarea: HTMLTextAreaElement): Promise<void> {
    const prompt = textarea.value.trim();
    if (prompt === '' || sending || disabled) return;
    if (pendingNonce.current?.prompt !== prompt) pendingNonce.current = { prompt, nonce: newNonce() };
    setSending(true);
    setError(null);
    try {
      await client.sendPrompt({ agentId, prompt, clientNonce: pendingNonce.current.nonce });
      pendingNonce.current = null;
      if (textarea.value.trim() === prompt) textarea.value = '';
      textarea.focus();
    } catch (cause) {
      setError(cause instanceof Error ? cause.message : String(cause));
    } finally {
      setSending(false);
    }
  }

  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>): void {
    if (event.key !== 'Enter' || event.shiftKey || event.nativeEvent.isComposing) return;
    event.preventDefault();
    void send(event.currentTarget);
  }

  async function upload(files: FileList): Promise<void> {
    setError(null);
    for (const file of Array.from(files)) {
      setUploading(file.name);
      try {
        onUploaded(await client.uploadFile({ agentId, file, fileName: file.name, clientNonce: newNonce() }));
      } catch (cause) {
        setError(`${file.name}: ${cause instanceof Error ? cause.message : String(cause)}`);
        break;
      }
    }
    setUploading(null);
  }

  return (
    <form
      className="composer"
      data-testid="composer"
      aria-label="Message the agent"
      onSubmit={(event) => {
        event.preventDefault();
        const textarea = event.currentTarget.elements.namedItem('prompt');
        if (textarea instanceof HTMLTextAreaElement) void send(textarea);
      }}
    >
      <div className="composer-status" aria-live="polite">
        {working && (
          <span className="working" data-testid="working-indicator">
            <span className="working-dot" aria-hidden="true" /> The agent is working…
          </span>
        )}
        {uploading && <span>Uploading {uploading}…</span>}
        {disabledReason && (
          <span className="composer-disabled" data-testid="composer-disabled">
            {disabledReason}
          </span>
        )}
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <div className="composer-row">
        <input
          ref={fileInput}
          type="file"
          multiple
          hidden
          tabIndex={-1}
          onChange={(event) => {
            const files = event.currentTarget.files;
            if (files && files.length > 0) void upload(files).then(() => (event.target.value = ''));
          }}
          data-testid="composer-file"
        />
        <button
          type="button"
          className="attach"
          disabled={disabled || uploading !== null}
          onClick={() => fileInput.current?.click()}
          aria-label="Attach files"
          data-testid="composer-attach"
        >
          <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true" focusable="false">
            <path
              d="M16.5 6.5 8.9 14.1a2 2 0 1 0 2.8 2.8l7.4-7.4a4 4 0 0 0-5.6-5.6L6 11.4a6 6 0 0 0 8.5 8.5l6-6"
              fill="none"
              stroke="currentColor"
              strokeWidth="1.8"
              strokeLinecap="round"
              strokeLinejoin="round"
            />
          </svg>
        </button>
        <textarea
          ref={textareaRef}
          name="prompt"
          rows={2}
          placeholder={disabled ? '' : 'Message the agent — Enter to send, Shift+Enter for a new line'}
          aria-label="Message"
          disabled={disabled}
          onKeyDown={onKeyDown}
          data-testid="composer-input"
        />
        <button type="submit" disabled={disabled || sending} data-testid="composer-send">
          {sending ? 'Sending…' : 'Send'}
        </button>
      </div>
    </form>
  );
});
