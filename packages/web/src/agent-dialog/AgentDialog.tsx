/**
 * One agent's dialog, opened from its menu in the sidebar: three tabs over the shared Dialog.
 * Settings edits what `updateAgent` allows, Routines lists and changes its scheduled runs, Memory
 * shows what it and every agent remember. Tabs follow the WAI-ARIA tabs pattern (arrow keys,
 * Home and End move between them; the tab list is one Tab stop).
 */
import { useId, useRef, useState, type KeyboardEvent } from 'react';
import type { ApiClient } from '../api/client.ts';
import { Dialog } from '../Dialog.tsx';
import { MemoryTab } from './MemoryTab.tsx';
import { RoutinesTab } from './RoutinesTab.tsx';
import { SettingsTab } from './SettingsTab.tsx';

export type AgentDialogTab = 'settings' | 'routines' | 'memory';

const TABS: ReadonlyArray<{ id: AgentDialogTab; label: string }> = [
  { id: 'settings', label: 'Settings' },
  { id: 'routines', label: 'Routines' },
  { id: 'memory', label: 'Memory' },
];

export function AgentDialog({
  client,
  agentId,
  agentName,
  initialTab = 'settings',
  onClose,
  onSaved,
  onOpenEntry,
}: {
  client: ApiClient;
  agentId: string;
  agentName: string;
  initialTab?: AgentDialogTab;
  onClose: () => void;
  /** The agent's settings were saved (the roster shows the new name). */
  onSaved: () => void;
  /** A routine run's link: open the agent's conversation at that entry. */
  onOpenEntry: (entryId: string) => void;
}) {
  const [tab, setTab] = useState<AgentDialogTab>(initialTab);
  const base = useId();
  const list = useRef<HTMLDivElement>(null);

  function onTabKey(event: KeyboardEvent<HTMLDivElement>): void {
    const at = TABS.findIndex((t) => t.id === tab);
    const to =
      event.key === 'ArrowRight'
        ? (at + 1) % TABS.length
        : event.key === 'ArrowLeft'
          ? (at - 1 + TABS.length) % TABS.length
          : event.key === 'Home'
            ? 0
            : event.key === 'End'
              ? TABS.length - 1
              : null;
    if (to === null) return;
    event.preventDefault();
    setTab(TABS[to]!.id);
    list.current?.querySelectorAll<HTMLElement>('[role="tab"]')[to]?.focus();
  }

  return (
    <Dialog
      title={agentName}
      onClose={onClose}
      testId="agent-dialog"
      wide
      initialFocus='[role="tab"][aria-selected="true"]'
    >
      <div
        ref={list}
        className="tabs"
        role="tablist"
        aria-label={`${agentName}: settings, routines and memory`}
        onKeyDown={onTabKey}
      >
        {TABS.map((t) => (
          <button
            key={t.id}
            type="button"
            role="tab"
            id={`${base}-${t.id}-tab`}
            aria-selected={tab === t.id}
            aria-controls={`${base}-${t.id}-panel`}
            tabIndex={tab === t.id ? 0 : -1}
            onClick={() => setTab(t.id)}
            data-testid={`agent-tab-${t.id}`}
          >
            {t.label}
          </button>
        ))}
      </div>
      <div
        role="tabpanel"
        id={`${base}-${tab}-panel`}
        aria-labelledby={`${base}-${tab}-tab`}
        className="tab-panel"
        data-testid={`agent-panel-${tab}`}
      >
        {tab === 'settings' && <SettingsTab client={client} agentId={agentId} onSaved={onSaved} />}
        {tab === 'routines' && <RoutinesTab client={client} agentId={agentId} onOpenEntry={onOpenEntry} />}
        {tab === 'memory' && <MemoryTab client={client} agentId={agentId} />}
      </div>
    </Dialog>
  );
}

/** A gateway error as the user reads it. */
export function errorText(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}
