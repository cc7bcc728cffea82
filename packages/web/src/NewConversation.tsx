/**
 * What a box with a model and no agent opens on: a conversation ready to type into, as a chat app
 * opens on a new chat. The first message creates an untitled agent (the box names it from that
 * message) and sends the message to it; nothing is created until the user sends.
 */
import { useRef, useState, type KeyboardEvent } from 'react';
import type { ApiClient } from './api/client.ts';
import type { RosterRow } from './api/types.ts';
import { newNonce, sendsOnEnter } from './Composer.tsx';
import { ErrorAlert } from './ErrorAlert.tsx';

export function NewConversation({
  client,
  onStarted,
}: {
  client: ApiClient;
  /** The agent the first message created, once the message is accepted. */
  onStarted: (agent: RosterRow) => void;
}) {
  const [text, setText] = useState('');
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  /** Kept across a failed send: a retry reuses the agent and the nonce, so nothing is made twice. */
  const started = useRef<{ agent: RosterRow; prompt: string; nonce: string } | null>(null);

  async function send(): Promise<void> {
    const prompt = text.trim();
    if (prompt === '' || sending) return;
    setSending(true);
    setError(null);
    try {
      const agent = started.current?.agent ?? (await client.createAgent({}));
      if (started.current?.prompt !== prompt) started.current = { agent, prompt, nonce: newNonce() };
      await client.sendPrompt({ agentId: agent.id, prompt, clientNonce: started.current.nonce });
      onStarted(agent);
    } catch (cause) {
      setError(cause instanceof Error ? cause.message : String(cause));
      setSending(false);
    }
  }

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (!sendsOnEnter(event)) return;
    event.preventDefault();
    void send();
  };

  return (
    <section className="new-conversation" aria-label="New conversation" data-testid="new-conversation">
      <div className="new-conversation-lead">
        <h2>New conversation</h2>
        <p>Ask anything. The agent is named from your first message; you can rename it later.</p>
      </div>
      <form
        className="composer"
        aria-label="Message a new agent"
        onSubmit={(event) => {
          event.preventDefault();
          void send();
        }}
      >
        <ErrorAlert message={error} />
        <div className="composer-row">
          <textarea
            name="prompt"
            rows={1}
            value={text}
            autoFocus
            onChange={(event) => setText(event.target.value)}
            onKeyDown={onKeyDown}
            placeholder="Message a new agent"
            aria-label="Message"
            data-testid="new-conversation-input"
          />
          <button type="submit" disabled={sending || text.trim() === ''} data-testid="new-conversation-send">
            {sending ? 'Sending…' : 'Send'}
          </button>
        </div>
      </form>
    </section>
  );
}
