/**
 * A subagent lost with its worker (real PostgreSQL): whichever reader of the agent's task rows marks
 * it lost (the task list, an `await`, `openSubagent`; a gateway's session or a turn worker's kept
 * one, parked between jobs) closes its transcript, once, and the worker that ran it, back from a
 * pause, writes none of it; a worker restarted under the name of the process that ran it closes it
 * when it starts. A reader that dies between marking it lost and closing it leaves it to the next
 * reader (or to its own restart).
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '@sendbox/txcript';
import { INTERRUPTED_CALL_RESULT } from '../agent/turn-closer.ts';
import type { TurnContext } from '../agent/turn-driver.ts';
import { PARKED_EPOCH } from '../host/turn-sessions.ts';
import { scriptedProvider } from '../providers/scripted.ts';
import { noScrub } from '../secrets/scrub.ts';
import { childTranscripts } from '../stores/agent-stores.ts';
import { useServices } from '../stores/postgres/backend.ts';
import type { Database } from '../stores/postgres/database.ts';
import { SupersededError, type AgentFence } from '../stores/postgres/leases.ts';
import { PgTaskBook } from '../stores/postgres/task-book.ts';
import { PgTranscript } from '../stores/postgres/transcript.ts';
import { startHeartbeat, WORKER_TTL_MS } from '../stores/postgres/worker-heartbeats.ts';
import { WritePoints } from '../stores/write-points.ts';
import { AgentBackgrounds, type AgentBackground } from '../subagents/agent-background.ts';
import { useClusterKit } from '../testing/cluster-kit.ts';
import { until } from '../testing/processes.ts';
import { childTaskStart } from '../testing/child-task.ts';

const services = useServices();

const AGENT = 'agent-lost-child';
const CHILD = 'sand-subagent-0a0b0c0d-0e0f-4000-8000-0000000000c1';
const agent = { id: AGENT, profile: {}, scrubber: () => noScrub, now: Date.now } as unknown as TurnContext;
const line = (role: string, content: JsonObject[]) => `${JSON.stringify({ role, message: { content } })}\n`;

/** What a worker killed mid-child leaves: its task row running (its heartbeat never written: dead), a call open. */
function childLeftRunning(db: Database, worker = 'ghost'): void {
  new PgTaskBook(db, AGENT, worker, WORKER_TTL_MS).started({
    ...childTaskStart(CHILD, Date.now()),
    notice: null,
  });
  const log = new PgTranscript(db, { agentId: AGENT, epoch: null }, { childId: CHILD, worker: null });
  log.append(line('user', [{ type: 'text', text: '[t0u]\ncount my files' }]));
  log.append(
    line('assistant', [{ type: 'tool_use', name: 'shell', input: { command: 'ls', toolCallId: 'c1' } }]),
  );
}

/** A session of the agent on worker `worker`, its stores writing behind `fence`. */
function sessionOn(db: Database, worker: string, fence: AgentFence): AgentBackground {
  const backgrounds = new AgentBackgrounds({
    dataDir: '/nonexistent',
    provider: () => null,
    tools: () => [],
    writePoints: new WritePoints(),
    emit: () => undefined,
    taskBook: (agentId, bookFence, lost) =>
      new PgTaskBook(db, agentId, worker, WORKER_TTL_MS, bookFence, lost),
  });
  return backgrounds.for(agent, {
    fence,
    childTranscript: childTranscripts((childId) => new PgTranscript(db, fence, { childId, worker })),
  });
}

async function childRows(db: Database): Promise<Array<{ text: string; epoch: string | null }>> {
  const { rows } = await db.pool.query<{ text: string; epoch: string | null }>(
    `SELECT text, epoch FROM ${db.table('subagent_transcript')} WHERE agent_id = $1 AND child_id = $2 ORDER BY seq`,
    [AGENT, CHILD],
  );
  return rows;
}

async function childTaskRow(
  db: Database,
): Promise<{ state: string; lost_by: string; closing: boolean } | undefined> {
  const { rows } = await db.pool.query<{ state: string; lost_by: string; closing: boolean }>(
    `SELECT state, lost_by, closing FROM ${db.table('tasks')} WHERE agent_id = $1 AND id = $2`,
    [AGENT, CHILD],
  );
  return rows[0];
}

const closings = async (db: Database) =>
  (await childRows(db)).filter((row) => row.text.includes(INTERRUPTED_CALL_RESULT)).length;

describe('a subagent lost with its worker', () => {
  const kit = useClusterKit(services);
  /** Worker `worker-r` starting (again) on the schema, running no turns. */
  const startWorkerR = (schema: string, dataDirName: string) =>
    kit.startWorker({
      dataDirName,
      schema,
      masterKey: randomBytes(32),
      env: {},
      provider: scriptedProvider([]),
      workerName: 'worker-r',
      takeTurns: false,
    });

  it("is closed by the gateway's task list that marks it lost, once: a second reader closes nothing", async () => {
    const { db } = await kit.freshSchema();
    childLeftRunning(db);
    const gateway = sessionOn(db, 'gateway', { agentId: AGENT, epoch: null });
    const kept = sessionOn(db, 'worker-b', { agentId: AGENT, epoch: PARKED_EPOCH });

    expect(gateway.views()).toMatchObject([{ id: CHILD, state: 'interrupted' }]);
    await until(async () => (await closings(db)) === 1, "the gateway to close the child's open call", 10_000);
    // The other readers find it marked already: theirs close nothing.
    expect(kept.views()).toMatchObject([{ id: CHILD, state: 'interrupted' }]);
    expect(await gateway.tasks.wait(CHILD, { blockUntilMs: 0 })).toMatchObject({
      kind: 'complete',
      payload: { interrupted: true },
    });
    await kept.childSteps(CHILD);
    await gateway.childSteps(CHILD);
    expect(await closings(db)).toBe(1);
    expect(await childTaskRow(db)).toMatchObject({ lost_by: 'gateway' });
  });

  it('is closed by the next reader when the one that marked it lost died before closing it, not while that one lives', async () => {
    const { db } = await kit.freshSchema();
    childLeftRunning(db);
    // A reader alive (its heartbeat fresh) marks it lost and has not closed it yet: nobody else does.
    const alive = await startHeartbeat(db, 'slow-reader');
    kit.defer(() => alive.stop());
    expect(new PgTaskBook(db, AGENT, 'slow-reader', WORKER_TTL_MS).recent(10)).toMatchObject([
      { id: CHILD, state: 'interrupted' },
    ]);
    expect(await childTaskRow(db)).toMatchObject({ lost_by: 'slow-reader', closing: true });
    const gateway = sessionOn(db, 'gateway', { agentId: AGENT, epoch: null });
    gateway.views();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await childTaskRow(db)).toMatchObject({ lost_by: 'slow-reader', closing: true });
    expect(await closings(db)).toBe(0);

    // It dies (its heartbeat stops and is gone): the next read takes the child over and closes it, once.
    await alive.stop();
    gateway.views();
    await until(async () => (await closings(db)) === 1, "the gateway to close the child's open call", 10_000);
    await until(async () => (await childTaskRow(db))?.closing === false, 'the close to be recorded', 10_000);
    expect(await childTaskRow(db)).toMatchObject({ lost_by: 'gateway', closing: false });
    sessionOn(db, 'worker-c', { agentId: AGENT, epoch: PARKED_EPOCH }).views();
    await gateway.childSteps(CHILD);
    expect(await closings(db)).toBe(1);
  });

  it('is closed by a kept session parked between jobs that opens it, whose epoch no lease has; the worker that ran it writes no more', async () => {
    const { db } = await kit.freshSchema();
    childLeftRunning(db);
    const kept = sessionOn(db, 'worker-b', { agentId: AGENT, epoch: PARKED_EPOCH });

    const steps = await kept.childSteps(CHILD);
    expect(steps?.filter((step) => step.kind === 'tool-call').map((call) => call.status)).toEqual(['error']);
    const rows = await childRows(db);
    expect(rows.at(-1)!.text).toContain(INTERRUPTED_CALL_RESULT);
    expect(rows.at(-1)!.epoch).toBe(String(PARKED_EPOCH));
    expect(await closings(db)).toBe(1);

    // The worker that ran it, back from a pause under the epoch it had: refused.
    const ghost = new PgTranscript(db, { agentId: AGENT, epoch: 1 }, { childId: CHILD, worker: 'ghost' });
    expect(() => ghost.append(line('assistant', [{ type: 'text', text: 'late' }]))).toThrow(SupersededError);
    expect(await childRows(db)).toEqual(rows);
  });

  it('is closed by a worker restarted under the name of the process that ran it, when it starts', async () => {
    const { db, schema } = await kit.freshSchema();
    childLeftRunning(db, 'worker-r');
    await startWorkerR(schema, 'restarted');
    expect(await childTaskRow(db)).toEqual({ state: 'interrupted', lost_by: 'worker-r', closing: false });
    expect(await closings(db)).toBe(1);
    expect((await childRows(db)).at(-1)!.epoch).toBeNull();
  });

  it('is closed by a worker restarted under the name of a reader that marked it lost and died before closing it', async () => {
    const { db, schema } = await kit.freshSchema();
    childLeftRunning(db);
    // A reader of worker-r marks it lost; worker-r dies before closing it, and restarts.
    new PgTaskBook(db, AGENT, 'worker-r', WORKER_TTL_MS).recent(10);
    expect(await closings(db)).toBe(0);
    await startWorkerR(schema, 'restarted-reader');
    expect(await closings(db)).toBe(1);
    expect(await childTaskRow(db)).toEqual({ state: 'interrupted', lost_by: 'worker-r', closing: false });
  });
});
