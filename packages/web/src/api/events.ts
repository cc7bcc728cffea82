/**
 * The gateway's event stream (docs/gateway.md "Events"), read with `fetch` so this tab's
 * session proof can be sent (EventSource cannot set a header); with the cookie it signs the stream in. A small SSE parser that follows the WHATWG
 * event-stream rules, and a reader that resumes with `after=<last seq>` after a drop.
 */
import type { ApiClient } from './client.ts';
import {
  inboxEventSchema,
  draftEventSchema,
  retryEventSchema,
  type ModelRetryView,
  toolEventSchema,
  type LiveToolView,
  subagentEntryEventSchema,
  taskEventSchema,
  type TaskView,
  parseEntry,
  rosterEventSchema,
  routinesEventSchema,
  stateEventSchema,
  type PendingInput,
  type TranscriptEntry,
  type TurnState,
} from './types.ts';

export interface SseMessage {
  event: string;
  data: string;
  /** The last `id:` seen on the stream so far (it persists across messages). */
  lastEventId: string;
}

/**
 * Incremental SSE parser: feed it text chunks as they arrive (split anywhere, even inside a
 * CRLF) and it calls `onMessage` per dispatched event. Comments (`: ping`) and `retry:` are
 * consumed silently.
 */
export function createSseParser(onMessage: (message: SseMessage) => void) {
  let buffer = '';
  let eventType = '';
  let dataLines: string[] = [];
  let lastEventId = '';
  let pendingCr = false;

  function processLine(line: string): void {
    if (line === '') {
      if (dataLines.length > 0) {
        onMessage({ event: eventType || 'message', data: dataLines.join('\n'), lastEventId });
      }
      eventType = '';
      dataLines = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        eventType = value;
        break;
      case 'data':
        dataLines.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) lastEventId = value;
        break;
      default:
        // `retry` and unknown fields: ignored (the reader has its own backoff).
        break;
    }
  }

  return {
    feed(chunk: string): void {
      let text = chunk;
      // A CR at the end of the previous chunk may be the first half of a CRLF.
      if (pendingCr && text.startsWith('\n')) text = text.slice(1);
      pendingCr = false;
      buffer += text;
      let start = 0;
      for (let i = 0; i < buffer.length; i++) {
        const ch = buffer[i];
        if (ch !== '\n' && ch !== '\r') continue;
        processLine(buffer.slice(start, i));
        if (ch === '\r') {
          if (i + 1 < buffer.length) {
            if (buffer[i + 1] === '\n') i++;
          } else {
            pendingCr = true;
          }
        }
        start = i + 1;
      }
      buffer = buffer.slice(start);
    },
    /** Drops a partial event (the connection ended mid-event); keeps the last event id. */
    reset(): void {
      buffer = '';
      eventType = '';
      dataLines = [];
      pendingCr = false;
    },
  };
}

export type StreamStatus = 'connecting' | 'open' | 'reconnecting' | 'stopped';

export interface AgentStreamHandlers {
  onEntry(entry: TranscriptEntry): void;
  onState(agentId: string, state: TurnState): void;
  onRoster(agentId: string, change: string): void;
  /** The agent's pending inputs, whole, when the stream opens and whenever they change. */
  onInbox?(agentId: string, pending: PendingInput[]): void;
  onStatus(status: StreamStatus, detail?: string): void;
  /** The gateway refused this browser (401/403); the stream keeps retrying. */
  onUnauthorized?(): void;
  /** A send_message text as the model writes it; `text: null` when that call is over. */
  onDraft?(toolCallId: string, text: string | null): void;
  /** A tool call running (again as its output grows) or just over. */
  onTool?(tool: LiveToolView): void;
  /** The model call is retried after a wait; null once it answered or failed for good. */
  onRetry?(retry: ModelRetryView | null): void;
  /** A background task started, changed (its output's tail, a child's step count) or ended. */
  onTask?(task: TaskView): void;
  /** An agent's routines changed (any agent: every stream carries it). */
  onRoutines?(agentId: string): void;
  /** A step of a running subagent. */
  onSubagentEntry?(subagentId: string, entry: TranscriptEntry): void;
}

/** Reconnect delays: 0.5 s doubling to 15 s, reset once a connection delivers data. */
export function backoffDelay(attempt: number): number {
  return Math.min(15_000, 500 * 2 ** Math.min(attempt, 5));
}

/**
 * Follows one agent's events until `signal` aborts (`agentId` null: only the `state` and
 * `roster` events every stream carries, for the sidebar while no agent is open). `after` is the highest seq already held;
 * it advances with every entry so a reconnect resumes exactly where the stream broke.
 * Retries with backoff after a drop or a refusal (a box restart); stops for good on 404.
 */
export async function followAgentEvents(
  client: ApiClient,
  agentId: string | null,
  after: number,
  handlers: AgentStreamHandlers,
  signal: AbortSignal,
): Promise<void> {
  let lastSeq = after;
  let attempt = 0;
  while (!signal.aborted) {
    handlers.onStatus(attempt === 0 ? 'connecting' : 'reconnecting');
    const query = new URLSearchParams({ after: String(lastSeq) });
    if (agentId !== null) query.set('agentId', agentId);
    const url = `${client.baseUrl}/api/events?${query.toString()}`;
    try {
      const response = await client.fetch(url, {
        credentials: 'same-origin',
        headers: { ...client.sessionHeaders(), Accept: 'text/event-stream' },
        signal,
      });
      if (response.status === 404) {
        handlers.onStatus('stopped', 'this agent no longer exists (it was deleted).');
        return;
      }
      // Refused (signed out, or a box not yet ready after a restart): keep retrying with
      // backoff; signing in again in another tab is enough to bring this one back.
      if (response.status === 401 || response.status === 403) {
        handlers.onUnauthorized?.();
        if (response.status === 401) await client.refreshSession();
        throw new Error(`/api/events answered ${response.status}`);
      }
      if (!response.ok || !response.body) throw new Error(`/api/events answered ${response.status}`);
      handlers.onStatus('open');
      const parser = createSseParser((message) => {
        attempt = 0;
        dispatch(message);
      });
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parser.feed(value);
      }
    } catch (error) {
      if (signal.aborted) break;
      console.warn(`/api/events for ${agentId ?? 'the roster'}: ${String(error)}; reconnecting`);
    }
    if (signal.aborted) break;
    await sleep(backoffDelay(attempt++), signal);
  }
  handlers.onStatus('stopped');

  function dispatch(message: SseMessage): void {
    let data: unknown;
    try {
      data = JSON.parse(message.data);
    } catch {
      console.warn(`/api/events: a ${message.event} event carries data that is not JSON; skipped`);
      return;
    }
    switch (message.event) {
      case 'entry': {
        const entry = parseEntry(data);
        if (!entry) {
          console.warn('/api/events: an entry event without id or seq; skipped');
          return;
        }
        if (entry.seq > lastSeq) lastSeq = entry.seq;
        handlers.onEntry(entry);
        return;
      }
      case 'state': {
        const state = stateEventSchema.safeParse(data);
        if (state.success) handlers.onState(state.data.agentId, state.data.state);
        return;
      }
      case 'tool': {
        const tool = toolEventSchema.safeParse(data);
        if (tool.success) handlers.onTool?.(tool.data);
        return;
      }
      case 'retry': {
        const retry = retryEventSchema.safeParse(data);
        if (retry.success) handlers.onRetry?.(retry.data.retry);
        return;
      }
      case 'draft': {
        const draft = draftEventSchema.safeParse(data);
        if (draft.success) handlers.onDraft?.(draft.data.toolCallId, draft.data.text);
        return;
      }
      case 'roster': {
        const roster = rosterEventSchema.safeParse(data);
        if (roster.success) handlers.onRoster(roster.data.agentId, roster.data.change);
        return;
      }
      case 'task': {
        const task = taskEventSchema.safeParse(data);
        if (task.success) handlers.onTask?.(task.data.task);
        return;
      }
      case 'subagent-entry': {
        const event = subagentEntryEventSchema.safeParse(data);
        const entry = event.success ? parseEntry(event.data.entry) : null;
        if (event.success && entry) handlers.onSubagentEntry?.(event.data.subagentId, entry);
        return;
      }
      case 'routines': {
        const routines = routinesEventSchema.safeParse(data);
        if (routines.success) handlers.onRoutines?.(routines.data.agentId);
        return;
      }
      case 'inbox': {
        const inbox = inboxEventSchema.safeParse(data);
        if (inbox.success) handlers.onInbox?.(inbox.data.agentId, inbox.data.pending);
        return;
      }
      default:
        return;
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
