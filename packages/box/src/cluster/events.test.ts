/**
 * Events across workers (cluster/events.ts) over a real PostgreSQL: an SSE client on a gateway that
 * runs no turn gets every entry of an agent whose turns run in two other worker processes, once and
 * in order, across a reconnect; a worker's relay fills gaps from the rows whatever order the notes
 * come in, after a lost LISTEN connection too; drafts reach other workers at most 10 times a second.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { HostEvent } from '../agent/events.ts';
import { SseReader, type SseEvent } from '../gateway/test-support.ts';
import type { SequencedEntry } from '../stores/ledger.ts';
import { useServices } from '../stores/postgres/backend.ts';
import type { Database } from '../stores/postgres/database.ts';
import { PgLedger } from '../stores/postgres/ledger.ts';
import { until } from '../testing/processes.ts';
import { ClusterEvents, LIVE_UPDATES_PER_SECOND } from './events.ts';
import { useClusterKit } from '../testing/cluster-kit.ts';

const services = useServices();

describe('events across workers', () => {
  const kit = useClusterKit(services);

  /** A fresh schema, dropped after the test. */
  async function schemaDb(): Promise<Database> {
    const fresh = await kit.freshSchema();
    return fresh.db;
  }

  /** A worker's relay alone, handing what it hears to `events`. */
  async function relayOn(
    db: Database,
    worker: string,
  ): Promise<{ relay: ClusterEvents; events: HostEvent[] }> {
    const relay = await ClusterEvents.start({
      db,
      databaseUrl: services().databaseUrl,
      worker,
      log: () => undefined,
    });
    kit.defer(() => relay.close());
    const events: HostEvent[] = [];
    relay.relay((event) => events.push(event));
    return { relay, events };
  }

  const seqsOf = (events: readonly HostEvent[], agentId: string): number[] =>
    events.flatMap((event) => (event.type === 'entry' && event.agentId === agentId ? [event.entry.seq] : []));

  function textEntry(id: string): Parameters<PgLedger['appendEntries']>[0][number] {
    return { id, kind: 'notice', text: id, level: 'info', timestampMs: Date.now() };
  }

  it('gives an SSE client on a gateway that runs no turn every entry once, in order, across a reconnect', async () => {
    const cluster = await kit.cluster();
    const { db } = cluster;
    // The gateway the client talks to: it accepts inputs and runs no turn.
    const { worker: gateway, http } = await cluster.acceptingGateway();
    // Two worker processes run the turns.
    for (const name of ['worker-a', 'worker-b']) await cluster.workerProcess(name);

    const agent = await gateway.host.createAgent({ name: 'Watched agent' });
    const open = async (lastEventId?: string): Promise<SseReader> => {
      const response = await fetch(new URL(`api/events?agentId=${agent.id}`, http.url), {
        headers: {
          Authorization: `Bearer ${http.token}`,
          ...(lastEventId === undefined ? {} : { 'Last-Event-ID': lastEventId }),
        },
      });
      expect(response.status).toBe(200);
      return new SseReader(response);
    };
    const entries: SequencedEntry[] = [];
    let lastId: string | undefined;
    /** Reads entries until one with this id came (an error when the stream is quiet for 30 s). */
    const readUntil = async (stream: SseReader, id: string): Promise<void> => {
      for (;;) {
        const event = await Promise.race([
          stream.next(),
          new Promise<'quiet'>((resolve) => setTimeout(() => resolve('quiet'), 30_000).unref()),
        ]);
        if (event === 'quiet' || event === null) {
          throw new Error(
            `no entry ${id} on the stream (${event ?? 'ended'}); had ${entries.map((e) => e.id).join(' ')}`,
          );
        }
        if (event.event !== 'entry') continue;
        const entry = (event as SseEvent & { data: SequencedEntry }).data;
        entries.push(entry);
        lastId = event.id;
        if (entry.id === id) return;
      }
    };

    const first = await open();
    for (let i = 0; i < 3; i++) {
      await gateway.host.sendPrompt({ agentId: agent.id, prompt: `fast ${i}`, clientNonce: `n${i}` });
    }
    await readUntil(first, 't1e');
    await first.cancel();

    // While no client listens: more turns, and an upload written by the gateway itself, interleaved.
    for (let i = 3; i < 6; i++) {
      await gateway.host.sendPrompt({ agentId: agent.id, prompt: `fast ${i}`, clientNonce: `n${i}` });
    }
    await gateway.host.uploadFile({
      agentId: agent.id,
      fileName: 'notes.txt',
      bytes: new TextEncoder().encode('notes'),
      clientNonce: 'upload-1',
    });
    const second = await open(lastId);
    await readUntil(second, 't5e');
    await second.cancel();

    const { rows } = await db.pool.query<{ seq: string; id: string }>(
      `SELECT seq, id FROM ${db.table('ledger')} WHERE agent_id = $1 ORDER BY seq`,
      [agent.id],
    );
    const upTo = entries.at(-1)!.seq;
    const expected = rows.filter((row) => Number(row.seq) <= upTo).map((row) => [Number(row.seq), row.id]);
    expect(entries.map((entry) => [entry.seq, entry.id])).toEqual(expected);
    // The turns ran in the worker processes, and the upload is among what the client got.
    const sends = entries.filter((entry) => entry.kind === 'send-message');
    expect(sends).toHaveLength(6);
    expect(JSON.stringify(sends)).toMatch(/done by worker-/);
    expect(entries.some((entry) => entry.kind === 'user-attachment')).toBe(true);
  }, 180_000);

  it("hands on each agent's entries once and in seq order, filling gaps from the rows", async () => {
    const db = await schemaDb();
    const agentId = randomUUID();
    const ledger = new PgLedger(db, { agentId, epoch: null });
    ledger.appendEntries([textEntry('before-start')]);
    const { relay, events } = await relayOn(db, 'reader');
    const notify = async (note: Record<string, unknown>) =>
      db.pool.query(`SELECT pg_notify($1, $2)`, [
        relay.channel,
        JSON.stringify({ w: 'writer', a: agentId, ...note }),
      ]);

    // Rows 2..4 written, the note of the last alone arrives: the rows before it are read too.
    ledger.appendEntries([textEntry('a'), textEntry('b'), textEntry('c')]);
    await notify({ k: 'entry', s: 4 });
    await until(() => seqsOf(events, agentId).length === 3, 'entries 2-4');
    // Notes out of order (two writers): 6 before 5, and 5 again.
    ledger.appendEntries([textEntry('d'), textEntry('e')]);
    await notify({ k: 'entry', s: 6 });
    await notify({ k: 'entry', s: 5 });
    await notify({ k: 'entry', s: 5 });
    await until(() => seqsOf(events, agentId).length === 5, 'entries 5-6');
    // This worker's own entry whose seq is not the next: the ones before it come first, from the rows.
    ledger.appendEntries([textEntry('f')]);
    const [own] = ledger.appendEntries([textEntry('g')]);
    const local = relay.relay((event) => events.push(event));
    local.local({
      type: 'entry',
      agentId,
      entry: { ...textEntry('g'), seq: own! } as SequencedEntry,
    });
    await until(() => seqsOf(events, agentId).length === 7, 'entries 7-8');
    // Another worker's state note is handed on after the entries before it.
    await notify({ k: 'state', v: 'working' });
    await until(() => events.some((event) => event.type === 'state'), 'the state');

    expect(seqsOf(events, agentId)).toEqual([2, 3, 4, 5, 6, 7, 8]);
    expect(events.at(-1)).toEqual({ type: 'state', agentId, state: 'working' });
    // The entries are the rows' (the row before the relay started is the stream's backlog, not an event).
    const ids = events.flatMap((event) => (event.type === 'entry' ? [event.entry.id] : []));
    expect(ids).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
  });

  it('reads the rows of agents that moved while its LISTEN connection was lost', async () => {
    const db = await schemaDb();
    const agentId = randomUUID();
    const ledger = new PgLedger(db, { agentId, epoch: null });
    const { relay, events } = await relayOn(db, 'reader');
    ledger.appendEntries([textEntry('a')]);
    await db.pool.query(`SELECT pg_notify($1, $2)`, [
      relay.channel,
      JSON.stringify({ k: 'entry', w: 'writer', a: agentId, s: 1 }),
    ]);
    await until(() => seqsOf(events, agentId).length === 1, 'entry 1');

    // The server ends the LISTEN connection; rows are written, their notes lost meanwhile.
    await db.pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
       WHERE pid <> pg_backend_pid() AND query = $1`,
      [`LISTEN "${relay.channel}"`],
    );
    ledger.appendEntries([textEntry('b'), textEntry('c')]);
    await until(() => seqsOf(events, agentId).length === 3, 'entries 2-3 after the reconnect', 15_000);
    expect(seqsOf(events, agentId)).toEqual([1, 2, 3]);
  });

  it('sends an agent’s drafts to other workers at most 10 times a second, the last one and the end included', async () => {
    const db = await schemaDb();
    const agentId = randomUUID();
    const writer = await relayOn(db, 'writer');
    const reader = await relayOn(db, 'reader');
    const local = writer.relay.relay(() => undefined);
    // Count the notes on the channel as any listener hears them.
    const listener = new pg.Client({ connectionString: services().databaseUrl });
    await listener.connect();
    kit.defer(() => listener.end());
    const notes: Array<{ k: string }> = [];
    listener.on('notification', (message) =>
      notes.push(JSON.parse(message.payload ?? '{}') as { k: string }),
    );
    await listener.query(`LISTEN "${writer.relay.channel}"`);

    // 200 draft updates over one second, then the end of the draft.
    const started = performance.now();
    let text = '';
    for (let i = 0; i < 200; i++) {
      text += `${i} `;
      local.local({ type: 'draft', agentId, toolCallId: 'call-1', text });
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    local.local({ type: 'draft', agentId, toolCallId: 'call-1', text: null });
    const seconds = (performance.now() - started) / 1000;
    const drafts = () => reader.events.filter((event) => event.type === 'draft');
    await until(
      () => drafts().at(-1)?.type === 'draft' && (drafts().at(-1) as { text: unknown }).text === null,
      'the end of the draft',
    );

    const live = notes.filter((note) => note.k === 'live').length;
    // At most one write per 100 ms over the run (the first one at once), and far fewer than the updates.
    expect(live).toBeLessThanOrEqual(Math.ceil(seconds * LIVE_UPDATES_PER_SECOND) + 2);
    expect(live).toBeGreaterThanOrEqual(2);
    const texts = drafts().map((event) => (event as { text: string | null }).text);
    expect(texts.length).toBeLessThanOrEqual(live);
    // What the reader saw grows, each update a prefix of the whole text; the end comes last.
    const updates = texts.slice(0, -1) as string[];
    expect(updates.length).toBeGreaterThanOrEqual(1);
    for (const [i, update] of updates.entries()) {
      expect(text.startsWith(update)).toBe(true);
      if (i > 0) expect(update.length).toBeGreaterThan(updates[i - 1]!.length);
    }
    expect(texts.at(-1)).toBeNull();
  });
  it('gives an SSE client on a gateway that runs no turn the background task rows, retry notices and routine changes of another worker', async () => {
    const cluster = await kit.cluster();
    const { worker: gateway, http } = await cluster.acceptingGateway();
    const worker = await cluster.workerProcess('worker', {
      gateway: true,
      env: { SENDBOX_ROUTINE_MIN_INTERVAL_S: '1' },
    });

    const agent = await gateway.host.createAgent({ name: 'Busy agent' });
    const response = await fetch(new URL(`api/events?agentId=${agent.id}`, http.url), {
      headers: { Authorization: `Bearer ${http.token}` },
    });
    expect(response.status).toBe(200);
    const stream = new SseReader(response);
    kit.defer(() => stream.cancel());
    const seen: SseEvent[] = [];
    const waitFor = async (what: string, match: (event: SseEvent) => boolean): Promise<SseEvent> => {
      const found = seen.find(match);
      if (found) return found;
      const quiet = new Promise<never>((_, reject) =>
        setTimeout(
          () => reject(new Error(`no ${what} on the stream; had ${seen.map((e) => e.event).join(' ')}`)),
          30_000,
        ).unref(),
      );
      const events = await Promise.race([
        stream.collect((event) => {
          seen.push(event);
          return match(event);
        }),
        quiet,
      ]);
      return events.at(-1)!;
    };
    const data = (event: SseEvent) => (event as SseEvent & { data: Record<string, unknown> }).data;

    // A background command on the worker: its task row, running and then ended.
    await gateway.host.sendPrompt({ agentId: agent.id, prompt: 'bg sleep 1', clientNonce: 'bg' });
    const running = await waitFor('running task', (e) => e.event === 'task');
    expect(data(running).task).toMatchObject({ kind: 'command', state: 'running' });
    const taskId = (data(running).task as { id: string }).id;
    const ended = await waitFor(
      'ended task',
      (e) => e.event === 'task' && (data(e).task as { id: string; state: string }).state === 'ended',
    );
    expect((data(ended).task as { id: string }).id).toBe(taskId);

    // A model call retried on the worker: the notice, then its end.
    await gateway.host.sendPrompt({ agentId: agent.id, prompt: 'retry once', clientNonce: 'retry' });
    const retry = await waitFor('retry notice', (e) => e.event === 'retry' && data(e).retry !== null);
    expect(data(retry).retry).toMatchObject({ attempt: 2, attempts: 3, reason: 'HTTP 503' });
    await waitFor('retry end', (e) => e.event === 'retry' && data(e).retry === null);

    // A routine made through the worker's own gateway: the change reaches this stream.
    const made = await fetch(new URL('api/updateRoutine', worker.url), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${worker.token}` },
      body: JSON.stringify({
        agentId: agent.id,
        action: 'create',
        name: 'Later',
        schedule: '@daily',
        prompt: 'later',
      }),
    });
    expect(made.status).toBe(200);
    await waitFor('routines change', (e) => e.event === 'routines');
  }, 120_000);

  it("gives an SSE client on a third gateway a running subagent's steps, once, in order, before the parent's next entry", async () => {
    const cluster = await kit.cluster();
    // The prompt goes in through one gateway, the turn runs in a worker process, the client watches a third.
    const { worker: sender } = await cluster.acceptingGateway({ name: 'sender' });
    const { http } = await cluster.acceptingGateway({ name: 'watcher' });
    await cluster.workerProcess('worker');

    const agent = await sender.host.createAgent({ name: 'Parent' });
    const response = await fetch(new URL(`api/events?agentId=${agent.id}`, http.url), {
      headers: { Authorization: `Bearer ${http.token}` },
    });
    expect(response.status).toBe(200);
    const stream = new SseReader(response);
    kit.defer(() => stream.cancel());
    await sender.host.sendPrompt({ agentId: agent.id, prompt: 'child alpha', clientNonce: 'child' });

    type Seen =
      { kind: 'entry'; entry: SequencedEntry } | { kind: 'step'; subagentId: string; entry: SequencedEntry };
    const seen: Seen[] = [];
    const quiet = setTimeout(() => void stream.cancel(), 60_000);
    kit.defer(() => clearTimeout(quiet));
    await stream.collect((event) => {
      const data = (event as SseEvent & { data: Record<string, unknown> }).data;
      if (event.event === 'entry') seen.push({ kind: 'entry', entry: data as unknown as SequencedEntry });
      if (event.event === 'subagent-entry')
        seen.push({
          kind: 'step',
          subagentId: data.subagentId as string,
          entry: data.entry as SequencedEntry,
        });
      return event.event === 'entry' && JSON.stringify(data).includes('done by worker');
    });

    const steps = seen.flatMap((item) => (item.kind === 'step' ? [item] : []));
    const subagents = new Set(steps.map((step) => step.subagentId));
    expect([...subagents]).toHaveLength(1);
    expect([...subagents][0]).toMatch(/^sand-subagent-/);
    // Every step once, in seq order, from the first.
    expect(steps.map((step) => step.entry.seq)).toEqual(steps.map((_, i) => i + 1));
    const text = JSON.stringify(steps.map((step) => step.entry));
    expect(text).toContain('alpha c1');
    expect(text).toContain('alpha c2');
    expect(text).toContain('alpha logged');
    // The child's steps come before the parent's message that follows its result.
    const lastStep = seen.findLastIndex((item) => item.kind === 'step');
    const send = seen.findIndex((item) => item.kind === 'entry' && item.entry.kind === 'send-message');
    expect(lastStep).toBeLessThan(send);
  }, 120_000);
});
