/**
 * `GET /api/events`: the ledger and live host events as server-sent events.
 *
 * Resuming must lose nothing and repeat nothing. The stream subscribes to the
 * host first and buffers, then reads the backlog (`entriesAfter`), then flushes
 * the buffer minus the entries the backlog already held, then goes live. An
 * entry committed during the backlog read is therefore in the backlog, in the
 * buffer, or both, never in neither.
 */
import type { AgentHost } from '../host/types.ts';
import type { HostEvent } from '../agent/events.ts';
import type { PendingInput } from '../stores/inbox.ts';
import type { SequencedEntry } from '../stores/ledger.ts';

export const PING_INTERVAL_MS = 15_000;
/**
 * A client that stops reading would make the queue grow without bound; past
 * this many queued bytes the stream is closed and the client resumes from its
 * last seq (`Last-Event-ID`), which costs nothing but a reconnect.
 */
export const MAX_QUEUED_BYTES = 8 * 1024 * 1024;

export interface EventStreamRequest {
  /** Entries of this agent are streamed; without it, only `state`, `roster` and `routines` events. */
  agentId: string | null;
  after: number;
  /** The browser session that opened it (null: the bearer token); ending that session ends the stream. */
  session?: string | null;
}

/** The open streams of one gateway, so shutdown can end them (a server does not close while they run). */
export class EventStreams {
  /** Each open stream's close, and the browser session it serves. */
  readonly #open = new Map<() => void, string | null>();

  get size(): number {
    return this.#open.size;
  }

  add(close: () => void, session: string | null = null): () => void {
    this.#open.set(close, session);
    return () => this.#open.delete(close);
  }

  closeAll(): void {
    for (const close of [...this.#open.keys()]) close();
  }

  /** Ends the streams of sessions that were signed out. */
  closeSessions(ids: readonly string[]): void {
    const ended = new Set(ids);
    for (const [close, session] of [...this.#open]) if (session !== null && ended.has(session)) close();
  }
}

const encoder = new TextEncoder();

function frame(event: string, data: unknown, id?: number): string {
  // JSON.stringify never emits a raw newline, so one `data:` line holds the whole payload.
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

function entryFrame(entry: SequencedEntry): string {
  return frame('entry', entry, entry.seq);
}

/**
 * Opens the stream. Resolves once the backlog is read (so an unknown agent is a
 * plain JSON error, not a broken stream); rejects with the host's error otherwise.
 */
export async function openEventStream(
  host: AgentHost,
  request: EventStreamRequest,
  streams: EventStreams,
  maxQueuedBytes = MAX_QUEUED_BYTES,
): Promise<ReadableStream<Uint8Array>> {
  const { agentId } = request;
  let buffered: HostEvent[] | null = [];
  let forward: ((event: HostEvent) => void) | null = null;
  const unsubscribe = host.subscribe((event) => {
    if (buffered !== null) buffered.push(event);
    else forward?.(event);
  });

  let backlog: SequencedEntry[];
  /** The agent's pending inputs as the stream opens (an `inbox` event updates them). */
  let inbox: PendingInput[] | null = null;
  try {
    backlog = agentId === null ? [] : await host.entriesAfter(agentId, request.after);
    if (agentId !== null) inbox = await host.pendingInputs(agentId);
  } catch (error) {
    unsubscribe();
    throw error;
  }
  backlog.sort((a, b) => a.seq - b.seq);
  /** The highest seq sent: entries go out in seq order, each once, whichever path brought them. */
  let lastSeq = request.after;

  /** The frame for an event, or null when this stream does not carry it. */
  const render = (event: HostEvent): string | null => {
    switch (event.type) {
      case 'entry':
        if (event.agentId !== agentId || event.entry.seq <= lastSeq) return null;
        lastSeq = event.entry.seq;
        return entryFrame(event.entry);
      case 'state':
        return frame('state', { agentId: event.agentId, state: event.state });
      case 'roster':
        return frame('roster', { agentId: event.agentId, change: event.change });
      case 'inbox':
        return event.agentId === agentId ? frame('inbox', { agentId, pending: event.pending }) : null;
      case 'draft':
        if (event.agentId !== agentId) return null;
        return frame('draft', { agentId: event.agentId, toolCallId: event.toolCallId, text: event.text });
      case 'tool': {
        if (event.agentId !== agentId) return null;
        const { type: _type, ...tool } = event;
        return frame('tool', tool);
      }
      case 'retry':
        return event.agentId === agentId ? frame('retry', { agentId, retry: event.retry }) : null;
      case 'task':
        return event.agentId === agentId ? frame('task', { agentId, task: event.task }) : null;
      case 'subagent-entry':
        if (event.agentId !== agentId) return null;
        return frame('subagent-entry', { agentId, subagentId: event.subagentId, entry: event.entry });
      case 'routines':
        // Every stream, like state and roster: an agent dialog is open over any agent.
        return frame('routines', { agentId: event.agentId });
    }
  };

  let closed = false;
  let ping: ReturnType<typeof setInterval> | undefined;
  let forget = (): void => undefined;
  const teardown = (): void => {
    if (closed) return;
    closed = true;
    unsubscribe();
    clearInterval(ping);
    forget();
  };

  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const send = (text: string): void => {
          if (closed) return;
          controller.enqueue(encoder.encode(text));
          // With a high-water mark of 0, -desiredSize is the number of bytes the client has not read.
          if (-(controller.desiredSize ?? 0) > maxQueuedBytes) end();
        };
        const end = (): void => {
          if (closed) return;
          teardown();
          controller.close();
        };
        forget = streams.add(end, request.session ?? null);

        // Comment line first: flushes headers so the client knows the stream is open.
        send(': sendbox events\n\n');
        for (const entry of backlog) {
          if (entry.seq <= lastSeq) continue;
          lastSeq = entry.seq;
          send(entryFrame(entry));
        }
        if (inbox !== null) send(frame('inbox', { agentId, pending: inbox }));
        // The buffer may repeat entries the backlog already held; render() drops those by seq.
        const pending = buffered ?? [];
        buffered = null;
        forward = (event) => {
          const text = render(event);
          if (text !== null) send(text);
        };
        for (const event of pending) forward(event);
        ping = setInterval(() => send(': ping\n\n'), PING_INTERVAL_MS);
        ping.unref();
      },
      cancel() {
        // The client went away.
        teardown();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: 0 }),
  );
}
