/**
 * What deleting an agent leaves in a cluster, over a real PostgreSQL and Ceph RGW: its pg-boss jobs
 * (queued turn jobs, dead-letter copies) go in the delete's transaction; a job of it that an accept
 * racing the delete left behind ends without a turn; a worker that was down during the delete clears
 * its local copies of the agent at its next start, and keeps those of the agents still there.
 */
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { scriptedProvider } from '../providers/scripted.ts';
import { s3ClientFor } from '../stores/postgres/attachments.ts';
import { useServices } from '../stores/postgres/backend.ts';
import { parseObjectStoreUrl } from '../stores/postgres/object-store-url.ts';
import { DEAD_TURN_QUEUE, startTurnQueue, TURN_QUEUE } from '../stores/postgres/turn-queue.ts';
import { agentPaths } from '../stores/files/layout.ts';
import { removeObjects } from '../testing/bucket.ts';
import { useClusterKit } from '../testing/cluster-kit.ts';
import { sendText } from '../testing/host-fixture.ts';
import { until } from '../testing/processes.ts';
import { startClusterWorker } from './worker.ts';

const services = useServices();
const masterKey = randomBytes(32);
const noTurn = () => scriptedProvider(() => ({ error: new Error('this worker runs no turn') }));

describe('a deleted agent in a cluster', () => {
  const kit = useClusterKit(services);

  function removeAgentObjects(agentId: string): void {
    const location = parseObjectStoreUrl(services().objectStoreUrl);
    kit.deferLast(async () => {
      const s3 = s3ClientFor(location, services().credentials);
      await removeObjects(s3, location.bucket, `${agentId}/`);
      s3.destroy();
    });
  }

  it('loses its turn jobs with its rows, and a job left by a racing accept runs no turn', async () => {
    const schema = kit.schemaName();
    const { worker: gateway } = await kit.startWorker({
      dataDirName: 'gateway',
      schema,
      masterKey,
      provider: noTurn(),
      workerName: 'gateway',
      takeTurns: false,
    });
    const boss = await startTurnQueue(services().databaseUrl, schema);
    kit.defer(() => boss.stop({ graceful: false, close: true }));
    const doomed = await gateway.host.createAgent({ name: 'Doomed' });
    const kept = await gateway.host.createAgent({ name: 'Kept' });
    for (const agent of [doomed, kept]) removeAgentObjects(agent.id);
    for (const nonce of ['p1', 'p2'])
      await gateway.host.sendPrompt({ agentId: doomed.id, prompt: nonce, clientNonce: nonce });
    await gateway.host.sendPrompt({ agentId: kept.id, prompt: 'stay', clientNonce: 'k1' });
    await boss.send(DEAD_TURN_QUEUE, { agentId: doomed.id, nonce: 'failed-earlier' });
    const jobsOf = async (agentId: string) =>
      (
        await gateway.db.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM "${schema}_jobs".job WHERE data->>'agentId' = $1`,
          [agentId],
        )
      ).rows[0]!.n;
    expect(await jobsOf(doomed.id)).toBe(3);

    await gateway.host.deleteAgent(doomed.id);
    expect(await jobsOf(doomed.id)).toBe(0);
    expect(await jobsOf(kept.id)).toBe(1);

    // An accept that raced the delete: its inbox row and job committed after the delete.
    await gateway.db.pool.query(
      `INSERT INTO ${gateway.db.table('inbox')} (agent_id, nonce, kind, input, accepted_at)
       VALUES ($1, 'late', 'prompt', $2, 0)`,
      [doomed.id, JSON.stringify({ kind: 'prompt', prompt: 'late', clientNonce: 'late' })],
    );
    const late = (await boss.send(
      TURN_QUEUE,
      { agentId: doomed.id, nonce: 'late' },
      { singletonKey: doomed.id },
    ))!;
    let steps = 0;
    const model = scriptedProvider(() => sendText('answered'));
    await kit.startWorker({
      dataDirName: 'turns',
      schema,
      masterKey,
      provider: { ...model, step: (request) => (steps++, model.step(request)) },
      workerName: 'turns',
    });
    // It ends at once (completed, not failed and tried again) and no turn ran for the deleted agent.
    await until(
      async () => (await boss.getJobById(TURN_QUEUE, late))?.state === 'completed',
      'the late job to end',
      20_000,
    );
    await until(async () => (await jobsOf(kept.id)) === 1 && steps > 0, 'the kept agent’s turn to run');
    const { rows } = await gateway.db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${gateway.db.table('ledger')} WHERE agent_id = $1`,
      [doomed.id],
    );
    expect(rows[0]!.n).toBe(0);
  }, 60_000);

  it('clears the local copies of a worker that was down during the delete at its next start', async () => {
    const schema = kit.schemaName();
    const { worker: gateway } = await kit.startWorker({
      dataDirName: 'gateway',
      schema,
      masterKey,
      provider: noTurn(),
      workerName: 'gateway',
      takeTurns: false,
    });
    const doomed = await gateway.host.createAgent({ name: 'Doomed' });
    const kept = await gateway.host.createAgent({ name: 'Kept' });
    for (const agent of [doomed, kept]) removeAgentObjects(agent.id);
    const dataDir = await kit.tempDir('down-worker');
    const start = () =>
      startClusterWorker({
        databaseUrl: services().databaseUrl,
        objectStoreUrl: services().objectStoreUrl,
        credentials: services().credentials,
        schema,
        masterKey,
        dataDir,
        provider: noTurn(),
        workerName: 'down',
        takeTurns: false,
      });
    const down = await start();
    // Its local copies: an upload through it (the attachment copy and the sandbox file) of each agent.
    for (const agent of [doomed, kept])
      await down.host.uploadFile({
        agentId: agent.id,
        fileName: 'notes.txt',
        bytes: new TextEncoder().encode('x'),
      });
    await down.close();
    await gateway.host.deleteAgent(doomed.id);
    const present = async (agentId: string) => {
      const paths = agentPaths(dataDir, agentId);
      const found = await Promise.all(
        [paths.agentDir, paths.sandbox].map((dir) =>
          readdir(dir).then(
            () => true,
            () => false,
          ),
        ),
      );
      return found;
    };
    expect(await present(doomed.id)).toEqual([true, true]);

    const again = await start();
    kit.defer(() => again.close());
    expect(await present(doomed.id)).toEqual([false, false]);
    expect(await present(kept.id)).toEqual([true, true]);
  }, 60_000);
});
