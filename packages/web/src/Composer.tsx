/**
 * Where the user writes: Enter sends, Shift+Enter starts a new line, and the field grows to
 * about eight lines. Files picked, pasted or dropped wait as chips until Send, which uploads
 * them (`/api/uploadFile`) and then sends the text. The draft is kept per agent across reloads.
 * A prompt keeps its client nonce until it is accepted, so a retry after a network error
 * cannot start a second turn (sendPrompt is idempotent per nonce). During a turn a Stop button
 * cancels it; a prompt sent meanwhile is queued (the conversation shows it as pending).
 * Disabled, the composer looks so and says why.
 */
import {
  forwardRef,
  useCallback,
  useEffect,
  useId,
  useLayoutEffect,
  useRef,
  useState,
  type ClipboardEvent,
  type DragEvent,
  type KeyboardEvent,
} from 'react';
import type { ApiClient } from './api/client.ts';
import type { TranscriptEntry } from './api/types.ts';
import { readDraft, writeDraft } from './drafts.ts';
import { formatBytes } from './files.ts';
import { ErrorAlert } from './ErrorAlert.tsx';

export interface ComposerProps {
  client: ApiClient;
  agentId: string;
  /** Why the composer is disabled, shown in its place; null when it is usable. */
  disabledReason: string | null;
  /** The largest file the box takes: a larger one is refused here, before any byte is sent. */
  maxUploadBytes?: number;
  working: boolean;
  /** An approval card in the conversation waits for the user (a message sent instead ends that turn; the card stays answerable). */
  awaitingApproval?: boolean;
  onUploaded: (entry: TranscriptEntry) => void;
  /** A prompt was accepted (shown as pending until its entry arrives). */
  onSent?: (prompt: { text: string; clientNonce: string }) => void;
  /** Cancels the running turn; absent when the page cannot. */
  onStop?: () => Promise<void>;
}

/** Enter sends; Shift+Enter is a new line, and an IME's Enter ends its composition. */
export function sendsOnEnter(event: KeyboardEvent<HTMLTextAreaElement>): boolean {
  return event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing;
}

export function newNonce(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** The field grows with its text up to this many lines, then scrolls. */
export const MAX_LINES = 8;

export const Composer = forwardRef<HTMLTextAreaElement, ComposerProps>(function Composer(
  {
    client,
    agentId,
    disabledReason,
    maxUploadBytes,
    working,
    awaitingApproval = false,
    onUploaded,
    onSent,
    onStop,
  },
  forwardedRef,
) {
  const [sending, setSending] = useState(false);
  const [stopping, setStopping] = useState(false);
  const [uploading, setUploading] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [files, setFiles] = useState<readonly File[]>([]);
  const [dragging, setDragging] = useState(false);
  const [text, setText] = useState(() => readDraft(agentId));
  const pendingNonce = useRef<{ prompt: string; nonce: string } | null>(null);
  const fileInput = useRef<HTMLInputElement>(null);
  const textarea = useRef<HTMLTextAreaElement | null>(null);
  const disabled = disabledReason !== null;
  const reasonId = useId();

  const setRefs = useCallback(
    (node: HTMLTextAreaElement | null) => {
      textarea.current = node;
      if (typeof forwardedRef === 'function') forwardedRef(node);
      else if (forwardedRef) forwardedRef.current = node;
    },
    [forwardedRef],
  );

  useEffect(() => writeDraft(agentId, text), [agentId, text]);

  // Grow with the text, up to MAX_LINES.
  useLayoutEffect(() => {
    const node = textarea.current;
    if (!node) return;
    const style = getComputedStyle(node);
    const line = parseFloat(style.lineHeight) || 20;
    const chrome =
      parseFloat(style.paddingTop) +
      parseFloat(style.paddingBottom) +
      parseFloat(style.borderTopWidth) +
      parseFloat(style.borderBottomWidth);
    node.style.height = 'auto';
    node.style.height = `${Math.min(node.scrollHeight + parseFloat(style.borderTopWidth) * 2, line * MAX_LINES + chrome)}px`;
  }, [text]);

  function addFiles(list: FileList | readonly File[]): void {
    const all = Array.from(list);
    const added = all.filter((file) => maxUploadBytes === undefined || file.size <= maxUploadBytes);
    const refused = all.filter((file) => !added.includes(file));
    if (refused.length > 0 && maxUploadBytes !== undefined) {
      const names = refused.map((file) => `${file.name} (${formatBytes(file.size)})`).join(', ');
      setError(
        `Not attached: ${names}. sendbox takes files up to ${formatBytes(maxUploadBytes)}; share a smaller file or split it.`,
      );
    } else if (added.length > 0) setError(null);
    if (added.length > 0) setFiles((current) => [...current, ...added]);
  }

  async function send(): Promise<void> {
    const prompt = text.trim();
    if ((prompt === '' && files.length === 0) || sending || disabled) return;
    setSending(true);
    setError(null);
    try {
      // Files first: the host attaches what was uploaded to the next prompt.
      for (const file of files) {
        setUploading(file.name);
        try {
          onUploaded(
            await client.uploadFile({ agentId, file, fileName: file.name, clientNonce: newNonce() }),
          );
        } catch (cause) {
          throw new Error(`${file.name}: ${cause instanceof Error ? cause.message : String(cause)}`, {
            cause,
          });
        }
        setFiles((current) => current.filter((f) => f !== file));
      }
      setUploading(null);
      if (prompt !== '') {
        if (pendingNonce.current?.prompt !== prompt) pendingNonce.current = { prompt, nonce: newNonce() };
        const clientNonce = pendingNonce.current.nonce;
        const result = await client.sendPrompt({ agentId, prompt, clientNonce });
        pendingNonce.current = null;
        if (!result.duplicate) onSent?.({ text: prompt, clientNonce });
        setText((current) => (current.trim() === prompt ? '' : current));
      }
      textarea.current?.focus();
    } catch (cause) {
      setError(cause instanceof Error ? cause.message : String(cause));
    } finally {
      setUploading(null);
      setSending(false);
    }
  }

  async function stop(): Promise<void> {
    if (!onStop) return;
    setStopping(true);
    setError(null);
    try {
      await onStop();
    } catch (cause) {
      setError(cause instanceof Error ? cause.message : String(cause));
    } finally {
      setStopping(false);
    }
  }

  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>): void {
    if (!sendsOnEnter(event)) return;
    event.preventDefault();
    void send();
  }

  function onPaste(event: ClipboardEvent<HTMLTextAreaElement>): void {
    if (event.clipboardData.files.length === 0) return;
    event.preventDefault();
    addFiles(event.clipboardData.files);
  }

  const onDrag = (event: DragEvent<HTMLFormElement>, over: boolean): void => {
    if (disabled || !Array.from(event.dataTransfer.types).includes('Files')) return;
    event.preventDefault();
    setDragging(over);
  };

  return (
    <form
      className={`composer${disabled ? ' disabled' : ''}${dragging ? ' dragging' : ''}`}
      data-testid="composer"
      aria-label="Message the agent"
      onSubmit={(event) => {
        event.preventDefault();
        void send();
      }}
      onDragOver={(event) => onDrag(event, true)}
      onDragLeave={(event) => onDrag(event, false)}
      onDrop={(event) => {
        if (disabled || event.dataTransfer.files.length === 0) return;
        event.preventDefault();
        setDragging(false);
        addFiles(event.dataTransfer.files);
      }}
    >
      <div className="composer-status" aria-live="polite">
        {working && (
          <span className="working" data-testid="working-indicator">
            <span className="working-dot" aria-hidden="true" /> The agent is working…
          </span>
        )}
        {awaitingApproval && !working && (
          <span className="working" data-testid="awaiting-approval">
            The agent waits for your approval of a tool call above.
          </span>
        )}
        {uploading && <span>Uploading {uploading}…</span>}
        {disabledReason && (
          <span className="composer-disabled" id={reasonId} data-testid="composer-disabled">
            {disabledReason}
          </span>
        )}
      </div>
      <ErrorAlert message={error} />
      {files.length > 0 && (
        <ul className="composer-files" aria-label="Files to send">
          {files.map((file, index) => (
            <li key={`${file.name}-${index}`} className="file-chip" data-testid="file-chip">
              <span className="file-chip-name">{file.name}</span>
              <span className="file-chip-size">{formatBytes(file.size)}</span>
              <button
                type="button"
                aria-label={`Remove ${file.name}`}
                onClick={() => setFiles((current) => current.filter((f) => f !== file))}
                disabled={sending}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <div className="composer-row">
        <input
          ref={fileInput}
          type="file"
          multiple
          hidden
          tabIndex={-1}
          onChange={(event) => {
            const input = event.currentTarget;
            if (input.files) addFiles(input.files);
            input.value = '';
          }}
          data-testid="composer-file"
        />
        <button
          type="button"
          className="attach"
          disabled={disabled || sending}
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
          ref={setRefs}
          name="prompt"
          rows={1}
          value={disabled ? '' : text}
          onChange={(event) => setText(event.target.value)}
          placeholder={disabled ? 'Read-only' : working ? 'Queue a message…' : 'Message the agent'}
          aria-label="Message"
          aria-describedby={disabledReason ? reasonId : undefined}
          disabled={disabled}
          onKeyDown={onKeyDown}
          onPaste={onPaste}
          data-testid="composer-input"
        />
        {working && onStop && !disabled && (
          <button
            type="button"
            className="stop"
            onClick={() => void stop()}
            disabled={stopping}
            data-testid="composer-stop"
          >
            {stopping ? 'Stopping…' : 'Stop'}
          </button>
        )}
        <button type="submit" disabled={disabled || sending} data-testid="composer-send">
          {sending ? 'Sending…' : working ? 'Queue' : 'Send'}
        </button>
      </div>
    </form>
  );
});
