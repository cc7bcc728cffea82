/**
 * A subagent's transcript in a cluster (real PostgreSQL, Ceph RGW, worker processes): the child runs
 * in a worker process and its transcript is rows of `subagent_transcript`, not a file on that
 * worker's disk; a gateway that never ran it opens its steps (after the worker is gone too), `sendbox
 * export` writes its JSONL where file mode keeps it and txcript reads it back with the same records,
 * listed under its parent; deleting the agent deletes the child's rows; a duplicate of the agent
 * takes the child's rows and task row along under a new child id.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { grokBot } from '@sendbox/txcript';
import { describe, expect, it } from 'vitest';
import { INTERRUPTED_CALL_RESULT } from '../agent/turn-closer.ts';
import { scriptedProvider, withScript } from '../providers/scripted.ts';
import { agentPaths } from '../stores/files/layout.ts';
import { useServices } from '../stores/postgres/backend.ts';
import type { Database } from '../stores/postgres/database.ts';
import { ledgerIds, useClusterKit } from '../testing/cluster-kit.ts';
import { sendText } from '../testing/host-fixture.ts';
import { until } from '../testing/processes.ts';
import { exportCluster } from './export.ts';

const services = useServices();

async function childText(db: Database, agentId: string, childId: string): Promise<string> {
  const { rows } = await db.pool.query<{ text: string }>(
    `SELECT text FROM ${db.table('subagent_transcript')} WHERE agent_id = $1 AND child_id = $2 ORDER BY seq`,
    [agentId, childId],
  );
  return rows.map((row) => row.text).join('');
}

const recordsOf = (text: string) => grokBot.text.parse(text, 'transcript').records;

describe("a subagent's transcript in a cluster", () => {
  const kit = useClusterKit(services);

  it('is rows any gateway opens the steps from, and sendbox export writes as file mode would', async () => {
    const cluster = await kit.cluster();
    const { db } = cluster;
    const { worker: gateway } = await cluster.acceptingGateway();
    const worker = await cluster.workerProcess('worker');

    const agent = await gateway.host.createAgent({ name: 'Parent' });
    await gateway.host.sendPrompt({ agentId: agent.id, prompt: 'child beta', clientNonce: 'child' });
    await until(async () => (await ledgerIds(db, agent.id)).includes('t0e'), 'the turn to end', 60_000);
    const { rows: tasks } = await db.pool.query<{ child_id: string; worker: string; state: string }>(
      `SELECT child_id, worker, state FROM ${db.table('tasks')} WHERE agent_id = $1 AND kind = 'subagent'`,
      [agent.id],
    );
    expect(tasks.map((task) => [task.worker, task.state])).toEqual([[worker.name, 'ended']]);
    const childId = tasks[0]!.child_id;
    expect(childId).toMatch(/^sand-subagent-/);

    // The rows hold the child's whole run; the worker's disk holds none of it.
    const text = await childText(db, agent.id, childId);
    expect(text).toContain('beta c1');
    expect(text).toContain('beta logged');
    const local = await readdir(path.join(worker.dataDir, 'agent-transcripts')).catch(() => []);
    expect(local.filter((name) => name.startsWith('sand-subagent-'))).toEqual([]);

    // The worker that ran it is gone; a gateway that never ran it opens its steps from the rows.
    worker.child.kill('SIGKILL');
    const steps = await gateway.host.openSubagent(agent.id, childId);
    const calls = steps.filter((step) => step.kind === 'tool-call');
    expect(calls.map((call) => [call.name, call.status])).toEqual([
      ['shell', 'success'],
      ['shell', 'success'],
    ]);
    expect(JSON.stringify(calls)).toContain('beta c2');
    expect(JSON.stringify(steps.filter((step) => step.kind === 'thinking'))).toContain('beta logged');
    // An id this agent did not start: 404, as before.
    await expect(gateway.host.openSubagent(agent.id, `sand-subagent-${randomUUID()}`)).rejects.toMatchObject({
      status: 404,
    });

    // The export: the child's JSONL where file mode keeps it, the exact lines; txcript lists it under
    // its parent and reads the same records.
    const out = path.join(await kit.tempDir('export'), 'out');
    await exportCluster(db, out);
    const exported = await readFile(agentPaths(out, childId).jsonl, 'utf8');
    expect(exported).toBe(text);
    expect(recordsOf(exported)).toEqual(recordsOf(text));
    const store = grokBot.store!({
      TXCRIPT_GROK_BOT_ROOT: path.join(out, 'agent-transcripts'),
      TXCRIPT_GROK_BOT_AGENTS: path.join(out, 'agents'),
    });
    const listed = await store.discover({ cache: false });
    expect(listed.sessions.find((session) => session.id === childId)).toMatchObject({ parentId: agent.id });
    const loaded = await store.load(childId);
    expect(JSON.stringify(loaded.transcript)).toContain('beta c2');

    // Deleting the agent (once the killed worker's lease lapsed) deletes its children's rows.
    await until(
      async () =>
        (
          await db.pool.query(
            `SELECT 1 FROM ${db.table('leases')} WHERE agent_id = $1 AND expires_at > now()`,
            [agent.id],
          )
        ).rowCount === 0,
      'the lease to lapse',
      30_000,
    );
    await gateway.host.deleteAgent(agent.id);
    expect(await childText(db, agent.id, childId)).toBe('');
    kit.removeAgentObjects(agent.id);
  }, 120_000);

  it('survives the worker that ran the child: the worker taking the agent over closes its open call in the rows', async () => {
    const cluster = await kit.cluster();
    const { db } = cluster;
    const { worker: gateway } = await cluster.acceptingGateway();
    const a = await cluster.workerProcess('worker-a');
    const agent = await gateway.host.createAgent({ name: 'Parent' });
    await gateway.host.sendPrompt({ agentId: agent.id, prompt: 'child gammaslow', clientNonce: 'child' });
    const childRow = async () =>
      (
        await db.pool.query<{ child_id: string }>(
          `SELECT child_id FROM ${db.table('tasks')} WHERE agent_id = $1 AND kind = 'subagent'`,
          [agent.id],
        )
      ).rows[0]?.child_id;
    // The child's second call (its `sleep 120`) is open on worker A.
    await until(
      async () => {
        const child = await childRow();
        return child !== undefined && (await childText(db, agent.id, child)).includes('sleep 120');
      },
      "the child's second call",
      60_000,
    );
    const childId = (await childRow())!;
    const epochA = Number(
      (
        await db.pool.query<{ epoch: string }>(
          `SELECT epoch FROM ${db.table('leases')} WHERE agent_id = $1`,
          [agent.id],
        )
      ).rows[0]!.epoch,
    );

    await cluster.workerProcess('worker-b');
    a.child.kill('SIGKILL');
    await until(
      async () => (await childText(db, agent.id, childId)).includes(INTERRUPTED_CALL_RESULT),
      "worker B to close the child's open call",
      60_000,
    );
    const { rows } = await db.pool.query<{ text: string; epoch: string }>(
      `SELECT text, epoch FROM ${db.table('subagent_transcript')} WHERE agent_id = $1 AND child_id = $2 ORDER BY seq`,
      [agent.id, childId],
    );
    // Every line A wrote stays; the closing one is B's, under its later epoch.
    expect(rows.slice(0, -1).every((row) => Number(row.epoch) === epochA)).toBe(true);
    expect(rows.at(-1)!.text).toContain(INTERRUPTED_CALL_RESULT);
    expect(Number(rows.at(-1)!.epoch)).toBeGreaterThan(epochA);
    const steps = await gateway.host.openSubagent(agent.id, childId);
    expect(steps.filter((step) => step.kind === 'tool-call').map((call) => [call.name, call.status])).toEqual(
      [
        ['shell', 'success'],
        ['shell', 'error'],
      ],
    );
  }, 150_000);

  it("is copied with the agent: the duplicate's task row and rows name a new child id, which its openSubagent opens", async () => {
    const schema = kit.schemaName();
    const masterKey = randomBytes(32);
    const child = withScript('Log delta.', [
      { toolCalls: [{ name: 'shell', input: { command: "echo 'delta c1'" } }] },
      { text: 'delta logged' },
    ]);
    const provider = scriptedProvider((request) => {
      const last = request.messages.at(-1);
      if (last?.role !== 'tool')
        return { toolCalls: [{ name: 'task', input: { description: 'log delta', prompt: child } }] };
      return last.content.some((part) => part.type === 'tool-result' && part.toolName === 'send_message')
        ? {}
        : sendText('logged');
    });
    const { worker: gateway } = await kit.startWorker({
      dataDirName: 'copy-gateway',
      schema,
      masterKey,
      env: {},
      provider: scriptedProvider([]),
      workerName: 'gateway',
      takeTurns: false,
    });
    await kit.startWorker({
      dataDirName: 'copy-worker',
      schema,
      masterKey,
      env: {},
      provider,
      workerName: 'worker-a',
    });
    const { db } = gateway;
    const agent = await gateway.host.createAgent({ name: 'Parent' });
    kit.removeAgentObjects(agent.id);
    await gateway.host.sendPrompt({ agentId: agent.id, prompt: 'go', clientNonce: 'n0' });
    await until(async () => (await ledgerIds(db, agent.id)).includes('t0e'), 'the turn to end', 60_000);
    const [task] = await gateway.host.listTasks(agent.id);
    const childId = task!.agentId!;
    const text = await childText(db, agent.id, childId);
    expect(text).toContain('delta c1');

    const copy = await gateway.host.duplicateAgent(agent.id);
    kit.removeAgentObjects(copy.id);
    const copied = await gateway.host.listTasks(copy.id);
    expect(copied).toMatchObject([{ kind: 'subagent', state: 'ended', label: 'log delta' }]);
    const copiedId = copied[0]!.agentId!;
    expect(copiedId).not.toBe(childId);
    expect(await childText(db, copy.id, copiedId)).toBe(text);
    expect(await childText(db, copy.id, childId)).toBe('');
    const steps = await gateway.host.openSubagent(copy.id, copiedId);
    expect(steps.filter((step) => step.kind === 'tool-call').map((call) => [call.name, call.status])).toEqual(
      [['shell', 'success']],
    );
    // The original's child is as it was.
    expect(await childText(db, agent.id, childId)).toBe(text);
  }, 120_000);
});
