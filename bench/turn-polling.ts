/**
 * What an idle cluster worker asks PostgreSQL (issue 25): one worker taking turns with
 * SENDBOX_TURN_CONCURRENCY slots and nothing to run, its queries counted at the pg client of this
 * process for `seconds` after a warm-up. "turn fetches" are the turn queue's job fetches (pg-boss's
 * key_strict_fifo fetch); "all" is every statement the worker's pools sent (pg-boss's supervise and
 * monitor, the events connection, the dead-letter queue's fetch...). The ledger's synchronous
 * connection lives in a worker thread and is not counted (an idle worker sends nothing on it).
 *
 *   npx tsx bench/turn-polling.ts [seconds=10] [concurrency=8]
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startClusterWorker } from '../packages/box/src/cluster/worker.ts';
import { scriptedProvider } from '../packages/box/src/providers/scripted.ts';
import { testServices } from '../packages/box/src/testing/services.ts';
import { countStatements, isStrictFifoFetch } from '../packages/box/src/testing/statement-count.ts';

const SECONDS = Number(process.argv[2] ?? 10);
const CONCURRENCY = process.argv[3] ?? '8';

const statements = countStatements(isStrictFifoFetch);

const services = await testServices();
const schema = `bench_${randomBytes(4).toString('hex')}`;
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-turn-polling-'));
const worker = await startClusterWorker({
  databaseUrl: services.databaseUrl,
  objectStoreUrl: services.objectStoreUrl,
  credentials: services.credentials,
  schema,
  masterKey: randomBytes(32),
  dataDir,
  env: { SENDBOX_TURN_CONCURRENCY: CONCURRENCY },
  provider: scriptedProvider(() => ({ error: new Error('no turn runs in this bench') })),
  workerName: 'idle',
});
await new Promise((resolve) => setTimeout(resolve, 3000));
statements.reset();
await new Promise((resolve) => setTimeout(resolve, SECONDS * 1000));
const { all, matched: turnFetches } = statements;
console.log(
  `idle worker, SENDBOX_TURN_CONCURRENCY ${CONCURRENCY}, ${SECONDS} s: ` +
    `turn fetches ${(turnFetches / SECONDS).toFixed(1)}/s, all statements ${(all / SECONDS).toFixed(1)}/s`,
);
await worker.host.close();
const admin = new pg.Client({ connectionString: services.databaseUrl });
await admin.connect();
await admin.query(`DROP SCHEMA IF EXISTS "${schema}_jobs" CASCADE`);
await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
await admin.end();
await rm(dataDir, { recursive: true, force: true });
await services.release();
