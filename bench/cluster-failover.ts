/**
 * Failover in the cluster (issue 25): kill → first record by the new worker. Two worker processes
 * (testing/cluster-worker-child.ts) take turns; each round an agent gets a prompt whose shell call
 * runs for a minute, the worker running it is SIGKILLed while the call is open, and the time to the
 * first ledger row written under a later lease epoch (the other worker going on with the cut turn) is
 * measured. The killed worker is replaced before the next round. The target is p99 < 15 s.
 *
 * Uses SENDBOX_TEST_DATABASE_URL / SENDBOX_TEST_OBJECT_STORE_URL when set, else starts PostgreSQL
 * and Ceph RGW itself (packages/box/src/testing/services.ts).
 *
 *   npx tsx bench/cluster-failover.ts [rounds=5]
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { agentPaths } from '../packages/box/src/stores/files/layout.ts';
import {
  startAcceptingWorker,
  WorkerProcesses,
  type WorkerProcess,
} from '../packages/box/src/testing/cluster-children.ts';
import { ledgerRows } from '../packages/box/src/testing/cluster-rows.ts';
import { until } from '../packages/box/src/testing/processes.ts';
import { testServices } from '../packages/box/src/testing/services.ts';

const ROUNDS = Number(process.argv[2] ?? 5);

const services = await testServices();
const schema = `bench_${randomBytes(4).toString('hex')}`;
const masterKey = randomBytes(32);
const root = await mkdtemp(path.join(os.tmpdir(), 'sendbox-bench-failover-'));
const cluster = {
  databaseUrl: services.databaseUrl,
  objectStoreUrl: services.objectStoreUrl,
  credentials: services.credentials,
  schema,
};
const gateway = await startAcceptingWorker({
  ...cluster,
  masterKey,
  dataDir: await mkdtemp(path.join(root, 'gateway-')),
});
const processes = new WorkerProcesses();
let started = 0;
const startWorker = async (): Promise<WorkerProcess> => {
  const name = `worker-${started++}`;
  return processes.start({
    ...cluster,
    keyHex: masterKey.toString('hex'),
    dataDir: await mkdtemp(path.join(root, `${name}-`)),
    name,
  });
};
let workers = [await startWorker(), await startWorker()];

const times: number[] = [];
try {
  for (let round = 0; round < ROUNDS; round++) {
    const agent = await gateway.host.createAgent({ name: `failover ${round}` });
    await gateway.host.sendPrompt({ agentId: agent.id, prompt: 'slow 60', clientNonce: `r${round}` });
    const runs = (worker: WorkerProcess) =>
      existsSync(path.join(agentPaths(worker.dataDir, agent.id).sandbox, 'log.txt'));
    await until(() => workers.some(runs), 'a worker to open the shell call', 60_000);
    const victim = workers.find(runs)!;
    const epoch = (await gateway.leases.holder(agent.id))!.epoch;
    victim.child.kill('SIGKILL');
    const killedAt = performance.now();
    await until(
      async () => (await ledgerRows(gateway.db, agent.id)).some((row) => (row.epoch ?? 0) > epoch),
      'the other worker to write its first row',
      60_000,
    );
    times.push(performance.now() - killedAt);
    console.log(`round ${round}: kill -> first row by the new worker ${(times.at(-1)! / 1000).toFixed(1)} s`);
    workers = [...workers.filter((worker) => worker !== victim), await startWorker()];
  }
} finally {
  processes.stopAll();
  await gateway.db.pool.query(`DROP SCHEMA IF EXISTS "${schema}_jobs" CASCADE`).catch(() => undefined);
  await gateway.db.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
  await gateway.close();
  await rm(root, { recursive: true, force: true });
  await services.release();
}

const sorted = [...times].sort((a, b) => a - b);
const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
console.log(
  `failover, kill -> first record by the new worker (${times.length} kills): p50 ${(at(0.5) / 1000).toFixed(1)} s, p99 ${(at(0.99) / 1000).toFixed(1)} s (target < 15 s)`,
);
