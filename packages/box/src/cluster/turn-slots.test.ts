/**
 * A worker's turn slots on a real PostgreSQL (pg-boss 12 in a schema of the test's own): one fetcher
 * for all slots, so an idle worker asks for jobs once per poll whatever its concurrency; it runs up
 * to its slots at once, one job of an agent at a time and in order, and an agent's next job starts
 * when its last one ends, not at the next poll. The statements are counted at the pg client (this
 * file runs in a process of its own).
 */
import { describe, expect, it } from 'vitest';
import { useServices } from '../stores/postgres/backend.ts';
import { Leases } from '../stores/postgres/leases.ts';
import { startTurnQueue, TURN_QUEUE, type TurnJob } from '../stores/postgres/turn-queue.ts';
import { useClusterKit } from '../testing/cluster-kit.ts';
import { until } from '../testing/processes.ts';
import { countStatements, isStrictFifoFetch } from '../testing/statement-count.ts';
import { startTurnWorker } from './turn-worker.ts';

const services = useServices();

/** The turn queue's job fetches sent by this process. */
const statements = countStatements(isStrictFifoFetch);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('turn slots', () => {
  const kit = useClusterKit(services);

  async function turnWorker(concurrency: number, run: (agentId: string) => Promise<void>) {
    const fresh = await kit.freshSchema();
    const boss = await startTurnQueue(services().databaseUrl, fresh.schema);
    kit.defer(() => boss.stop({ graceful: false, close: true }));
    const worker = await startTurnWorker({
      boss,
      leases: new Leases(fresh.db, 'slots-test'),
      concurrency,
      hasWork: () => Promise.resolve(true),
      run: (agentId) => run(agentId),
    });
    kit.defer(() => worker.stop());
    const send = (agentId: string, nonce: string) =>
      boss.send(TURN_QUEUE, { agentId, nonce } satisfies TurnJob, { singletonKey: agentId });
    return { worker, send, boss };
  }

  it('asks for jobs once per poll when idle, whatever its number of slots', async () => {
    await turnWorker(8, () => Promise.resolve());
    await sleep(600);
    const before = statements.matched;
    await sleep(2000);
    // One fetch every 0.5 s: 4 in 2 s (one pg-boss worker per slot made 32).
    const fetches = statements.matched - before;
    expect(fetches).toBeGreaterThanOrEqual(2);
    expect(fetches).toBeLessThanOrEqual(6);
  });

  it('runs up to its slots at once, one job of an agent at a time', async () => {
    const runs: Array<{ agentId: string; start: number; end: number }> = [];
    let open = 0;
    let most = 0;
    const { send } = await turnWorker(3, async (agentId) => {
      const run = { agentId, start: Date.now(), end: 0 };
      runs.push(run);
      most = Math.max(most, ++open);
      await sleep(300);
      open--;
      run.end = Date.now();
    });
    const agents = ['agent-a', 'agent-b', 'agent-c', 'agent-d', 'agent-e'];
    for (const nonce of ['n1', 'n2', 'n3']) for (const agentId of agents) await send(agentId, nonce);
    await until(() => runs.length === 15 && runs.every((run) => run.end > 0), 'every job to run', 60_000);
    expect(most).toBe(3);
    for (const agentId of agents) {
      const own = runs.filter((run) => run.agentId === agentId);
      expect(own).toHaveLength(3);
      // Never two of an agent's jobs at once.
      for (let i = 1; i < own.length; i++) expect(own[i]!.start).toBeGreaterThanOrEqual(own[i - 1]!.end);
    }
  }, 90_000);

  it('keeps a long job’s heartbeat, so pg-boss does not fail it and run it again', async () => {
    let runs = 0;
    const { send, boss } = await turnWorker(2, async () => {
      runs++;
      // Longer than the queue's heartbeat (10 s): without a touch, supervise fails it at 10 s.
      await sleep(13_000);
    });
    const id = (await send('agent-long', 'n1'))!;
    await until(
      async () => (await boss.getJobById(TURN_QUEUE, id))?.state === 'completed',
      'the job to complete',
      30_000,
    );
    expect(runs).toBe(1);
  }, 60_000);
});
