/**
 * listAgents on a cluster gateway (issue 25): N agents made through one worker (each with one
 * upload, so each has ledger rows), then listed through another worker that has never opened them:
 * its first list (every agent's session opened) and its next lists (each agent refreshed from its
 * rows), timed at the caller. A cluster gateway keeps no roster of its own, so a list costs a few
 * round trips per agent.
 *
 *   npx tsx bench/cluster-roster.ts [agents=200] [lists=10]
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startClusterWorker } from '../packages/box/src/cluster/worker.ts';
import { scriptedProvider } from '../packages/box/src/providers/scripted.ts';
import { testServices } from '../packages/box/src/testing/services.ts';
import { s3ClientFor } from '../packages/box/src/stores/postgres/attachments.ts';
import { parseObjectStoreUrl } from '../packages/box/src/stores/postgres/object-store-url.ts';
import { removeObjects } from '../packages/box/src/testing/bucket.ts';

const AGENTS = Number(process.argv[2] ?? 200);
const LISTS = Number(process.argv[3] ?? 10);

const services = await testServices();
const schema = `bench_${randomBytes(4).toString('hex')}`;
const masterKey = randomBytes(32);
const dirs: string[] = [];
const worker = async (name: string) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `sendbox-bench-roster-${name}-`));
  dirs.push(dataDir);
  return startClusterWorker({
    databaseUrl: services.databaseUrl,
    objectStoreUrl: services.objectStoreUrl,
    credentials: services.credentials,
    schema,
    masterKey,
    dataDir,
    env: {},
    provider: scriptedProvider(() => ({ error: new Error('no turn runs in this bench') })),
    workerName: name,
    takeTurns: false,
  });
};
const maker = await worker('maker');
const ids: string[] = [];
for (let i = 0; i < AGENTS; i++) {
  const agent = await maker.host.createAgent({ name: `Agent ${i}` });
  ids.push(agent.id);
  await maker.host.uploadFile({
    agentId: agent.id,
    fileName: 'notes.txt',
    bytes: new TextEncoder().encode(`${i}`),
  });
}
const lister = await worker('lister');
const timed = async () => {
  const start = performance.now();
  const rows = await lister.host.listAgents();
  if (rows.length !== AGENTS) throw new Error(`listed ${rows.length} agents of ${AGENTS}`);
  return performance.now() - start;
};
const first = await timed();
const next: number[] = [];
for (let i = 0; i < LISTS; i++) next.push(await timed());
next.sort((a, b) => a - b);
console.log(
  `listAgents on a cluster gateway, ${AGENTS} agents: first list ${first.toFixed(0)} ms; ` +
    `next ${LISTS} lists p50 ${next[Math.floor(LISTS / 2)]!.toFixed(1)} ms, max ${next.at(-1)!.toFixed(1)} ms`,
);
await lister.close();
await maker.close();
const location = parseObjectStoreUrl(services.objectStoreUrl);
const s3 = s3ClientFor(location, services.credentials);
for (const id of ids) await removeObjects(s3, location.bucket, `${id}/`);
s3.destroy();
const admin = new pg.Client({ connectionString: services.databaseUrl });
await admin.connect();
await admin.query(`DROP SCHEMA IF EXISTS "${schema}_jobs" CASCADE`);
await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
await admin.end();
for (const dir of dirs) await rm(dir, { recursive: true, force: true });
await services.release();
