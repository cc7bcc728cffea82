/**
 * Events across workers (issue 25 §3). Every worker's gateway streams every agent, whichever worker
 * runs its turns. PostgreSQL `LISTEN/NOTIFY` carries ids only; the rows carry the rest:
 *
 * - **Telling.** After a write commits, the event the host emits for it becomes a note: an entry's
 *   agent and seq, an agent's new turn state, "its inbox changed", a roster change. Notes go out on
 *   a connection of their own (never inside the write's transaction, which holds the agent's fence),
 *   batched per tick, in the order the events happened.
 * - **Live updates** (a send being written, a running tool's output, a running subagent's steps)
 *   change many times a second and are not kept. An agent's latest ones are written to `live_events`, at most
 *   LIVE_UPDATES_PER_SECOND times a second, each write followed by a note naming the agent.
 * - **Hearing.** Each worker LISTENs on its own connection. An entry note is a seq: the worker
 *   reads the agent's rows after the last seq it handed on, up to that seq, and hands them on in seq
 *   order. Its own entries take the same road: one whose seq is not the next is read from the rows
 *   with the ones before it. So each agent's entries reach the subscribers once, in order, with no
 *   gap, whichever worker wrote them and in whatever order their notes arrive (an upload through one
 *   gateway can interleave with a turn on another). Each agent's events are handed on in the order
 *   they came, a read from the rows holding back the events after it.
 * - **Where each agent stands** is read once at start (its highest seq), after LISTEN, so every
 *   row written later is announced by a note this worker hears. A lost connection is opened again
 *   and the rows are read for every agent that moved meanwhile.
 *
 * The event stream (gateway/events.ts) reads its backlog from the rows and then takes these events,
 * dropping what the backlog held: a client on any gateway sees every entry once, in order, across
 * reconnects (`Last-Event-ID`).
 */
import pg from 'pg';
import { z } from 'zod';
import { ledgerRowsOf } from '@sendbox/txcript';
import type { EventRelay, EventRelayFactory, HostEvent } from '../agent/events.ts';
import { pendingView } from '../agent/inputs.ts';
import type { SequencedEntry } from '../stores/ledger.ts';
import type { Database } from '../stores/postgres/database.ts';
import { readPendingRows } from '../stores/postgres/inbox.ts';

/** How often an agent's live updates (drafts, running tools) are written for other workers, at most. */
export const LIVE_UPDATES_PER_SECOND = 10;
const LIVE_SPACING_MS = 1000 / LIVE_UPDATES_PER_SECOND;
/** Pause before a failed read of the rows, or a lost connection, is tried again. */
const RETRY_MS = 500;
/** Live rows older than this are removed (nobody reads them any more). */
const LIVE_KEEP = '5 minutes';
const PRUNE_EVERY_MS = 60_000;

const noteSchema = z.discriminatedUnion('k', [
  z.object({ k: z.literal('entry'), w: z.string(), a: z.string(), s: z.number().int() }),
  z.object({
    k: z.literal('state'),
    w: z.string(),
    a: z.string(),
    v: z.enum(['idle', 'working', 'awaiting-user']),
  }),
  z.object({ k: z.literal('inbox'), w: z.string(), a: z.string() }),
  z.object({
    k: z.literal('roster'),
    w: z.string(),
    a: z.string(),
    c: z.enum(['created', 'deleted', 'updated']),
  }),
  z.object({ k: z.literal('live'), w: z.string(), a: z.string() }),
  // A gateway asks whichever worker runs the agent's turn to stop it (the user's Stop), or a call
  // of it waiting on an approval card to yield (the user sent a prompt instead).
  z.object({ k: z.literal('stop'), w: z.string(), a: z.string() }),
  z.object({ k: z.literal('yield'), w: z.string(), a: z.string() }),
]);
type Note = z.infer<typeof noteSchema>;
/** What a gateway asks of an agent's turn on another worker: Stop, or a card's wait ended by a prompt. */
export type TurnAsk = 'stop' | 'yield';

/** What one agent's events wait in, so they are handed on in order. */
interface Lane {
  agentId: string;
  /** The highest seq handed on. */
  emitted: number;
  /** The highest live_events version handed on. */
  live: number;
  steps: Array<() => void | Promise<void>>;
  running: boolean;
}

export interface ClusterEventsOptions {
  db: Database;
  /** The database's URL: the notes are sent and heard on two connections of their own. */
  databaseUrl: string;
  /** This worker's name; the notes it sent are not read back. */
  worker: string;
  log?: (message: string) => void;
}

/** One worker's end of the events: `relay` goes to its host (createAgentHost's `relay`). */
export class ClusterEvents {
  readonly channel: string;
  private readonly lanes = new Map<string, Lane>();
  private deliver: (event: HostEvent) => void = () => undefined;
  private readonly inputListeners = new Set<(agentId: string) => void>();
  private readonly turnListeners = new Set<(agentId: string, ask: TurnAsk) => void>();
  /** Each agent's latest turn state, this worker's or relayed: whether a turn runs somewhere. */
  private readonly states = new Map<string, 'idle' | 'working' | 'awaiting-user'>();
  private readonly publisher: NotePublisher;
  private listener: pg.Client | null = null;
  /** Notes heard before the start-up read of where each agent stands, handled after it. */
  private held: Note[] | null = [];
  /** The live_events version when this worker started: a new lane reads live rows after it. */
  private liveBaseline = 0;
  private closed = false;
  private readonly log: (message: string) => void;

  private constructor(private readonly options: ClusterEventsOptions) {
    // An identifier: lower-case, digits and _ (the schema's rules), cut to PostgreSQL's 63 bytes.
    this.channel = `${options.db.schema.slice(1, -1).slice(0, 56)}_events`;
    this.log = options.log ?? ((message) => console.error(message));
    this.publisher = new NotePublisher(options, this.channel, this.log);
  }

  static async start(options: ClusterEventsOptions): Promise<ClusterEvents> {
    const events = new ClusterEvents(options);
    try {
      await events.listen();
      await events.readBaselines();
    } catch (error) {
      await events.close();
      throw error;
    }
    return events;
  }

  /** For createAgentHost: this worker's events are told to the others, theirs handed on here. */
  readonly relay: EventRelayFactory = (deliver) => {
    this.deliver = deliver;
    const relay: EventRelay = { local: (event) => this.local(event) };
    return relay;
  };

  /** Called with the agent's id when an input was accepted (here or on another worker): a turn may be waiting. */
  onInput(listener: (agentId: string) => void): () => void {
    this.inputListeners.add(listener);
    return () => this.inputListeners.delete(listener);
  }

  /**
   * Asks the worker running the agent's turn, wherever it is, to stop it or to end a wait on an
   * approval card (`onTurnAsk` there); true when a turn of the agent runs or awaits the user, as
   * the latest state heard says.
   */
  askTurn(agentId: string, ask: TurnAsk): boolean {
    this.publisher.note({ k: ask, w: this.options.worker, a: agentId });
    const state = this.states.get(agentId);
    return state === 'working' || state === 'awaiting-user';
  }

  /** Called with the agent's id when a gateway elsewhere asks something of its turn. */
  onTurnAsk(listener: (agentId: string, ask: TurnAsk) => void): () => void {
    this.turnListeners.add(listener);
    return () => this.turnListeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.publisher.close();
    const listener = this.listener;
    this.listener = null;
    await listener?.end().catch(() => undefined);
  }

  // -------------------------------------------------------------------------

  private local(event: HostEvent): void {
    this.publisher.publish(event);
    if (event.type === 'state') this.states.set(event.agentId, event.state);
    if (event.type === 'inbox') this.inputArrived(event.agentId);
    const lane = this.lane(event.agentId);
    if (event.type === 'entry') {
      const seq = event.entry.seq;
      this.enqueue(lane, () => {
        if (seq <= lane.emitted) return undefined;
        if (seq === lane.emitted + 1) {
          lane.emitted = seq;
          this.deliver(event);
          return undefined;
        }
        // Rows before it came from another writer whose notes have not arrived: read them.
        return this.fill(lane, seq);
      });
    } else {
      this.enqueue(lane, () => this.deliver(event));
    }
  }

  private heard(payload: string | undefined): void {
    let note: Note;
    try {
      note = noteSchema.parse(JSON.parse(payload ?? ''));
    } catch {
      this.log(`events: a note on ${this.channel} is not one of sendbox's; ignored`);
      return;
    }
    if (note.w === this.options.worker) return;
    if (this.held !== null) {
      this.held.push(note);
      return;
    }
    this.handle(note);
  }

  private handle(note: Note): void {
    const lane = this.lane(note.a);
    const agentId = note.a;
    switch (note.k) {
      case 'entry':
        this.enqueue(lane, () => (note.s <= lane.emitted ? undefined : this.fill(lane, note.s)));
        return;
      case 'state':
        this.states.set(agentId, note.v);
        this.enqueue(lane, () => this.deliver({ type: 'state', agentId, state: note.v }));
        return;
      case 'stop':
      case 'yield':
        for (const listener of this.turnListeners) listener(agentId, note.k);
        return;
      case 'roster':
        this.enqueue(lane, () => this.deliver({ type: 'roster', agentId, change: note.c }));
        return;
      case 'inbox':
        this.inputArrived(agentId);
        this.enqueue(lane, () => this.readInbox(agentId));
        return;
      case 'live':
        this.enqueue(lane, () => this.readLive(lane));
        return;
    }
  }

  private inputArrived(agentId: string): void {
    for (const listener of this.inputListeners) {
      try {
        listener(agentId);
      } catch {
        // The listener's own failure.
      }
    }
  }

  private lane(agentId: string): Lane {
    let lane = this.lanes.get(agentId);
    if (!lane) {
      // An agent with no row when this worker started: every row of it is announced.
      lane = { agentId, emitted: 0, live: this.liveBaseline, steps: [], running: false };
      this.lanes.set(agentId, lane);
    }
    return lane;
  }

  /** Runs the lane's steps in order; while none waits on a read they run at once, in the caller's tick. */
  private enqueue(lane: Lane, step: () => void | Promise<void>): void {
    lane.steps.push(step);
    if (!lane.running) void this.drain(lane);
  }

  private async drain(lane: Lane): Promise<void> {
    lane.running = true;
    try {
      for (let step = lane.steps.shift(); step; step = lane.steps.shift()) {
        try {
          const pending = step();
          if (pending) await pending;
        } catch (error) {
          this.log(`events of agent ${lane.agentId}: ${(error as Error).message}`);
        }
      }
    } finally {
      lane.running = false;
    }
  }

  /** Hands on the agent's rows after the last seq handed on, up to `upTo`; tried until it succeeds. */
  private async fill(lane: Lane, upTo: number): Promise<void> {
    const { db } = this.options;
    while (!this.closed && lane.emitted < upTo) {
      try {
        const { rows } = await db.pool.query<{ seq: string; id: string; entry: string }>(
          `SELECT seq, id, entry FROM ${db.table('ledger')} WHERE agent_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq`,
          [lane.agentId, lane.emitted, upTo],
        );
        const raw = rows.map((row) => ({ seq: Number(row.seq), id: row.id, entry: row.entry }));
        const read = ledgerRowsOf(raw, `postgres ${db.table('ledger')} agent ${lane.agentId}`);
        for (const row of read.rows) {
          if (row.seq <= lane.emitted) continue;
          lane.emitted = row.seq;
          const entry = { ...row.entry, seq: row.seq } as SequencedEntry;
          this.deliver({ type: 'entry', agentId: lane.agentId, entry });
        }
        lane.emitted = Math.max(lane.emitted, upTo);
      } catch (error) {
        this.log(
          `events: cannot read the ledger of agent ${lane.agentId} (${(error as Error).message}); trying again`,
        );
        await sleep(RETRY_MS);
      }
    }
  }

  private async readInbox(agentId: string): Promise<void> {
    const rows = await readPendingRows(this.options.db, agentId);
    this.deliver({ type: 'inbox', agentId, pending: rows.map(pendingView) });
  }

  private async readLive(lane: Lane): Promise<void> {
    const { db } = this.options;
    const { rows } = await db.pool.query<{ event: string; version: string }>(
      `SELECT event, version FROM ${db.table('live_events')} WHERE agent_id = $1 AND version > $2 ORDER BY version`,
      [lane.agentId, lane.live],
    );
    for (const row of rows) {
      lane.live = Math.max(lane.live, Number(row.version));
      this.deliver(JSON.parse(row.event) as HostEvent);
    }
  }

  /** Where every agent stands: read after LISTEN, so a row written later is in a note this worker hears. */
  private async readBaselines(): Promise<void> {
    const { db } = this.options;
    const live = await db.pool.query<{ version: string }>(
      `SELECT COALESCE(max(version), 0) AS version FROM ${db.table('live_events')}`,
    );
    this.liveBaseline = Number(live.rows[0]!.version);
    for (const [agentId, seq] of await this.highestSeqs()) {
      this.lane(agentId).emitted = seq;
    }
    const held = this.held ?? [];
    this.held = null;
    for (const note of held) this.handle(note);
  }

  private async highestSeqs(): Promise<Map<string, number>> {
    const { db } = this.options;
    const { rows } = await db.pool.query<{ agent_id: string; seq: string }>(
      `SELECT agent_id, max(seq) AS seq FROM ${db.table('ledger')} GROUP BY agent_id`,
    );
    return new Map(rows.map((row) => [row.agent_id, Number(row.seq)]));
  }

  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.options.databaseUrl });
    client.on('notification', (message) => {
      if (message.channel === this.channel) this.heard(message.payload);
    });
    const lost = (): void => {
      if (this.listener !== client) return;
      this.listener = null;
      void client.end().catch(() => undefined);
      if (!this.closed) void this.relisten();
    };
    client.on('error', lost);
    client.on('end', lost);
    await client.connect();
    await client.query(`LISTEN "${this.channel}"`);
    this.listener = client;
  }

  /** After a lost connection: LISTEN again, then read the rows of every agent that moved meanwhile. */
  private async relisten(): Promise<void> {
    while (!this.closed && this.listener === null) {
      try {
        await this.listen();
        for (const [agentId, seq] of await this.highestSeqs()) {
          const lane = this.lane(agentId);
          this.enqueue(lane, () => (seq <= lane.emitted ? undefined : this.fill(lane, seq)));
        }
        return;
      } catch (error) {
        this.log(`events: cannot LISTEN on ${this.channel} (${(error as Error).message}); trying again`);
        await sleep(RETRY_MS);
      }
    }
  }
}

/** A live update to write for other workers, or null for an event that has none. */
function liveKey(event: HostEvent): string | null {
  if (event.type === 'draft') return `draft:${event.toolCallId}`;
  if (event.type === 'tool') return `tool:${event.toolCallId}`;
  // "Read listRoutines again" (every worker re-arms the agent's routines from the rows): the latest is enough.
  if (event.type === 'routines') return 'routines';
  // A model call being retried (the latest notice, or null once it answered), a background task's row.
  if (event.type === 'retry') return 'retry';
  if (event.type === 'task') return `task:${event.task.id}`;
  // A running subagent's step (its ledger lives in the turn worker's memory, its transcript on that
  // worker's disk): each is a row of its own, so none is coalesced away.
  if (event.type === 'subagent-entry') return `subagent:${event.subagentId}:${event.entry.seq}`;
  return null;
}

/**
 * A live update that ends its row (a draft delivered or refused, a tool call over, a retry answered,
 * a task ended, a subagent's step: each is written once), so it goes out before the agent's next note.
 */
function isFinal(event: HostEvent): boolean {
  return (
    event.type === 'subagent-entry' ||
    (event.type === 'draft' && event.text === null) ||
    (event.type === 'tool' && !event.running) ||
    (event.type === 'retry' && event.retry === null) ||
    (event.type === 'task' && event.task.state !== 'running')
  );
}

type Outgoing = { note: Note } | { live: { agentId: string; events: Map<string, HostEvent> } };

interface LivePending {
  events: Map<string, HostEvent>;
  timer: ReturnType<typeof setTimeout> | null;
  /** When its live updates were last written (ms, monotonic). */
  last: number;
}

/** Sends this worker's notes after their writes committed, in order, on a connection of its own. */
class NotePublisher {
  private client: pg.Client | null = null;
  private readonly queue: Outgoing[] = [];
  private scheduled = false;
  private flushing: Promise<void> | null = null;
  private readonly live = new Map<string, LivePending>();
  private readonly prune: ReturnType<typeof setInterval>;
  private closed = false;

  constructor(
    private readonly options: ClusterEventsOptions,
    private readonly channel: string,
    private readonly log: (message: string) => void,
  ) {
    this.prune = setInterval(() => {
      const { db } = this.options;
      db.pool
        .query(`DELETE FROM ${db.table('live_events')} WHERE at < now() - interval '${LIVE_KEEP}'`)
        .catch(() => undefined);
    }, PRUNE_EVERY_MS);
    this.prune.unref();
  }

  publish(event: HostEvent): void {
    if (this.closed) return;
    const w = this.options.worker;
    const a = event.agentId;
    const key = liveKey(event);
    if (key !== null) {
      this.addLive(a, key, event);
      return;
    }
    let note: Note;
    switch (event.type) {
      case 'entry':
        note = { k: 'entry', w, a, s: event.entry.seq };
        break;
      case 'state':
        note = { k: 'state', w, a, v: event.state };
        break;
      case 'inbox':
        note = { k: 'inbox', w, a };
        break;
      case 'roster':
        note = { k: 'roster', w, a, c: event.change };
        break;
      case 'draft':
      case 'tool':
      case 'retry':
      case 'task':
      case 'subagent-entry':
      case 'routines':
        // Live updates (a subagent's steps among them) went above.
        return;
    }
    // Live updates that ended went before this event here: they go out before its note.
    const pending = this.live.get(a);
    if (pending) {
      const ended = new Map([...pending.events].filter(([, live]) => isFinal(live)));
      if (ended.size > 0) {
        for (const endedKey of ended.keys()) pending.events.delete(endedKey);
        this.queue.push({ live: { agentId: a, events: ended } });
      }
    }
    const last = this.queue.at(-1);
    // A run of one agent's entries is one note: its last seq (the reader reads the rows up to it).
    if (note.k === 'entry' && last && 'note' in last && last.note.k === 'entry' && last.note.a === a) {
      last.note = note;
    } else {
      this.queue.push({ note });
    }
    this.schedule();
  }

  /** A note of this worker's own, not made from a host event (`askTurn`). */
  note(note: Note): void {
    if (this.closed) return;
    this.queue.push({ note });
    this.schedule();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.prune);
    for (const pending of this.live.values()) if (pending.timer) clearTimeout(pending.timer);
    this.live.clear();
    await this.flushing;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  /** Keeps the agent's latest update per row; writes them when LIVE_SPACING_MS has passed since the last write. */
  private addLive(agentId: string, key: string, event: HostEvent): void {
    let pending = this.live.get(agentId);
    if (!pending) {
      pending = { events: new Map(), timer: null, last: -Infinity };
      this.live.set(agentId, pending);
    }
    pending.events.delete(key); // re-inserted last: the map's order is the order of the latest changes
    pending.events.set(key, event);
    if (pending.timer) return;
    const wait = Math.max(0, pending.last + LIVE_SPACING_MS - performance.now());
    const entry = pending;
    entry.timer = setTimeout(() => {
      entry.timer = null;
      entry.last = performance.now();
      if (entry.events.size === 0 || this.closed) return;
      const events = new Map(entry.events);
      entry.events.clear();
      this.queue.push({ live: { agentId, events } });
      this.schedule();
    }, wait);
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flushing ??= this.flush().finally(() => {
        this.flushing = null;
        if (this.queue.length > 0) this.schedule();
      });
    });
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0);
      for (let attempt = 1; ; attempt++) {
        try {
          await this.send(batch);
          break;
        } catch (error) {
          const client = this.client;
          this.client = null;
          await client?.end().catch(() => undefined);
          if (attempt === 3 || this.closed) {
            // Readers catch up with the rows at the agent's next note, or a client's reconnect.
            this.log(`events: ${batch.length} notes not sent (${(error as Error).message})`);
            break;
          }
          await sleep(RETRY_MS);
        }
      }
    }
  }

  /** The batch in order: runs of notes as one statement; each live write with its note in a transaction. */
  private async send(batch: readonly Outgoing[]): Promise<void> {
    const client = await this.connect();
    const { db, worker } = this.options;
    const notify = (notes: Note[]): string =>
      notes
        .map(
          (note) =>
            `SELECT pg_notify(${client.escapeLiteral(this.channel)}, ${client.escapeLiteral(JSON.stringify(note))});`,
        )
        .join('\n');
    let notes: Note[] = [];
    for (const item of batch) {
      if ('note' in item) {
        notes.push(item.note);
        continue;
      }
      if (notes.length > 0) await client.query(notify(notes));
      notes = [];
      const { agentId, events } = item.live;
      await client.query('BEGIN');
      try {
        await client.query(
          `INSERT INTO ${db.table('live_events')} (agent_id, key, event, version)
           SELECT $1, e.key, e.event, nextval('${db.schema.slice(1, -1)}.live_event_version')
           FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS e(key, event, ord) ORDER BY e.ord
           ON CONFLICT (agent_id, key) DO UPDATE SET event = EXCLUDED.event, version = EXCLUDED.version, at = now()`,
          [agentId, [...events.keys()], [...events.values()].map((event) => JSON.stringify(event))],
        );
        await client.query(notify([{ k: 'live', w: worker, a: agentId }]));
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    }
    if (notes.length > 0) await client.query(notify(notes));
  }

  private async connect(): Promise<pg.Client> {
    if (this.client) return this.client;
    const client = new pg.Client({ connectionString: this.options.databaseUrl });
    client.on('error', () => {
      if (this.client === client) this.client = null;
    });
    await client.connect();
    this.client = client;
    return client;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
