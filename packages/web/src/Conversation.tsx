/**
 * The open agent: its ledger, live updates and the composer.
 *
 * Large ledgers: the first frame mounts the last `FIRST_PAINT_ROWS` visible entries (more than
 * a screenful), the next one fills the window to `WINDOW_STEP`; older entries are checked only
 * after the first paint. Only the last `WINDOW_STEP` visible entries are mounted; scrolling to the top
 * (or the "Show earlier" button) mounts the previous step while keeping the view still. Each
 * bubble is memoized by entry, so a live entry renders itself and nothing else.
 */
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { parseEntries, parseNewest, type ApiClient } from './api/client.ts';
import { followAgentEvents, type StreamStatus } from './api/events.ts';
import {
  DEFAULT_CURSOR_AGENT_URL,
  type LiveToolView,
  type MessageHit,
  type PendingInput,
  type RosterRow,
  type TaskView,
  type TodoItem,
  type TranscriptEntry,
  type TurnState,
} from './api/types.ts';
import { Bubble } from './bubbles/Bubble.tsx';
import { RunningTasks } from './bubbles/TaskPanel.tsx';
import { LiveToolRow } from './bubbles/LiveToolRow.tsx';
import { hitEntryId } from './hit-place.ts';
import { ModelRetryRow, type HeldRetry } from './bubbles/ModelRetryRow.tsx';
import { TasksContext, type TasksContextValue } from './tasks-context.ts';
import { Composer } from './Composer.tsx';
import { LastPromptActions } from './LastPromptActions.tsx';
import { withdrawnIds } from '@sendbox/protocol';
import { agentTitle } from './agent-title.ts';
import { TodoPanel } from './TodoPanel.tsx';
import { todosOf } from './todos.ts';
import { noPrefetch, type LedgerPrefetch } from './focused-agent.ts';
import { ConversationContext, type ConversationContextValue } from './conversation-context.ts';
import { Lightbox } from './Lightbox.tsx';
import { Markdown } from './markdown.tsx';
import { NavigationContext, type Navigation } from './navigation.ts';
import type { BubbleStyle } from './preferences.ts';
import { isErrorNotice } from './bubbles/NoticeBubble.tsx';
import {
  bubbleKindFor,
  deriveApprovals,
  deriveQuestions,
  hasOpenApproval,
  isShown,
  lastSeq,
  mergeEntries,
  retryableNoticeId,
} from './transcript.ts';
import { ErrorAlert } from './ErrorAlert.tsx';

export const WINDOW_STEP = 200;
/** Rows in the first frame: more than fit a tall screen, a quarter of the window's render cost. */
export const FIRST_PAINT_ROWS = 60;
const NEAR_BOTTOM_PX = 120;

export interface ConversationProps {
  client: ApiClient;
  agent: RosterRow;
  bubbleStyle: BubbleStyle;
  modelConfigured: boolean;
  /** The largest file the box takes (getStatus); the composer refuses a larger one before sending. */
  maxUploadBytes?: number;
  /** The box's link template for cursor-agent cards. */
  cursorAgentUrl?: string;
  onState: (agentId: string, state: TurnState) => void;
  onRosterChange: () => void;
  /** The ledger fetched at page start, if it was for this agent. */
  prefetched?: LedgerPrefetch;
  /** A message search hit in this agent: scrolled to once its entries are in. */
  focusHit?: MessageHit;
  /** An entry to scroll to (a routine run's turn) once it is in; a new object asks again. */
  focusEntry?: { entryId: string };
}

export function Conversation({
  client,
  agent,
  bubbleStyle,
  modelConfigured,
  maxUploadBytes,
  cursorAgentUrl = DEFAULT_CURSOR_AGENT_URL,
  onState,
  onRosterChange,
  prefetched = noPrefetch,
  focusHit,
  focusEntry,
}: ConversationProps) {
  const [entries, setEntries] = useState<readonly TranscriptEntry[]>([]);
  /** Inputs the box accepted whose turn has not started: shown after the conversation, as pending. */
  const [pending, setPending] = useState<readonly PendingInput[]>([]);
  const [todos, setTodos] = useState<readonly TodoItem[]>([]);
  const [secretRequestsNotHeld, setSecretRequestsNotHeld] = useState<ReadonlySet<string>>(new Set());
  const [loading, setLoading] = useState(true);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [streamStatus, setStreamStatus] = useState<{ status: StreamStatus; detail?: string | undefined }>({
    status: 'connecting',
  });
  const [showThinking, setShowThinking] = useState(false);
  const [windowSize, setWindowSize] = useState(FIRST_PAINT_ROWS);
  const [lightbox, setLightbox] = useState<{ src: string; caption: string } | null>(null);
  const [scrollRequest, setScrollRequest] = useState(0);
  /** Prompts this tab sent that are not yet in the ledger: shown queued before the box's inbox event. */
  const [queued, setQueued] = useState<ReadonlyArray<{ text: string; clientNonce: string }>>([]);
  /** The agent's background tasks, by the tool call that started each (`task` events, `listTasks`). */
  const [tasks, setTasks] = useState<ReadonlyMap<string, TaskView>>(new Map());
  /** Steps of subagents seen live, by subagent id. */
  const [childSteps, setChildSteps] = useState<ReadonlyMap<string, readonly TranscriptEntry[]>>(new Map());
  /** send_message texts the model is still writing, by tool call id, in arrival order. */
  const [drafts, setDrafts] = useState<ReadonlyMap<string, string>>(new Map());
  /** Tool calls running now, by call id (their entry replaces them when it arrives). */
  const [liveTools, setLiveTools] = useState<ReadonlyMap<string, LiveToolView>>(new Map());
  /** The model call the box is retrying, if any (`retry` events). */
  const [modelRetry, setModelRetry] = useState<HeldRetry | null>(null);
  /** The reader scrolled up: offer a way back down. */
  const [awayFromBottom, setAwayFromBottom] = useState(false);
  /** Whether older raw entries wait to be checked (first paint of a long ledger). */
  const [olderPending, setOlderPending] = useState(false);
  const olderRaw = useRef<readonly unknown[]>([]);
  /** Set when the newest entries are in; the frame after they paint fills the window. */
  const fillPending = useRef(false);
  const prefetchedRef = useRef(prefetched);
  prefetchedRef.current = prefetched;
  const scroller = useRef<HTMLDivElement>(null);
  const composer = useRef<HTMLTextAreaElement>(null);
  const atBottom = useRef(true);
  // Where this component last put the view when pinning it to the bottom: the scroll event that
  // move fires a frame later, after content may have grown, and must not read as the reader leaving.
  const pinnedTop = useRef<number | null>(null);
  const pinToBottom = (element: HTMLElement): void => {
    element.scrollTop = element.scrollHeight;
    pinnedTop.current = element.scrollTop;
  };
  const anchor = useRef<{ scrollHeight: number; scrollTop: number } | null>(null);
  const pendingScrollTo = useRef<string | null>(null);
  const streamWas = useRef<StreamStatus>('connecting');
  const onStateRef = useRef(onState);
  const onRosterRef = useRef(onRosterChange);
  onStateRef.current = onState;
  onRosterRef.current = onRosterChange;

  // Open the agent (or take the ledger fetched at page start), paint its newest entries,
  // check the older ones once that frame is out, and follow its events from the last seq held.
  useEffect(() => {
    const abort = new AbortController();
    setEntries([]);
    setTodos([]);
    setPending([]);
    setQueued([]);
    setTasks(new Map());
    setChildSteps(new Map());
    setModelRetry(null);
    setLoading(true);
    setLoadError(null);
    setWindowSize(FIRST_PAINT_ROWS);
    setOlderPending(false);
    olderRaw.current = [];
    fillPending.current = false;
    atBottom.current = true;
    void (async () => {
      let raw: readonly unknown[];
      try {
        performance.mark('sendbox:open-agent');
        const opened = await (prefetchedRef.current.take(agent.id) ?? client.openAgentRaw(agent.id));
        raw = opened.entries;
        if (!abort.signal.aborted) {
          setTodos(opened.todos);
          setSecretRequestsNotHeld(new Set(opened.secretRequestsNotHeld));
        }
      } catch (cause) {
        if (!abort.signal.aborted) {
          setLoadError(cause instanceof Error ? cause.message : String(cause));
          setLoading(false);
        }
        return;
      }
      if (abort.signal.aborted) return;
      // Enough checked entries to fill the mounted window; the rest after the first paint.
      const { newest, older } = parseNewest(raw, WINDOW_STEP, 'openAgent');
      // Marks for scripts/measure-paint.ts: fetch + JSON + checking the newest, then first paint.
      performance.measure('sendbox:open-agent', 'sendbox:open-agent');
      setEntries(mergeEntries([], newest));
      setOlderPending(older.length > 0);
      setLoading(false);
      onRosterRef.current();
      // Tasks already running (or just ended) when the page opened; events keep them current.
      client.listTasks(agent.id).then(
        (known) =>
          !abort.signal.aborted &&
          setTasks((current) => {
            const next = new Map(known.map((task) => [task.toolCallId, task]));
            for (const [key, task] of current) next.set(key, task);
            return next;
          }),
        () => undefined,
      );
      olderRaw.current = older;
      fillPending.current = true;
      await followAgentEvents(
        client,
        agent.id,
        lastSeq(newest),
        {
          onEntry: (entry) => {
            setEntries((current) => mergeEntries(current, [entry]));
            const listed = todosOf(entry);
            if (listed) setTodos(listed);
            // A turn that ended (stopped, failed) leaves no draft behind.
            if (entry.kind === 'turn-ended') {
              setDrafts((current) => (current.size === 0 ? current : new Map()));
              setLiveTools((current) => (current.size === 0 ? current : new Map()));
            }
            const callId = (entry as { toolCallId?: unknown }).toolCallId;
            if (entry.kind === 'tool-call' && typeof callId === 'string')
              setLiveTools((current) => {
                if (!current.has(callId)) return current;
                const next = new Map(current);
                next.delete(callId);
                return next;
              });
          },
          onDraft: (toolCallId, text) => {
            setDrafts((current) => {
              if (text === null && !current.has(toolCallId)) return current;
              const next = new Map(current);
              if (text === null) next.delete(toolCallId);
              else next.set(toolCallId, text);
              return next;
            });
          },
          onTool: (tool) =>
            setLiveTools((current) => {
              const next = new Map(current);
              // Over: its ledger entry follows at once and takes the row's place.
              if (tool.running) next.set(tool.toolCallId, tool);
              else next.delete(tool.toolCallId);
              return next;
            }),
          onTask: (task) => setTasks((current) => new Map(current).set(task.toolCallId, task)),
          onSubagentEntry: (subagentId, entry) =>
            setChildSteps((current) =>
              new Map(current).set(subagentId, mergeEntries(current.get(subagentId) ?? [], [entry])),
            ),
          onRetry: (retry) => setModelRetry(retry && { ...retry, until: Date.now() + retry.delayMs }),
          onState: (agentId, state) => {
            if (agentId === agent.id && state !== 'working') setModelRetry(null);
            onStateRef.current(agentId, state);
          },
          onRoster: () => onRosterRef.current(),
          onInbox: (_agentId, inputs) => setPending(inputs),
          onStatus: (status, detail) => {
            // Back after a drop (a box restart): the roster and states may have moved on.
            if (status === 'open' && streamWas.current === 'reconnecting') onRosterRef.current();
            streamWas.current = status;
            setStreamStatus({ status, detail });
          },
        },
        abort.signal,
      );
    })();
    return () => abort.abort();
  }, [client, agent.id]);

  useEffect(() => {
    if (!loading) composer.current?.focus();
  }, [loading, agent.id]);

  // A turn replaced by a regenerated or edited prompt stays in the ledger, withdrawn: not shown.
  const withdrawn = useMemo(() => withdrawnIds(entries), [entries]);
  const visible = useMemo(
    () => entries.filter((entry) => isShown(entry, showThinking) && !withdrawn.has(entry.id)),
    [entries, showThinking, withdrawn],
  );
  const lastPrompt = useMemo(() => {
    for (let i = entries.length - 1; i >= 0; i--) {
      const entry = entries[i]!;
      if (
        entry.kind === 'message' &&
        entry.role === 'user' &&
        typeof entry.clientNonce === 'string' &&
        (entry as { hidden?: unknown }).hidden !== true
      )
        return { id: entry.id, content: entry.content };
    }
    return null;
  }, [entries]);
  const [removeError, setRemoveError] = useState<string | null>(null);
  // The toggle is offered only when there is thinking to show (never on an empty conversation).
  const hasThinking = useMemo(() => entries.some((entry) => bubbleKindFor(entry) === 'thinking'), [entries]);
  const { answers, skipped, answerTexts } = useMemo(() => deriveQuestions(entries), [entries]);
  const retryable = useMemo(() => retryableNoticeId(entries, isErrorNotice), [entries]);
  const approvals = useMemo(() => deriveApprovals(entries), [entries]);
  const awaitingApproval = useMemo(() => hasOpenApproval(entries, approvals), [entries, approvals]);
  const arrivedNonces = useMemo(() => {
    const nonces = new Set<string>();
    for (const entry of entries) {
      if (entry.kind === 'message' && typeof entry.clientNonce === 'string') nonces.add(entry.clientNonce);
    }
    return nonces;
  }, [entries]);
  // What waits for the agent: the box's pending inputs, then prompts sent here it has not listed yet.
  const waiting = useMemo(() => {
    const listed = new Set(pending.map((input) => input.nonce));
    return [
      // An approval's answer shows on its card, not as a message of its own.
      ...pending
        .filter((input) => input.kind !== 'tool-approval')
        .map((input) => ({ nonce: input.nonce, text: input.text })),
      ...queued
        .filter((prompt) => !listed.has(prompt.clientNonce))
        .map((prompt) => ({ nonce: prompt.clientNonce, text: prompt.text })),
    ].filter((input) => !arrivedNonces.has(input.nonce));
  }, [pending, queued, arrivedNonces]);
  /** Queued inputs the box listed (a prompt only this tab knows of yet cannot be removed). */
  const pendingNonces = useMemo(
    () => new Set(pending.filter((input) => input.kind === 'prompt').map((input) => input.nonce)),
    [pending],
  );
  const start = Math.max(0, visible.length - windowSize);
  const rows = visible.slice(start);
  const lastRowId = rows[rows.length - 1]?.id;

  // Keep the view pinned to the bottom as entries arrive, unless the user scrolled up to read;
  // keep it still when earlier entries are mounted above.
  useLayoutEffect(() => {
    const element = scroller.current;
    if (!element) return;
    // Marks for scripts/measure-paint.ts.
    if (!loading && rows.length > 0 && performance.getEntriesByName('sendbox:first-rows').length === 0) {
      performance.mark('sendbox:first-rows');
    }
    if (!loading && fillPending.current) {
      fillPending.current = false;
      // The frame that paints these rows starts now; after it, mount the rest of the window
      // (above: the view stays still) and check the older entries.
      requestAnimationFrame(() => {
        if (performance.getEntriesByName('sendbox:first-frame').length === 0) {
          performance.mark('sendbox:first-frame');
        }
        setTimeout(fillWindow);
      });
    }
    if (
      !loading &&
      rows.length >= Math.min(WINDOW_STEP, visible.length) &&
      performance.getEntriesByName('sendbox:window-filled').length === 0
    ) {
      performance.mark('sendbox:window-filled');
    }
    if (anchor.current) {
      element.scrollTop = anchor.current.scrollTop + (element.scrollHeight - anchor.current.scrollHeight);
      anchor.current = null;
    } else if (atBottom.current) {
      pinToBottom(element);
    }
    const target = pendingScrollTo.current;
    if (target) {
      pendingScrollTo.current = null;
      const node = element.querySelector<HTMLElement>(`[data-entry-id="${CSS.escape(target)}"]`);
      if (node) {
        node.scrollIntoView({ block: 'center' });
        node.classList.add('flash');
        node.setAttribute('tabindex', '-1');
        node.focus({ preventScroll: true });
        setTimeout(() => node.classList.remove('flash'), 1600);
      }
    }
    // windowSize: a window that grew without mounting a row (fewer entries than it holds) still
    // consumes its anchor.
  }, [lastRowId, rows.length, loading, scrollRequest, windowSize, drafts]);

  // Bubbles grow after they are laid out (images and previews load, code is highlighted, off-screen
  // bubbles get their real height), and the view shrinks when a banner or the composer grows: a view
  // that was at the bottom stays there.
  const bubbles = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = scroller.current;
    const content = bubbles.current;
    if (!element || !content) return;
    const observer = new ResizeObserver(() => {
      if (atBottom.current && !pendingScrollTo.current) pinToBottom(element);
    });
    observer.observe(content);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  const fillWindow = useCallback(() => {
    const element = scroller.current;
    if (!element) return; // unmounted meanwhile
    anchor.current = { scrollHeight: element.scrollHeight, scrollTop: element.scrollTop };
    setWindowSize((size) => Math.max(size, WINDOW_STEP));
    const older = olderRaw.current;
    olderRaw.current = [];
    if (older.length > 0) {
      const checked = parseEntries(older, 'openAgent');
      // The held (newer, possibly live-updated) entries win over the older part.
      setEntries((current) => mergeEntries(checked, current));
      setOlderPending(false);
    }
  }, []);

  const showEarlier = useCallback(() => {
    const element = scroller.current;
    if (element) anchor.current = { scrollHeight: element.scrollHeight, scrollTop: element.scrollTop };
    setWindowSize((size) => size + WINDOW_STEP);
  }, []);

  // Mount the previous step when the top sentinel scrolls into view.
  const sentinel = useRef<HTMLDivElement>(null);
  const hasEarlier = start > 0 || olderPending;
  useEffect(() => {
    const node = sentinel.current;
    if (!node || !hasEarlier || loading) return;
    const observer = new IntersectionObserver(
      (records) => {
        if (records.some((record) => record.isIntersecting) && !atBottom.current) showEarlier();
      },
      { root: scroller.current, rootMargin: '400px 0px 0px 0px' },
    );
    observer.observe(node);
    return () => observer.disconnect();
  }, [hasEarlier, loading, showEarlier, start]);

  // Stable for the life of the conversation: a changing context value would re-render every
  // Markdown bubble on each new entry.
  const visibleRef = useRef(visible);
  const windowRef = useRef(windowSize);
  visibleRef.current = visible;
  windowRef.current = windowSize;
  const navigation = useMemo<Navigation>(
    () => ({
      scrollToEntry: (id) => {
        const list = visibleRef.current;
        const index = list.findIndex((entry) => entry.id === id);
        if (index === -1) return;
        pendingScrollTo.current = id;
        atBottom.current = false;
        const needed = list.length - index + 20;
        // Mount it first if it is above the window; the layout effect then scrolls to it.
        setWindowSize(Math.max(windowRef.current, needed));
        setScrollRequest((n) => n + 1);
      },
    }),
    [],
  );

  // A search hit: once every entry is checked (the older ones too), scroll to the one it is.
  const focused = useRef<MessageHit | null>(null);
  useEffect(() => {
    if (!focusHit || focused.current === focusHit || loading || olderPending) return;
    focused.current = focusHit;
    const id = hitEntryId(entries, focusHit);
    if (id !== null) navigation.scrollToEntry(id);
  }, [focusHit, loading, olderPending, entries, navigation]);

  // An entry asked for (a routine run's link): scrolled to once it is among the shown entries.
  const focusedEntry = useRef<{ entryId: string } | null>(null);
  useEffect(() => {
    if (!focusEntry || focusedEntry.current === focusEntry || loading || olderPending) return;
    if (!visible.some((entry) => entry.id === focusEntry.entryId)) return;
    focusedEntry.current = focusEntry;
    navigation.scrollToEntry(focusEntry.entryId);
  }, [focusEntry, loading, olderPending, visible, navigation]);

  const context = useMemo<ConversationContextValue>(
    () => ({
      client,
      agentId: agent.id,
      readOnly: agent.readOnly,
      openLightbox: setLightbox,
      cursorAgentUrl,
      focusComposer: () => composer.current?.focus(),
      secretRequestsNotHeld,
    }),
    [client, agent.id, agent.readOnly, cursorAgentUrl, secretRequestsNotHeld],
  );
  const tasksContext = useMemo<TasksContextValue>(
    () => ({
      byToolCall: tasks,
      childSteps,
      stopTask: async (taskId) => {
        await client.stopTask(agent.id, taskId);
      },
      loadChild: (subagentId) => client.openSubagent(agent.id, subagentId),
    }),
    [tasks, childSteps, client, agent.id],
  );
  const rowToolCalls = useMemo(() => {
    const ids = new Set<string>();
    for (const entry of entries) {
      const id = (entry as { toolCallId?: unknown }).toolCallId;
      if (entry.kind === 'tool-call' && typeof id === 'string') ids.add(id);
    }
    return ids;
  }, [entries]);
  const closeLightbox = useCallback(() => setLightbox(null), []);
  const onSent = useCallback((prompt: { text: string; clientNonce: string }) => {
    atBottom.current = true;
    setQueued((current) => [...current, prompt]);
  }, []);
  const removeQueued = useCallback(
    async (nonce: string) => {
      setRemoveError(null);
      try {
        await client.removeQueuedPrompt({ agentId: agent.id, nonce });
        setPending((current) => current.filter((input) => input.nonce !== nonce));
        setQueued((current) => current.filter((prompt) => prompt.clientNonce !== nonce));
      } catch (cause) {
        setRemoveError(cause instanceof Error ? cause.message : String(cause));
      }
    },
    [client, agent.id],
  );
  const onStop = useCallback(async () => {
    await client.cancelTurn(agent.id);
  }, [client, agent.id]);
  const onUploaded = useCallback((entry: TranscriptEntry) => {
    atBottom.current = true;
    setEntries((current) => mergeEntries(current, [entry]));
  }, []);

  const disabledReason = !modelConfigured
    ? 'No model is set up, so agents cannot answer yet: see "Details" at the top of the page.'
    : agent.readOnly
      ? 'This is a read-only demo agent: it replays a recorded conversation and cannot be prompted. Create an agent to chat.'
      : null;

  return (
    <ConversationContext.Provider value={context}>
      <TasksContext.Provider value={tasksContext}>
        <NavigationContext.Provider value={navigation}>
          <section className="conversation" aria-label={`Conversation with ${agentTitle(agent)}`}>
            <header className="conversation-head">
              <div>
                <h2>{agentTitle(agent)}</h2>
                {agent.description && <p className="description">{agent.description}</p>}
              </div>
              <div className="conversation-tools">
                {streamStatus.status === 'reconnecting' && (
                  <span className="stream-status">Reconnecting…</span>
                )}
                {streamStatus.status === 'stopped' && streamStatus.detail && (
                  <span className="stream-status error" role="alert">
                    Live updates stopped: {streamStatus.detail}
                  </span>
                )}
                {hasThinking && (
                  <button
                    type="button"
                    aria-pressed={showThinking}
                    onClick={() => setShowThinking((on) => !on)}
                    data-testid="thinking-toggle"
                  >
                    {showThinking ? 'Hide thinking' : 'Show thinking'}
                  </button>
                )}
              </div>
            </header>
            <div
              ref={scroller}
              className={`transcript transcript-${bubbleStyle}`}
              data-testid="transcript"
              data-bubble-style={bubbleStyle}
              aria-busy={loading}
              onScroll={(event) => {
                const element = event.currentTarget;
                if (element.scrollTop === pinnedTop.current) return; // our own pin, not the reader
                pinnedTop.current = null;
                atBottom.current =
                  element.scrollHeight - element.scrollTop - element.clientHeight < NEAR_BOTTOM_PX;
                setAwayFromBottom(!atBottom.current);
              }}
            >
              <div ref={sentinel} className="sentinel" />
              {hasEarlier && (
                <button
                  type="button"
                  className="load-earlier"
                  onClick={showEarlier}
                  data-testid="load-earlier"
                >
                  Show earlier messages{start > 0 ? ` (${start} more)` : ''}
                </button>
              )}
              {loading && <p className="placeholder">Loading the conversation…</p>}
              <ErrorAlert message={loadError} />
              {!loading && !loadError && visible.length === 0 && (
                <p className="placeholder">No messages yet. Say hello below.</p>
              )}
              <div ref={bubbles} role="log" aria-live="polite" aria-relevant="additions" className="bubbles">
                {rows.map((entry) => (
                  <Bubble
                    key={entry.id}
                    entry={entry}
                    answer={answers.get(entry.id) ?? answerTexts.get(entry.id)}
                    skipped={skipped.has(entry.id)}
                    retryable={entry.id === retryable}
                    outcome={approvals.get(entry.id)}
                  />
                ))}
                <RunningTasks rowToolCalls={rowToolCalls} />
                {[...liveTools.values()].map((tool) => (
                  <LiveToolRow key={tool.toolCallId} tool={tool} />
                ))}
                {modelRetry && <ModelRetryRow retry={modelRetry} />}
                {[...drafts].map(([toolCallId, text]) => (
                  <article
                    key={toolCallId}
                    className="bubble bubble-text side-agent streaming"
                    data-testid="streaming-bubble"
                    aria-label="Agent: message being written"
                    aria-busy="true"
                  >
                    <Markdown text={text} />
                  </article>
                ))}
                {!loading &&
                  lastPrompt &&
                  disabledReason === null &&
                  agent.state !== 'working' &&
                  !agent.awaitingApproval &&
                  waiting.length === 0 &&
                  drafts.size === 0 &&
                  liveTools.size === 0 && (
                    <LastPromptActions
                      client={client}
                      agentId={agent.id}
                      prompt={lastPrompt}
                      onSent={onSent}
                    />
                  )}
                {waiting.map((input) => (
                  <article
                    key={input.nonce}
                    className="bubble bubble-user-message side-user pending"
                    data-testid="pending-input"
                    aria-label="You: queued message"
                  >
                    <div className="user-text">
                      <span className="pending-tag">Queued</span>
                      {input.text}
                    </div>
                    {pendingNonces.has(input.nonce) && (
                      <button
                        type="button"
                        className="remove-queued"
                        onClick={() => void removeQueued(input.nonce)}
                        aria-label="Remove this queued message"
                        data-testid="remove-queued"
                      >
                        Remove
                      </button>
                    )}
                  </article>
                ))}
                <ErrorAlert message={removeError} testId="remove-queued-error" />
              </div>
              {awayFromBottom && (
                <button
                  type="button"
                  className="jump-latest"
                  onClick={() => {
                    const element = scroller.current;
                    if (!element) return;
                    atBottom.current = true;
                    pinToBottom(element);
                    setAwayFromBottom(false);
                  }}
                  data-testid="jump-latest"
                >
                  ↓ Jump to latest
                </button>
              )}
            </div>
            <TodoPanel todos={todos} />
            <Composer
              ref={composer}
              client={client}
              agentId={agent.id}
              disabledReason={disabledReason}
              {...(maxUploadBytes !== undefined ? { maxUploadBytes } : {})}
              working={agent.state === 'working'}
              awaitingApproval={awaitingApproval}
              onUploaded={onUploaded}
              onSent={onSent}
              onStop={onStop}
            />
          </section>
          {lightbox && <Lightbox src={lightbox.src} caption={lightbox.caption} onClose={closeLightbox} />}
        </NavigationContext.Provider>
      </TasksContext.Provider>
    </ConversationContext.Provider>
  );
}
