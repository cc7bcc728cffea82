/**
 * The agents: title, last entry, unread count, a marker when the agent waits for an answer,
 * and a working dot; create, duplicate and delete (delete asks inline first).
 */
import { memo, useState, type FormEvent } from 'react';
import type { RosterRow } from './api/types.ts';

export interface SidebarProps {
  agents: readonly RosterRow[];
  selectedId: string | null;
  onSelect: (id: string) => void;
  onCreate: (name: string) => Promise<void>;
  onDuplicate: (id: string) => Promise<void>;
  onDelete: (id: string) => Promise<void>;
}

export function Sidebar({ agents, selectedId, onSelect, onCreate, onDuplicate, onDelete }: SidebarProps) {
  const [creating, setCreating] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function run(action: () => Promise<void>): Promise<void> {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (cause) {
      setError(cause instanceof Error ? cause.message : String(cause));
    } finally {
      setBusy(false);
    }
  }

  function create(event: FormEvent<HTMLFormElement>): void {
    event.preventDefault();
    const input = event.currentTarget.elements.namedItem('name');
    const name = input instanceof HTMLInputElement ? input.value.trim() : '';
    if (name === '') return;
    void run(async () => {
      await onCreate(name);
      setCreating(false);
    });
  }

  const sorted = [...agents].sort((a, b) => b.lastActivityAt - a.lastActivityAt);
  return (
    <nav className="sidebar" aria-label="Agents">
      <div className="sidebar-head">
        <h1 className="brand">sendbox</h1>
        <button
          type="button"
          onClick={() => setCreating((open) => !open)}
          aria-expanded={creating}
          data-testid="new-agent"
        >
          New agent
        </button>
      </div>
      {creating && (
        <form className="create-agent" onSubmit={create}>
          <input
            name="name"
            aria-label="New agent name"
            placeholder="Name"
            maxLength={120}
            required
            autoFocus
            data-testid="new-agent-name"
            onKeyDown={(event) => {
              if (event.key === 'Escape') setCreating(false);
            }}
          />
          <button type="submit" disabled={busy} data-testid="new-agent-create">
            Create
          </button>
        </form>
      )}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <ul className="agent-list">
        {sorted.map((agent) => (
          <AgentRow
            key={agent.id}
            agent={agent}
            selected={agent.id === selectedId}
            busy={busy}
            onSelect={onSelect}
            onDuplicate={(id) => void run(() => onDuplicate(id))}
            onDelete={(id) => void run(() => onDelete(id))}
          />
        ))}
        {sorted.length === 0 && <li className="empty">No agents yet. Create one to start.</li>}
      </ul>
    </nav>
  );
}

const AgentRow = memo(function AgentRow({
  agent,
  selected,
  busy,
  onSelect,
  onDuplicate,
  onDelete,
}: {
  agent: RosterRow;
  selected: boolean;
  busy: boolean;
  onSelect: (id: string) => void;
  onDuplicate: (id: string) => void;
  onDelete: (id: string) => void;
}) {
  const [confirming, setConfirming] = useState(false);
  const unread = !selected && (agent.unreadCount > 0 || agent.hasUnread);
  return (
    <li
      className={`agent-row${selected ? ' selected' : ''}`}
      data-testid="agent-row"
      data-agent-id={agent.id}
      data-state={agent.state}
    >
      <button
        type="button"
        className="agent-open"
        aria-current={selected ? 'page' : undefined}
        onClick={() => onSelect(agent.id)}
        aria-label={`${agent.name}${unread ? `, ${agent.unreadCount || 'new'} unread` : ''}${agent.awaitingUserResponse ? ', waiting for your answer' : ''}${agent.state === 'working' ? ', working' : ''}`}
      >
        <span className="agent-title">
          {agent.state === 'working' && <span className="working-dot" aria-hidden="true" />}
          <span className="agent-name">{agent.name}</span>
          {agent.readOnly && <span className="tag">demo</span>}
        </span>
        <span className="agent-last">{agent.lastEntry?.text ?? agent.description}</span>
        <span className="agent-badges">
          {agent.awaitingUserResponse && (
            <span className="awaiting" data-testid="agent-awaiting" title="Waiting for your answer">
              Your turn
            </span>
          )}
          {unread && (
            <span className="unread" data-testid="agent-unread">
              {agent.unreadCount > 0 ? agent.unreadCount : '•'}
            </span>
          )}
        </span>
      </button>
      {confirming ? (
        <div className="agent-confirm" role="group" aria-label={`Delete ${agent.name}?`}>
          <span>Delete?</span>
          <button
            type="button"
            className="danger"
            disabled={busy}
            data-testid="agent-delete-confirm"
            onClick={() => {
              setConfirming(false);
              onDelete(agent.id);
            }}
          >
            Delete
          </button>
          <button type="button" onClick={() => setConfirming(false)} autoFocus>
            Keep
          </button>
        </div>
      ) : (
        <div className="agent-actions">
          <button
            type="button"
            disabled={busy}
            aria-label={`Duplicate ${agent.name}`}
            data-testid="agent-duplicate"
            onClick={() => onDuplicate(agent.id)}
          >
            Duplicate
          </button>
          <button
            type="button"
            disabled={busy}
            aria-label={`Delete ${agent.name}`}
            data-testid="agent-delete"
            onClick={() => setConfirming(true)}
          >
            Delete
          </button>
        </div>
      )}
    </li>
  );
});
