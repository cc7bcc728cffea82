/**
 * The page: the model banner, the agents sidebar, the open conversation, and the theme and
 * bubble-style switches. The open agent is kept in the URL hash so a reload returns to it,
 * and in localStorage so the next visit starts fetching its ledger at once (focused-agent.ts).
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, type ApiClient } from './api/client.ts';
import { followAgentEvents } from './api/events.ts';
import type { MessageHit, RosterRow, StatusResponse, TurnState } from './api/types.ts';
import { Conversation } from './Conversation.tsx';
import {
  agentIdFromHash,
  noPrefetch,
  rememberAgentId,
  rememberedAgentId,
  type LedgerPrefetch,
} from './focused-agent.ts';
import { McpPanel } from './McpPanel.tsx';
import { NewConversation } from './NewConversation.tsx';
import { NotificationSettings } from './NotificationSettings.tsx';
import { useAgentNotifications } from './notifications.ts';
import { nextTheme, useBubbleStyle, useNotificationChoice, useTheme } from './preferences.ts';
import { AgentDialog } from './agent-dialog/AgentDialog.tsx';
import { SettingsPanel } from './SettingsPanel.tsx';
import { SetupNotice } from './SetupNotice.tsx';
import { Sidebar } from './Sidebar.tsx';
import { useNarrow } from './viewport.ts';

const ROSTER_POLL_MS = 20_000;

export function App({
  client,
  prefetch = noPrefetch,
  onSignOut,
}: {
  client: ApiClient;
  prefetch?: LedgerPrefetch | undefined;
  /** Ends this browser's session (the toolbar's Sign out). */
  onSignOut?: () => Promise<void>;
}) {
  const [status, setStatus] = useState<StatusResponse | null>(null);
  const [statusError, setStatusError] = useState<string | null>(null);
  const [agents, setAgents] = useState<RosterRow[] | null>(null);
  const [selectedId, setSelectedId] = useState<string | null>(rememberedAgentId);
  /** A message search hit picked in the sidebar: its agent opens scrolled to it. */
  const [focusHit, setFocusHit] = useState<MessageHit | null>(null);
  /** A routine run picked in the agent dialog: its agent opens scrolled to the turn it opened. */
  const [focusEntry, setFocusEntry] = useState<{ agentId: string; entryId: string } | null>(null);
  const theme = useTheme();
  const [bubbleStyle, setBubbleStyle] = useBubbleStyle();
  const [notificationChoice, setNotificationChoice] = useNotificationChoice();
  const refreshTimer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const narrow = useNarrow();
  /** On a phone the agent list is a drawer over the conversation. */
  const [drawerOpen, setDrawerOpen] = useState(false);
  const [settingsOpen, setSettingsOpen] = useState(false);
  const closeSettings = useCallback(() => setSettingsOpen(false), []);
  /** The agent whose dialog (settings, routines, memory) is open. */
  const [dialogAgentId, setDialogAgentId] = useState<string | null>(null);
  const closeAgentDialog = useCallback(() => setDialogAgentId(null), []);
  const [connectorsOpen, setConnectorsOpen] = useState(false);
  const closeConnectors = useCallback(() => setConnectorsOpen(false), []);
  const drawerButton = useRef<HTMLButtonElement>(null);
  const select = useCallback((id: string | null) => {
    setSelectedId(id);
    setDrawerOpen(false);
  }, []);

  const refreshRoster = useCallback(async () => {
    try {
      const rows = await client.listAgents();
      setAgents(rows);
      setStatusError(null);
      // The model may have changed (settings, or a restart with other environment variables).
      setStatus(await client.getStatus());
    } catch (cause) {
      setStatusError(
        cause instanceof ApiError && cause.status === 0
          ? 'The box is not reachable (restarting?). Retrying…'
          : cause instanceof Error
            ? cause.message
            : String(cause),
      );
    }
  }, [client]);

  /** Coalesces bursts of roster events into one `listAgents`. */
  const scheduleRosterRefresh = useCallback(() => {
    if (refreshTimer.current) clearTimeout(refreshTimer.current);
    refreshTimer.current = setTimeout(() => void refreshRoster(), 250);
  }, [refreshRoster]);

  useEffect(() => {
    client.getStatus().then(setStatus, (cause: unknown) => setStatusError(String(cause)));
    void refreshRoster();
    const timer = setInterval(() => void refreshRoster(), ROSTER_POLL_MS);
    return () => clearInterval(timer);
  }, [client, refreshRoster]);

  // Default to the most recent agent; drop a selection whose agent is gone.
  useEffect(() => {
    if (!agents) return;
    if (selectedId && agents.some((agent) => agent.id === selectedId)) return;
    const latest = [...agents].sort((a, b) => b.lastActivityAt - a.lastActivityAt)[0];
    setSelectedId(latest?.id ?? null);
  }, [agents, selectedId]);

  // A hash the user typed, followed or went back to opens its agent: without this the next
  // roster refresh would write the old agent's hash back over it. The event's own URL is read,
  // not the address bar: a roster refresh landing between the navigation and this event writes
  // the open agent's hash back (the effect below), and reading the bar would then reopen it.
  useEffect(() => {
    const follow = (event: HashChangeEvent) => {
      const id = agentIdFromHash(new URL(event.newURL).hash);
      if (id) select(id);
    };
    window.addEventListener('hashchange', follow);
    return () => window.removeEventListener('hashchange', follow);
  }, [select]);

  useEffect(() => {
    const hash = selectedId ? `#agent=${encodeURIComponent(selectedId)}` : '';
    if (window.location.hash !== hash) history.replaceState(null, '', hash || window.location.pathname);
    // Only once the roster confirms it: a stale remembered id must not outlive its agent.
    if (agents) rememberAgentId(selectedId);
  }, [selectedId, agents]);

  const onState = useCallback((agentId: string, state: TurnState) => {
    setAgents(
      (rows) =>
        rows?.map((row) => (row.id === agentId && row.state !== state ? { ...row, state } : row)) ?? rows,
    );
  }, []);

  // While no agent is open, a roster-only stream keeps the sidebar live (an open agent's
  // stream carries the same state and roster events).
  useEffect(() => {
    if (selectedId) return;
    const abort = new AbortController();
    void followAgentEvents(
      client,
      null,
      0,
      {
        onEntry: () => undefined,
        onState,
        onRoster: scheduleRosterRefresh,
        onStatus: (streamStatus) => {
          if (streamStatus === 'open') scheduleRosterRefresh();
        },
      },
      abort.signal,
    );
    return () => abort.abort();
  }, [client, selectedId, onState, scheduleRosterRefresh]);

  useAgentNotifications(agents, notificationChoice, client.listAgents);

  const selected = agents?.find((agent) => agent.id === selectedId) ?? null;
  // A deleted agent's dialog closes.
  const dialogAgent = agents?.find((agent) => agent.id === dialogAgentId) ?? null;
  const unreadElsewhere = (agents ?? []).reduce(
    (sum, agent) => sum + (agent.id === selectedId ? 0 : agent.unreadCount),
    0,
  );
  const model = status?.model;
  const sandbox = status?.sandbox;

  // The tab says how much is waiting elsewhere, like a mail or chat client.
  useEffect(() => {
    document.title = unreadElsewhere > 0 ? `(${unreadElsewhere}) sendbox` : 'sendbox';
  }, [unreadElsewhere]);

  const drawer = narrow && drawerOpen;
  const closeDrawer = () => {
    setDrawerOpen(false);
    drawerButton.current?.focus();
  };

  return (
    <div className={`app${narrow ? ' narrow' : ''}`}>
      {model && !model.configured && (
        <SetupNotice model={model} onOpenSettings={() => setSettingsOpen(true)} />
      )}
      {settingsOpen && (
        <SettingsPanel client={client} onClose={closeSettings} onSaved={() => void refreshRoster()} />
      )}
      {dialogAgent && (
        <AgentDialog
          key={dialogAgent.id}
          client={client}
          agentId={dialogAgent.id}
          agentName={dialogAgent.name}
          onClose={closeAgentDialog}
          onSaved={() => void refreshRoster()}
          onOpenEntry={(entryId) => {
            setDialogAgentId(null);
            setFocusEntry({ agentId: dialogAgent.id, entryId });
            select(dialogAgent.id);
          }}
        />
      )}
      {connectorsOpen && (
        <McpPanel
          client={client}
          agent={selected && !selected.readOnly ? { id: selected.id, name: selected.name } : null}
          onClose={closeConnectors}
        />
      )}
      {sandbox && !sandbox.confined && (
        // Permanent while it holds: an unconfined box is a standing risk, not a passing event.
        <section className="banner error" role="alert" data-testid="sandbox-banner">
          <strong>
            {sandbox.mode === 'unsafe-host' ? 'Tools run unconfined.' : 'The shell tool is disabled.'}
          </strong>{' '}
          {sandbox.detail}
          {sandbox.fix && <pre>{sandbox.fix}</pre>}
        </section>
      )}
      {statusError && (
        <section className="banner error" role="alert" data-testid="gateway-error">
          {statusError}
        </section>
      )}
      <div className="layout">
        {drawer && <div className="drawer-backdrop" onClick={closeDrawer} aria-hidden="true" />}
        <Sidebar
          agents={agents ?? []}
          selectedId={selectedId}
          hidden={narrow && !drawerOpen}
          drawer={drawer}
          onClose={closeDrawer}
          onSelect={select}
          searchMessages={client.searchMessages}
          onOpenHit={(hit) => {
            setFocusHit(hit);
            select(hit.agentId);
          }}
          onCreate={async (name) => {
            const agent = await client.createAgent(name === '' ? {} : { name });
            setAgents((rows) => [agent, ...(rows ?? []).filter((row) => row.id !== agent.id)]);
            select(agent.id);
          }}
          onDuplicate={async (id) => {
            const agent = await client.duplicateAgent(id);
            setAgents((rows) => [agent, ...(rows ?? []).filter((row) => row.id !== agent.id)]);
            select(agent.id);
          }}
          onSettings={setDialogAgentId}
          onDelete={async (id) => {
            await client.deleteAgent(id);
            setAgents((rows) => rows?.filter((row) => row.id !== id) ?? rows);
            if (selectedId === id) setSelectedId(null);
          }}
        />
        <main className="main">
          <div className="toolbar" role="toolbar" aria-label="Display">
            {narrow && (
              <button
                ref={drawerButton}
                type="button"
                className="drawer-button"
                aria-expanded={drawerOpen}
                onClick={() => setDrawerOpen((open) => !open)}
                data-testid="agents-drawer-button"
              >
                Agents
                {unreadElsewhere > 0 && (
                  <span className="unread" aria-label={`${unreadElsewhere} unread`}>
                    {unreadElsewhere}
                  </span>
                )}
              </button>
            )}
            <span className="toolbar-spacer" />
            <button
              type="button"
              aria-haspopup="dialog"
              onClick={() => setSettingsOpen(true)}
              title={
                model?.configured ? `Model: ${model.provider ?? ''} ${model.model ?? ''}` : 'No model set up'
              }
              data-testid="settings-open"
            >
              Model
            </button>
            <NotificationSettings choice={notificationChoice} onChange={setNotificationChoice} />
            <button
              type="button"
              aria-haspopup="dialog"
              onClick={() => setConnectorsOpen(true)}
              title="Connectors: the MCP servers agents can use, and the box secrets"
              data-testid="connectors-open"
            >
              Connectors
            </button>
            <button
              type="button"
              onClick={() => setBubbleStyle(bubbleStyle === 'cards' ? 'plain' : 'cards')}
              title={`Bubble style: ${bubbleStyle}. Switch to ${bubbleStyle === 'cards' ? 'plain' : 'cards'}`}
              data-testid="bubble-style-toggle"
              data-style={bubbleStyle}
            >
              {bubbleStyle === 'cards' ? 'Cards' : 'Plain'}
            </button>
            <button
              type="button"
              onClick={() => theme.setChoice(nextTheme(theme.choice, theme.system))}
              title={`Theme: ${theme.choice}${theme.choice === 'system' ? ` (${theme.applied})` : ''}. Switch to ${nextTheme(theme.choice, theme.system)}`}
              data-testid="theme-toggle"
              data-theme-choice={theme.choice}
            >
              {theme.choice === 'system'
                ? narrow
                  ? 'Auto'
                  : `Auto (${theme.applied})`
                : theme.choice === 'light'
                  ? 'Light'
                  : 'Dark'}
            </button>
            {onSignOut && (
              <button
                type="button"
                onClick={() => {
                  onSignOut().catch((cause: unknown) =>
                    setStatusError(
                      `Could not sign out: ${cause instanceof Error ? cause.message : String(cause)}`,
                    ),
                  );
                }}
                title="Sign this browser out of sendbox (every tab of it)"
                data-testid="sign-out"
              >
                Sign out
              </button>
            )}
            {status && !narrow && <span className="version">sendbox {status.version}</span>}
          </div>
          {selected ? (
            <Conversation
              key={selected.id}
              client={client}
              agent={selected}
              bubbleStyle={bubbleStyle}
              modelConfigured={model?.configured ?? true}
              {...(status ? { cursorAgentUrl: status.links.cursorAgent } : {})}
              {...(status?.limits ? { maxUploadBytes: status.limits.uploadBytes } : {})}
              onState={onState}
              onRosterChange={scheduleRosterRefresh}
              prefetched={prefetch}
              {...(focusHit?.agentId === selected.id ? { focusHit } : {})}
              {...(focusEntry?.agentId === selected.id ? { focusEntry } : {})}
            />
          ) : agents !== null && agents.length === 0 && model?.configured === true ? (
            <NewConversation
              client={client}
              onStarted={(agent) => {
                setAgents((rows) => [agent, ...(rows ?? []).filter((row) => row.id !== agent.id)]);
                select(agent.id);
              }}
            />
          ) : (
            <p className="placeholder center">
              {agents === null ? 'Loading agents…' : 'Pick an agent on the left, or create one.'}
            </p>
          )}
        </main>
      </div>
    </div>
  );
}
