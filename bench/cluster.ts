/**
 * The cluster backend (issue 25), what of it exists so far: the accept path on PostgreSQL alone
 * (PgInbox.accept: the inbox row and its pg-boss turn job in one transaction, with the inputs the
 * worker accepts meanwhile (accept-batch.ts), committed before it resolves), from 3 "workers"
 * (each its own pool and pg-boss) over 20 agents at once; the S3 attachment write; the send path
 * (a send's ledger entry appended behind the agent's lease fence, through the synchronous connection
 * the turn engine writes with); and the next queued turn of one
 * agent on a turn worker (its user entry's time minus the previous turn's end); and a prompt sent
 * through one worker's gateway (HTTP, 2xx) to its user entry on an SSE stream of that gateway, the
 * turn run by another worker (the entry comes back through LISTEN/NOTIFY and the rows), at an idle
 * agent. Failover (kill → first record by the new worker) is bench/cluster-failover.ts.
 *
 * Uses SENDBOX_TEST_DATABASE_URL / SENDBOX_TEST_OBJECT_STORE_URL when set (.ci/run's services),
 * else starts PostgreSQL and Ceph RGW itself (packages/box/src/testing/services.ts).
 *
 * The accept path is measured twice: flat out (60 clients at once, each sending its next prompt as its
 * last is accepted: the throughput, with the queueing that saturation brings in its latencies), and
 * at a steady offered rate (`rate` prompts a second for 3 s, each sent on schedule whatever is still
 * waiting, its latency counted from when it was due: the latency a user sees at that load).
 *
 *   npx tsx bench/cluster.ts [prompts=2000] [sse-prompts=60] [rate=600]
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import { AttachmentStore } from '../packages/box/src/attachments/store.ts';
import { S3AttachmentStore, s3ClientFor } from '../packages/box/src/stores/postgres/attachments.ts';
import { openDatabase } from '../packages/box/src/stores/postgres/database.ts';
import { PgInbox } from '../packages/box/src/stores/postgres/inbox.ts';
import { parseObjectStoreUrl } from '../packages/box/src/stores/postgres/object-store-url.ts';
import { startTurnQueue } from '../packages/box/src/stores/postgres/turn-queue.ts';
import { Leases } from '../packages/box/src/stores/postgres/leases.ts';
import { PgLedger } from '../packages/box/src/stores/postgres/ledger.ts';
import { startClusterWorker } from '../packages/box/src/cluster/worker.ts';
import { scriptedProvider } from '../packages/box/src/providers/scripted.ts';
import { testServices } from '../packages/box/src/testing/services.ts';
import { makeWebRoot, SseReader, startGatewayOn } from '../packages/box/src/gateway/test-support.ts';

const PROMPTS = Number(process.argv[2] ?? 2000);
const SSE_PROMPTS = Number(process.argv[3] ?? 60);
const RATE = Number(process.argv[4] ?? 600);
const WORKERS = 3;
const AGENTS = 20;

const p = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const ms = (n: number) => `${n.toFixed(1)} ms`;

const services = await testServices();
const schema = `bench_${randomBytes(4).toString('hex')}`;
// The turn phases run in a schema of their own: the accept phase leaves a job per input for agents
// that do not exist, and a turn worker in its schema would first work through them (their jobs are
// older than the measured agent's), which the first turn then measured (1.4–2.3 s).
const turnSchema = `${schema}_turns`;
// And the SSE phase in one of its own: the turn phase's worker may stop with jobs of its agent left
// (each finds its input run and ends at once) and a lease not yet lapsed, which the SSE phase's
// first turn then waited for.
const sseSchema = `${schema}_sse`;
// Every worker of the bench's cluster opens its keys with this one.
const masterKey = randomBytes(32);
const workers = await Promise.all(
  Array.from({ length: WORKERS }, async () => {
    const db = await openDatabase(services.databaseUrl, { schema, max: 20 });
    return { db, boss: await startTurnQueue(services.databaseUrl, schema) };
  }),
);
const agents = Array.from({ length: AGENTS }, () => randomUUID());
// Each worker has a handle on every agent's inbox (any gateway accepts for any agent).
const inboxes = await Promise.all(
  workers.map(async (worker) =>
    Promise.all(agents.map((agent) => PgInbox.open(worker.db, worker.boss, agent))),
  ),
);

const latencies: number[] = [];
let accepted = 0;
const started = performance.now();
let next = 0;
// 60 clients at once, round-robin over the workers and agents; 10 % resent with the same nonce.
await Promise.all(
  Array.from({ length: 60 }, async () => {
    for (;;) {
      const i = next++;
      if (i >= PROMPTS) return;
      // A repeat goes to the same agent as its first send, through the next worker's gateway.
      const first = i % 10 === 9 ? i - 1 : i;
      const worker = i % WORKERS;
      const agent = first % AGENTS;
      const nonce = `n-${first}`;
      const t0 = performance.now();
      if (
        await inboxes[worker]![agent]!.accept(nonce, { kind: 'prompt', prompt: `prompt ${i}` }, Date.now())
      ) {
        accepted += 1;
      }
      latencies.push(performance.now() - t0);
    }
  }),
);
const seconds = (performance.now() - started) / 1000;

// The same accepts at a steady offered rate: prompt i is due at start + i / RATE and sent then (open
// loop), its latency counted from when it was due, so a send that starts late counts its wait.
const paced: number[] = [];
const pacedCount = RATE * 3;
let pacedAccepted = 0;
const pacedStart = performance.now() + 50;
const pending: Promise<void>[] = [];
for (let i = 0; i < pacedCount; i++) {
  const due = pacedStart + (i * 1000) / RATE;
  const wait = due - performance.now();
  if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
  const inbox = inboxes[i % WORKERS]![i % AGENTS]!;
  pending.push(
    inbox.accept(`paced-${i}`, { kind: 'prompt', prompt: `paced ${i}` }, Date.now()).then((fresh) => {
      if (fresh) pacedAccepted += 1;
      paced.push(performance.now() - due);
    }),
  );
}
await Promise.all(pending);
paced.sort((a, b) => a - b);

const rows = await workers[0]!.db.pool.query<{ n: string }>(
  `SELECT count(*) AS n FROM ${workers[0]!.db.table('inbox')}`,
);
latencies.sort((a, b) => a - b);

// The S3 write: 200 distinct 64 KiB attachments through one worker's store.
const location = parseObjectStoreUrl(services.objectStoreUrl);
const s3 = s3ClientFor(location, services.credentials);
const dir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-bench-cluster-'));
const attachments = new S3AttachmentStore(s3, location.bucket, randomUUID(), new AttachmentStore(dir));
const puts: number[] = [];
for (let i = 0; i < 200; i++) {
  const t0 = performance.now();
  await attachments.ingestBytes(randomBytes(64 * 1024), `file-${i}.bin`);
  puts.push(performance.now() - t0);
}
puts.sort((a, b) => a - b);

// The send path: 1,000 send entries appended behind a lease, one transaction each.
const sendAgent = randomUUID();
const lease = (await new Leases(workers[0]!.db, 'bench').claim(sendAgent))!;
const fenced = new PgLedger(workers[0]!.db, { agentId: sendAgent, epoch: lease.epoch });
const sendTimes: number[] = [];
for (let i = 0; i < 1000; i++) {
  const t0 = performance.now();
  fenced.appendEntries([
    {
      id: `t0s${i}`,
      kind: 'send-message',
      message: { type: 'text', content: `send ${i}` },
      timestampMs: Date.now(),
    },
  ]);
  sendTimes.push(performance.now() - t0);
}
sendTimes.sort((a, b) => a - b);

// The next queued turn of one agent, on a turn worker: 30 prompts sent at once.
const TURNS = 30;
const workerDir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-bench-worker-'));
const worker = await startClusterWorker({
  databaseUrl: services.databaseUrl,
  objectStoreUrl: services.objectStoreUrl,
  credentials: services.credentials,
  schema: turnSchema,
  masterKey,
  dataDir: workerDir,
  env: {},
  provider: scriptedProvider((request) =>
    request.messages.at(-1)?.role === 'tool'
      ? {}
      : { toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'ok' } }] },
  ),
});
const turnAgent = await worker.host.createAgent({ name: 'bench' });
await Promise.all(
  Array.from({ length: TURNS }, (_, i) =>
    worker.host.sendPrompt({ agentId: turnAgent.id, prompt: `turn ${i}`, clientNonce: `turn-${i}` }),
  ),
);
const ledgerTimes = async () => {
  const { rows } = await worker.db.pool.query<{ id: string; entry: string }>(
    `SELECT id, entry FROM ${worker.db.table('ledger')} WHERE agent_id = $1`,
    [turnAgent.id],
  );
  return new Map(rows.map((row) => [row.id, (JSON.parse(row.entry) as { timestampMs: number }).timestampMs]));
};
for (;;) {
  if ((await ledgerTimes()).has(`t${TURNS - 1}e`)) break;
  await new Promise((resolve) => setTimeout(resolve, 100));
}
const times = await ledgerTimes();
const handoffs: number[] = [];
for (let k = 0; k + 1 < TURNS; k++) handoffs.push(times.get(`t${k + 1}u`)! - times.get(`t${k}e`)!);
handoffs.sort((a, b) => a - b);
await worker.close();
await rm(workerDir, { recursive: true, force: true });

// Prompt -> its entry on SSE at an idle agent: the gateway runs no turn, the turn worker is another.
const ssePaths = await Promise.all(
  ['sse-gateway', 'sse-worker', 'sse-http'].map((name) =>
    mkdtemp(path.join(os.tmpdir(), `sendbox-bench-${name}-`)),
  ),
);
const clusterOptions = {
  databaseUrl: services.databaseUrl,
  objectStoreUrl: services.objectStoreUrl,
  credentials: services.credentials,
  schema: sseSchema,
  masterKey,
  env: {},
};
const sseGateway = await startClusterWorker({
  ...clusterOptions,
  dataDir: ssePaths[0]!,
  provider: scriptedProvider(() => {
    throw new Error('the gateway ran a turn');
  }),
  takeTurns: false,
});
const sseWorker = await startClusterWorker({
  ...clusterOptions,
  dataDir: ssePaths[1]!,
  provider: scriptedProvider((request) =>
    request.messages.at(-1)?.role === 'tool'
      ? {}
      : { toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'ok' } }] },
  ),
});
const webRoot = await makeWebRoot();
const http = await startGatewayOn(sseGateway.host, ssePaths[2]!, { webRoot });
const sseAgent = await sseGateway.host.createAgent({ name: 'sse bench' });
const stream = new SseReader(
  await fetch(new URL(`api/events?agentId=${sseAgent.id}`, http.url), {
    headers: { Authorization: `Bearer ${http.token}` },
  }),
);
const entryOn = async (id: string): Promise<void> => {
  for (;;) {
    const event = await stream.next();
    if (event === null) throw new Error('the event stream ended');
    if (event.event === 'entry' && (event.data as { id: string }).id === id) return;
  }
};
const sseTimes: number[] = [];
// Prompt 0 is the agent's first turn on the worker (its session opened, the token counter loaded):
// told apart, not counted.
let sseFirst = 0;
for (let i = 0; i <= SSE_PROMPTS; i++) {
  const t0 = performance.now();
  const response = await fetch(new URL('api/sendPrompt', http.url), {
    method: 'POST',
    headers: { Authorization: `Bearer ${http.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ agentId: sseAgent.id, prompt: `sse ${i}`, clientNonce: `sse-${i}` }),
  });
  if (!response.ok) throw new Error(`sendPrompt: ${response.status} ${await response.text()}`);
  await entryOn(`t${i}u`);
  if (i === 0) sseFirst = performance.now() - t0;
  else sseTimes.push(performance.now() - t0);
  // The agent is idle again before the next prompt.
  await entryOn(`t${i}e`);
  await new Promise((resolve) => setTimeout(resolve, 50));
}
sseTimes.sort((a, b) => a - b);
await stream.cancel();
await http.close();
await sseWorker.close();
await sseGateway.close();
for (const dir of [...ssePaths, webRoot]) await rm(dir, { recursive: true, force: true });

const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(`load average before the summary: ${load} (${os.cpus().length} cores)`);
console.log(
  `accept on PostgreSQL (row + pg-boss job, one transaction per batch of inputs that arrive together), ${WORKERS} workers, ${AGENTS} agents, ${PROMPTS} prompts (10 % repeats):`,
);
console.log(
  `  ${(PROMPTS / seconds).toFixed(0)} accepts/s; p50 ${ms(p(latencies, 0.5))}, p99 ${ms(p(latencies, 0.99))}`,
);
console.log(
  `  accepted ${accepted} flat out and ${pacedAccepted} paced, rows ${rows.rows[0]!.n} (expected ${PROMPTS - Math.floor(PROMPTS / 10) + pacedCount}): ${Number(rows.rows[0]!.n) === accepted + pacedAccepted ? '0 lost' : 'MISMATCH'}`,
);
console.log(
  `accept at a steady ${RATE} prompts/s offered (${pacedCount} prompts over the same ${WORKERS} workers and ${AGENTS} agents, latency from when each was due): p50 ${ms(p(paced, 0.5))}, p99 ${ms(p(paced, 0.99))}; ${pacedAccepted} of ${pacedCount} accepted`,
);
console.log(
  `S3 attachment write (64 KiB, If-None-Match: *): p50 ${ms(p(puts, 0.5))}, p99 ${ms(p(puts, 0.99))}`,
);

console.log(
  `send path on PostgreSQL (a send entry behind the lease fence, one transaction): p50 ${ms(p(sendTimes, 0.5))}, p99 ${ms(p(sendTimes, 0.99))}`,
);
console.log(
  `same-agent next queued turn on a turn worker (${TURNS} turns; user entry - previous turn-ended): p50 ${ms(p(handoffs, 0.5))}, p99 ${ms(p(handoffs, 0.99))}`,
);

console.log(
  `prompt -> its entry on SSE at an idle agent (sendPrompt 2xx through a gateway that runs no turn, the turn on another worker; ${SSE_PROMPTS} prompts): p50 ${ms(p(sseTimes, 0.5))}, p99 ${ms(p(sseTimes, 0.99))}, max ${ms(sseTimes.at(-1)!)} (the agent's first turn on the worker, not counted: ${ms(sseFirst)})`,
);

for (const worker of workers) {
  await worker.boss.stop({ graceful: false, close: true });
}
await workers[0]!.db.pool.query(`DROP SCHEMA "${schema}" CASCADE`);
await workers[0]!.db.pool.query(`DROP SCHEMA "${schema}_jobs" CASCADE`);
await workers[0]!.db.pool.query(`DROP SCHEMA "${turnSchema}" CASCADE`);
await workers[0]!.db.pool.query(`DROP SCHEMA "${turnSchema}_jobs" CASCADE`);
await workers[0]!.db.pool.query(`DROP SCHEMA "${sseSchema}" CASCADE`);
await workers[0]!.db.pool.query(`DROP SCHEMA "${sseSchema}_jobs" CASCADE`);
for (const worker of workers) await worker.db.close();
s3.destroy();
await rm(dir, { recursive: true, force: true });
await services.release();
