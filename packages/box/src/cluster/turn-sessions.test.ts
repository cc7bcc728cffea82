/**
 * The sessions a cluster worker keeps between an agent's turn jobs (host/turn-sessions.ts), over a
 * real PostgreSQL and Ceph RGW. Each job is run by hand behind a lease this test claims, so it
 * chooses which worker runs it: the agent moves from worker A to B and back, and A's kept session
 * must see everything B wrote meanwhile.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AgentSession } from '../agent/agent-session.ts';
import { scriptedProvider, type ScriptedProvider } from '../providers/scripted.ts';
import { useServices } from '../stores/postgres/backend.ts';
import { SupersededError } from '../stores/postgres/leases.ts';
import { sendText } from '../testing/host-fixture.ts';
import { until } from '../testing/processes.ts';
import { agentPaths } from '../stores/files/layout.ts';
import { TurnSessions } from '../host/turn-sessions.ts';
import { useClusterKit } from '../testing/cluster-kit.ts';
import type { ClusterWorker } from './worker.ts';

const services = useServices();
const masterKey = randomBytes(32);

describe('turn sessions kept between jobs', () => {
  const kit = useClusterKit(services);
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** Workers that take no job from the queue (unless told): the test runs each job on the worker it names. */
  async function workers(providers: ScriptedProvider[], takeTurns = false): Promise<ClusterWorker[]> {
    const schema = kit.schemaName();
    const started: ClusterWorker[] = [];
    for (const [i, provider] of providers.entries()) {
      const { worker } = await kit.startWorker({
        dataDirName: `kept-${i}`,
        schema,
        masterKey,
        env: {},
        provider,
        workerName: `worker-${i}`,
        takeTurns: takeTurns && i > 0,
      });
      started.push(worker);
    }
    return started;
  }

  /** One turn job of the agent on `worker`, behind a lease it claims and lets go after. */
  async function runJob(worker: ClusterWorker, agentId: string): Promise<number> {
    const lease = await worker.leases.claimWhenFree(agentId);
    try {
      await worker.host.runQueuedTurns(agentId, {
        epoch: lease.epoch,
        behind: (fence) => worker.stores.behind(fence),
      });
    } finally {
      await worker.leases.release(lease);
    }
    return lease.epoch;
  }

  async function ledgerIds(worker: ClusterWorker, agentId: string): Promise<string[]> {
    const { rows } = await worker.db.pool.query<{ id: string }>(
      `SELECT id FROM ${worker.db.table('ledger')} WHERE agent_id = $1 ORDER BY seq`,
      [agentId],
    );
    return rows.map((row) => row.id);
  }

  /** A model that sends one bubble per turn, saying who answered. */
  const answering = (name: string) =>
    scriptedProvider((request) =>
      request.messages.at(-1)?.role === 'tool' ? {} : sendText(`answer from ${name}`),
    );

  /** What the model was given in the call that answered `prompt`. */
  const callFor = (provider: ScriptedProvider, prompt: string) =>
    JSON.stringify(
      provider.requests.find((request) => JSON.stringify(request.messages.at(-1)).includes(prompt)),
    );

  it('runs the next job in the kept session, caught up with what another worker wrote meanwhile', async () => {
    const a = answering('A');
    const b = answering('B');
    const [gateway, workerA, workerB] = await workers([scriptedProvider([]), a, b]);
    // Each worker's ledger and transcript connection is opened at start, not by its first turn.
    for (const worker of [gateway!, workerA!, workerB!]) expect(worker.db.sync().started).toBe(true);
    const agent = await gateway!.host.createAgent({ name: 'Moving agent' });

    await gateway!.host.sendPrompt({ agentId: agent.id, prompt: 'prompt zero', clientNonce: 'n0' });
    await runJob(workerA!, agent.id);
    const kept = workerA!.host.keptTurnSession(agent.id);
    expect(kept).toBeDefined();

    // The agent moves: B runs its next turn (B opens a session of its own).
    await gateway!.host.sendPrompt({ agentId: agent.id, prompt: 'prompt one', clientNonce: 'n1' });
    await runJob(workerB!, agent.id);

    // Back on A: its kept session runs the job, no session is opened for it...
    await gateway!.host.sendPrompt({ agentId: agent.id, prompt: 'prompt two', clientNonce: 'n2' });
    const opens = vi.spyOn(AgentSession, 'open');
    await runJob(workerA!, agent.id);
    expect(opens).not.toHaveBeenCalled();
    expect(workerA!.host.keptTurnSession(agent.id)).toBe(kept);

    // ...and it saw B's turn: the next turn number, and B's turn in what the model reads.
    const ids = await ledgerIds(gateway!, agent.id);
    expect(ids.filter((id) => /^t\d+[ue]$/.test(id))).toEqual(['t0u', 't0e', 't1u', 't1e', 't2u', 't2e']);
    const third = callFor(a, 'prompt two');
    expect(third).toContain('prompt zero');
    expect(third).toContain('prompt one');
    expect(third).toContain('answer from B');
    // B's input is settled in A's view too: A answered only its own two prompts.
    expect(a.requests.filter((request) => request.messages.at(-1)?.role === 'user')).toHaveLength(2);
  });

  it('parks a kept session between jobs: a write it tried then is refused, and the next job writes again', async () => {
    const [gateway, workerA] = await workers([scriptedProvider([]), answering('A')]);
    const agent = await gateway!.host.createAgent({ name: 'Parked agent' });
    await gateway!.host.sendPrompt({ agentId: agent.id, prompt: 'one', clientNonce: 'p1' });
    await runJob(workerA!, agent.id);
    const kept = workerA!.host.keptTurnSession(agent.id)!;
    const before = await ledgerIds(gateway!, agent.id);

    // The lease is let go and nobody holds it: a parked session still may not write.
    let refused: unknown;
    try {
      kept.writer.appendEntries([
        { id: 'stray', kind: 'notice', level: 'info', text: 'written between jobs', timestampMs: Date.now() },
      ]);
    } catch (error) {
      refused = error;
    }
    expect((refused as Error | undefined)?.cause).toBeInstanceOf(SupersededError);
    expect(await ledgerIds(gateway!, agent.id)).toEqual(before);

    await gateway!.host.sendPrompt({ agentId: agent.id, prompt: 'two', clientNonce: 'p2' });
    const epoch = await runJob(workerA!, agent.id);
    const { rows } = await gateway!.db.pool.query<{ id: string; epoch: string }>(
      `SELECT id, epoch FROM ${gateway!.db.table('ledger')} WHERE agent_id = $1 AND id = 't1e'`,
      [agent.id],
    );
    expect(rows.map((row) => Number(row.epoch))).toEqual([epoch]);
  });

  it('runs an input accepted during a job’s turn in the same job, right after that turn', async () => {
    // 'hold' waits in a shell call until the test lets it go; any other prompt is answered.
    const a = scriptedProvider((request) => {
      const last = request.messages.at(-1);
      if (last?.role === 'tool') return {};
      if (JSON.stringify(last).includes('hold'))
        return { toolCalls: [{ name: 'shell', input: { command: 'until [ -f go ]; do sleep 0.05; done' } }] };
      return sendText('answered');
    });
    const [gateway, workerA] = await workers([scriptedProvider([]), a]);
    const agent = await gateway!.host.createAgent({ name: 'Busy agent' });
    await gateway!.host.sendPrompt({ agentId: agent.id, prompt: 'hold', clientNonce: 'h1' });
    const job = runJob(workerA!, agent.id);
    await until(async () => (await ledgerIds(gateway!, agent.id)).includes('t0u'), 'turn 0 to start');
    await gateway!.host.sendPrompt({ agentId: agent.id, prompt: 'next', clientNonce: 'h2' });
    await writeFile(path.join(agentPaths(workerA!.host.dataDir, agent.id).sandbox, 'go'), '');
    await job;
    const ids = await ledgerIds(gateway!, agent.id);
    expect(ids.filter((id) => /^t\d+[ue]$/.test(id))).toEqual(['t0u', 't0e', 't1u', 't1e']);
  });

  it('ends at once a job whose input an earlier job of the agent already ran', async () => {
    const [gateway, workerA] = await workers([scriptedProvider([]), answering('A')], true);
    const agent = await gateway!.host.createAgent({ name: 'Queued agent' });
    const runs = vi.spyOn(TurnSessions.prototype, 'run');
    // Both accepted before the first job starts: it runs both, and the second input's job has nothing left.
    const lease = await workerA!.leases.claimWhenFree(agent.id);
    await gateway!.host.sendPrompt({ agentId: agent.id, prompt: 'one', clientNonce: 'q1' });
    await gateway!.host.sendPrompt({ agentId: agent.id, prompt: 'two', clientNonce: 'q2' });
    await workerA!.leases.release(lease);
    await until(async () => (await ledgerIds(gateway!, agent.id)).includes('t1e'), 'both turns to end');
    await until(async () => {
      const { rows } = await workerA!.db.pool.query<{ n: string }>(
        `SELECT count(*) AS n FROM ${workerA!.db.schema.replace(/"$/, '_jobs"')}.job WHERE singleton_key = $1 AND state = 'completed'`,
        [agent.id],
      );
      return Number(rows[0]!.n) === 2;
    }, 'both jobs to complete');
    expect(runs).toHaveBeenCalledTimes(1);
  });

  it('fails a job whose turns could not start (uploads out of reach), keeping its input for the next try', async () => {
    const [gateway, workerA] = await workers([scriptedProvider([]), answering('A')]);
    const agent = await gateway!.host.createAgent({ name: 'Unlucky agent' });
    await gateway!.host.sendPrompt({ agentId: agent.id, prompt: 'prompt zero', clientNonce: 'n0' });
    const lease = await workerA!.leases.claimWhenFree(agent.id);
    try {
      // The queue retries a job that throws; one that resolves is done, and its input would wait forever.
      await expect(
        workerA!.host.runQueuedTurns(agent.id, {
          epoch: lease.epoch,
          behind: (fence) => workerA!.stores.behind(fence),
          beforeTurn: () => Promise.reject(new Error('the bucket is out of reach')),
        }),
      ).rejects.toThrow('the bucket is out of reach');
    } finally {
      await workerA!.leases.release(lease);
    }
    expect((await gateway!.host.pendingInputs(agent.id)).map((input) => input.nonce)).toEqual(['n0']);
    await runJob(workerA!, agent.id);
    expect((await ledgerIds(gateway!, agent.id)).filter((id) => /^t\d+[ue]$/.test(id))).toEqual([
      't0u',
      't0e',
    ]);
  });
});
