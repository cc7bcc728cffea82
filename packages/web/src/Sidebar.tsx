/**
 * The agents: name, the last visible entry and its age, unread count and the turn state
 * (working / waiting for you; nothing on read-only agents); a filter box; create, and per row a
 * menu with settings (the agent dialog), duplicate and delete (delete asks inline first). On a phone it is a drawer
 * (App opens it with the "Agents" button); Esc closes it.
 */
import { memo, useEffect, useMemo, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import type { MessageHit, RosterRow } from './api/types.ts';
import { MessageHits, useMessageSearch } from './MessageHits.tsx';
import { fullTime, relativeTime } from './relative-time.ts';
import { agentTitle } from './agent-title.ts';
import { previewLine } from './preview-line.ts';
import { ErrorAlert } from './ErrorAlert.tsx';

export interface SidebarProps {
  agents: readonly RosterRow[];
  selectedId: string | null;
  /** Hidden (a closed drawer on a phone). */
  hidden?: boolean;
  /** Shown as a drawer over the conversation. */
  drawer?: boolean;
  onClose?: () => void;
  onSelect: (id: string) => void;
  /** An empty name: the agent is named from its first message. */
  onCreate: (name: string) => Promise<void>;
  onDuplicate: (id: string) => Promise<void>;
  onDelete: (id: string) => Promise<void>;
  /** Opens the agent's dialog (settings, routines, memory). */
  onSettings?: (id: string) => void;
  /** Searches every agent's messages (the filter box's text); absent: names only. */
  searchMessages?: (query: string) => Promise<MessageHit[]>;
  /** A message hit was picked: open its agent at that message. */
  onOpenHit?: (hit: MessageHit) => void;
}

/** Re-renders every 30 s so relative times stay true. */
function useNow(): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 30_000);
    return () => clearInterval(timer);
  }, []);
  return now;
}

export function Sidebar({
  agents,
  selectedId,
  hidden = false,
  drawer = false,
  onClose,
  onSelect,
  onCreate,
  onDuplicate,
  onDelete,
  onSettings,
  searchMessages,
  onOpenHit,
}: SidebarProps) {
  const [creating, setCreating] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [filter, setFilter] = useState('');
  const found = useMessageSearch(filter, searchMessages);
  const now = useNow();
  const nav = useRef<HTMLElement>(null);

  useEffect(() => {
    if (drawer)
      nav.current?.querySelector<HTMLElement>('[aria-current="page"], .agent-open, button')?.focus();
  }, [drawer]);

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
    // Empty: the agent is named from its first message.
    const name = input instanceof HTMLInputElement ? input.value.trim() : '';
    void run(async () => {
      await onCreate(name);
      setCreating(false);
    });
  }

  const needle = filter.trim().toLowerCase();
  const sorted = [...agents]
    .filter(
      (agent) =>
        needle === '' ||
        agent.name.toLowerCase().includes(needle) ||
        (agent.lastEntry?.text ?? agent.description).toLowerCase().includes(needle),
    )
    .sort((a, b) => b.lastActivityAt - a.lastActivityAt);
  return (
    <nav
      ref={nav}
      className={`sidebar${drawer ? ' drawer' : ''}`}
      aria-label="Agents"
      hidden={hidden}
      data-testid="sidebar"
      onKeyDown={(event) => {
        if (drawer && event.key === 'Escape' && !event.defaultPrevented) onClose?.();
      }}
    >
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
        {drawer && (
          <button type="button" className="drawer-close" aria-label="Close the agent list" onClick={onClose}>
            ×
          </button>
        )}
      </div>
      {creating && (
        <form className="create-agent" onSubmit={create}>
          <input
            name="name"
            aria-label="New agent name (optional)"
            placeholder="Name (optional)"
            maxLength={120}
            autoFocus
            data-testid="new-agent-name"
            onKeyDown={(event) => {
              if (event.key === 'Escape') {
                event.preventDefault();
                setCreating(false);
              }
            }}
          />
          <button type="submit" disabled={busy} data-testid="new-agent-create">
            Create
          </button>
        </form>
      )}
      {agents.length > 0 && (
        <div className="agent-filter">
          <input
            type="search"
            value={filter}
            onChange={(event) => {
              performance.mark('sendbox:search-input');
              setFilter(event.target.value);
            }}
            placeholder="Filter agents, search messages"
            aria-label="Filter agents and search their messages"
            data-testid="agent-filter"
          />
        </div>
      )}
      <ErrorAlert message={error} />
      <ul className="agent-list">
        {sorted.map((agent) => (
          <AgentRow
            key={agent.id}
            agent={agent}
            now={now}
            selected={agent.id === selectedId}
            busy={busy}
            onSelect={onSelect}
            onDuplicate={(id) => void run(() => onDuplicate(id))}
            onDelete={(id) => void run(() => onDelete(id))}
            {...(onSettings ? { onSettings } : {})}
          />
        ))}
        {agents.length === 0 && <li className="empty">No agents yet. Create one to start.</li>}
        {agents.length > 0 && sorted.length === 0 && (
          <li className="empty" data-testid="agent-filter-empty">
            No agent name matches “{filter.trim()}”.
          </li>
        )}
      </ul>
      <MessageHits state={found} agents={agents} onOpen={(hit) => onOpenHit?.(hit)} />
    </nav>
  );
}

/** What the row says about the turn: nothing for read-only agents, which never take one. */
export function rowState(agent: RosterRow): { label: string; className: string } | null {
  if (agent.readOnly) return null;
  // A running turn that waits on an approval card waits for the user, whatever its state says.
  if (agent.awaitingApproval) return { label: 'Waiting for approval', className: 'state-awaiting' };
  if (agent.state === 'working') return { label: 'Working', className: 'state-working' };
  if (agent.state === 'awaiting-user') return { label: 'Waiting for you', className: 'state-awaiting' };
  return null;
}

const AgentRow = memo(function AgentRow({
  agent,
  now,
  selected,
  busy,
  onSelect,
  onDuplicate,
  onDelete,
  onSettings,
}: {
  agent: RosterRow;
  now: number;
  selected: boolean;
  busy: boolean;
  onSelect: (id: string) => void;
  onDuplicate: (id: string) => void;
  onDelete: (id: string) => void;
  onSettings?: (id: string) => void;
}) {
  const [confirming, setConfirming] = useState(false);
  const unreadCount = selected ? 0 : agent.unreadCount;
  const unread = !selected && (agent.unreadCount > 0 || agent.hasUnread);
  const state = rowState(agent);
  // A preview line in plain words (never raw Markdown); a 1 MB message is not laid out here.
  const last = useMemo(
    () => previewLine(agent.lastEntry?.text || agent.description),
    [agent.lastEntry?.text, agent.description],
  );
  // Said after the visible text (the button's name must start with what it shows).
  const spoken = [
    unread ? `${unreadCount || 'new'} unread` : '',
    agent.readOnly ? 'read-only' : state ? '' : 'idle',
  ]
    .filter(Boolean)
    .join(', ');
  return (
    <li
      className={`agent-row${selected ? ' selected' : ''}`}
      data-testid="agent-row"
      data-agent-id={agent.id}
      data-state={agent.readOnly ? 'read-only' : agent.state}
    >
      <button
        type="button"
        className="agent-open"
        aria-current={selected ? 'page' : undefined}
        onClick={() => onSelect(agent.id)}
      >
        <span className="agent-title">
          {state?.className === 'state-working' && <span className="working-dot" aria-hidden="true" />}
          <span className="agent-name">{agentTitle(agent)}</span>
        </span>
        {agent.lastActivityAt > 0 && (
          <time
            className="agent-time"
            dateTime={new Date(agent.lastActivityAt).toISOString()}
            title={fullTime(agent.lastActivityAt)}
            data-testid="agent-time"
          >
            {relativeTime(agent.lastActivityAt, now)}
          </time>
        )}
        <span className="agent-last" data-testid="agent-last">
          {last}
        </span>
        <span className="agent-badges">
          {state && (
            <span className={`agent-state ${state.className}`} data-testid="agent-state">
              {state.label}
            </span>
          )}
          {unread && (
            <span className="unread" data-testid="agent-unread" aria-hidden="true">
              {unreadCount > 0 ? unreadCount : '•'}
            </span>
          )}
        </span>
        {spoken && <span className="sr-only">, {spoken}</span>}
      </button>
      {confirming ? (
        <div className="agent-confirm" role="group" aria-label={`Delete ${agentTitle(agent)}?`}>
          <span>Delete {agentTitle(agent)}?</span>
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
        <RowMenu
          name={agentTitle(agent)}
          busy={busy}
          onDuplicate={() => onDuplicate(agent.id)}
          onDelete={() => setConfirming(true)}
          {...(onSettings ? { onSettings: () => onSettings(agent.id) } : {})}
        />
      )}
    </li>
  );
});

/** The row's "⋯" menu: a menu button with arrow-key navigation; Esc or a click outside closes it. */
function RowMenu({
  name,
  busy,
  onDuplicate,
  onDelete,
  onSettings,
}: {
  name: string;
  busy: boolean;
  onDuplicate: () => void;
  onDelete: () => void;
  onSettings?: () => void;
}) {
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (!open) return;
    menu.current?.querySelector<HTMLElement>('[role="menuitem"]')?.focus();
    const onPointer = (event: PointerEvent) => {
      if (!menu.current?.contains(event.target as Node) && event.target !== button.current) setOpen(false);
    };
    document.addEventListener('pointerdown', onPointer);
    return () => document.removeEventListener('pointerdown', onPointer);
  }, [open]);

  function close(): void {
    setOpen(false);
    button.current?.focus();
  }

  function onMenuKey(event: KeyboardEvent<HTMLDivElement>): void {
    const items = Array.from(menu.current?.querySelectorAll<HTMLElement>('[role="menuitem"]') ?? []);
    const at = items.indexOf(document.activeElement as HTMLElement);
    if (event.key === 'Escape') {
      event.preventDefault();
      close();
    } else if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      const step = event.key === 'ArrowDown' ? 1 : -1;
      items[(at + step + items.length) % items.length]?.focus();
    } else if (event.key === 'Tab') {
      setOpen(false);
    }
  }

  const pick = (action: () => void) => () => {
    setOpen(false);
    action();
  };
  return (
    <div className="agent-menu">
      <button
        ref={button}
        type="button"
        className="agent-menu-button"
        aria-haspopup="menu"
        aria-expanded={open}
        aria-label={`Actions for ${name}`}
        disabled={busy}
        onClick={() => setOpen((value) => !value)}
        data-testid="agent-menu"
      >
        ⋯
      </button>
      {open && (
        <div ref={menu} className="menu" role="menu" aria-label={`Actions for ${name}`} onKeyDown={onMenuKey}>
          {onSettings && (
            <button
              type="button"
              role="menuitem"
              aria-haspopup="dialog"
              onClick={pick(onSettings)}
              data-testid="agent-settings"
            >
              Settings, routines, memory…
            </button>
          )}
          <button type="button" role="menuitem" onClick={pick(onDuplicate)} data-testid="agent-duplicate">
            Duplicate
          </button>
          <button
            type="button"
            role="menuitem"
            className="danger"
            onClick={pick(onDelete)}
            data-testid="agent-delete"
          >
            Delete…
          </button>
        </div>
      )}
    </div>
  );
}
