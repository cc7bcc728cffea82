/**
 * A background subagent that outlives its parent's turn in a cluster (real PostgreSQL and Ceph RGW):
 * once the turn's job ended and its session is parked between jobs, the child still starts background
 * commands of its own (their rows are fenced on the child's run, not on the parked epoch); a child
 * marked lost with its worker, and the parent's own turn under a superseded epoch, start none.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PARKED_EPOCH } from '../host/turn-sessions.ts';
import { scriptedProvider, withScript } from '../providers/scripted.ts';
import { useServices } from '../stores/postgres/backend.ts';
import { SupersededError } from '../stores/postgres/leases.ts';
import { PgTaskBook } from '../stores/postgres/task-book.ts';
import { WORKER_TTL_MS } from '../stores/postgres/worker-heartbeats.ts';
import { sendText } from '../testing/host-fixture.ts';
import { useClusterKit } from '../testing/cluster-kit.ts';
import { until } from '../testing/processes.ts';
import type { TaskStart } from '../tasks/task-book.ts';

const services = useServices();
const masterKey = randomBytes(32);

const CHILD = 'sand-subagent-0a0b0c0d-0e0f-4000-8000-0000000000d1';

const task = (id: string, fields: Partial<TaskStart> = {}): TaskStart => ({
  id,
  kind: 'command',
  turn: 0,
  toolCallId: `call-${id}`,
  label: `sleep ${id}`,
  outputPath: null,
  agentId: null,
  startedAt: Date.now(),
  ...fields,
});

describe('a background subagent past its parent’s turn', () => {
  const kit = useClusterKit(services);

  it('starts a background command of its own while its parent’s session is parked between jobs', async () => {
    const schema = kit.schemaName();
    // The parent: a background child, then a bubble, then the turn ends.
    const child = withScript('Run the job.', [
      // Held until the test saw the parent's job end (the file `go` in the shared sandbox).
      { toolCalls: [{ name: 'shell', input: { command: 'while [ ! -f go ]; do sleep 0.1; done' } }] },
      { toolCalls: [{ name: 'shell', input: { command: 'echo from-the-child', isBackground: true } }] },
      { text: 'started it' },
    ]);
    const provider = scriptedProvider((request) => {
      const last = request.messages.at(-1);
      if (last?.role !== 'tool')
        return {
          toolCalls: [{ name: 'task', input: { description: 'job', prompt: child, isBackground: true } }],
        };
      return last.content.some((part) => part.type === 'tool-result' && part.toolName === 'send_message')
        ? {}
        : sendText('started a child');
    });
    const { worker: gateway } = await kit.startWorker({
      dataDirName: 'bg-gateway',
      schema,
      masterKey,
      env: {},
      provider: scriptedProvider([]),
      workerName: 'gateway',
      takeTurns: false,
    });
    const { worker, dataDir } = await kit.startWorker({
      dataDirName: 'bg-worker',
      schema,
      masterKey,
      env: {},
      provider,
      workerName: 'worker-a',
      takeTurns: false,
    });
    const agent = await gateway.host.createAgent({ name: 'Parent' });
    kit.removeAgentObjects(agent.id);
    await gateway.host.sendPrompt({ agentId: agent.id, prompt: 'go', clientNonce: 'n0' });
    const lease = await worker.leases.claimWhenFree(agent.id);
    try {
      await worker.host.runQueuedTurns(agent.id, {
        epoch: lease.epoch,
        behind: (fence) => worker.stores.behind(fence),
      });
    } finally {
      await worker.leases.release(lease);
    }
    // The job ended: its session is kept, parked; the child runs on.
    expect(worker.host.keptTurnSession(agent.id)).toBeDefined();
    const { db } = worker;
    const rows = async () =>
      (
        await db.pool.query<{
          id: string;
          kind: string;
          tool_call_id: string;
          state: string;
          outcome: string;
        }>(
          `SELECT id, kind, tool_call_id, state, outcome FROM ${db.table('tasks')} WHERE agent_id = $1 ORDER BY started_at`,
          [agent.id],
        )
      ).rows;
    expect((await rows()).map((row) => [row.kind, row.state])).toEqual([['subagent', 'running']]);
    const childId = (await rows())[0]!.id;
    await writeFile(path.join(dataDir, 'sandboxes', agent.id, 'go'), '');

    await until(
      async () => (await rows()).every((row) => row.state === 'ended') && (await rows()).length === 2,
      'the child and its background command to end',
      30_000,
    );
    const [, command] = await rows();
    expect(command).toMatchObject({ kind: 'command', state: 'ended' });
    expect(command!.tool_call_id.startsWith(`${childId}/`)).toBe(true);
    expect(JSON.parse(command!.outcome)).toMatchObject({ exitCode: 0 });
    const steps = await gateway.host.openSubagent(agent.id, childId);
    expect(steps.filter((step) => step.kind === 'tool-call').map((call) => [call.name, call.status])).toEqual(
      [
        ['shell', 'success'],
        ['shell', 'success'],
      ],
    );
  }, 60_000);

  it('records no task a lost child or a superseded turn starts', async () => {
    const { db } = await kit.freshSchema();
    const agentId = 'agent-fenced';
    const parked = { agentId, epoch: PARKED_EPOCH };
    const onA = new PgTaskBook(db, agentId, 'worker-a', WORKER_TTL_MS, parked);
    new PgTaskBook(db, agentId, 'worker-a', WORKER_TTL_MS).started(
      task(CHILD, { kind: 'subagent', agentId: CHILD, label: 'job' }),
    );
    // The child runs here: what it starts is recorded under the parked epoch.
    onA.started(task('by-child', { startedBy: CHILD, toolCallId: `${CHILD}/c1` }));
    // The parent's own turn under an epoch the lease does not have: refused.
    expect(() => onA.started(task('by-parent'))).toThrow(SupersededError);
    // The child on another worker's book (it does not run there): refused.
    const onB = new PgTaskBook(db, agentId, 'worker-b', WORKER_TTL_MS, parked);
    expect(() => onB.started(task('elsewhere', { startedBy: CHILD }))).toThrow(SupersededError);
    // Marked lost (worker A found dead by B's read): A's child starts nothing more.
    await db.pool.query(
      `UPDATE ${db.table('tasks')} SET state = 'interrupted', lost_by = 'worker-b' WHERE id = $1`,
      [CHILD],
    );
    expect(() => onA.started(task('after-lost', { startedBy: CHILD, toolCallId: `${CHILD}/c2` }))).toThrow(
      SupersededError,
    );
    const { rows } = await db.pool.query<{ id: string }>(
      `SELECT id FROM ${db.table('tasks')} WHERE agent_id = $1 ORDER BY started_at, id`,
      [agentId],
    );
    expect(rows.map((row) => row.id).sort()).toEqual(['by-child', CHILD].sort());
  });
});
