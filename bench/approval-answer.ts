/**
 * An approval card answered through a gateway whose worker does not run the turn (issue 25): a
 * gateway worker that runs no turn and one turn worker, in this process, over PostgreSQL (and the
 * bucket, which a worker needs). Each round sends a prompt whose shell call asks first (the profile
 * rule `shell: ask`), waits for the card, and answers it through the gateway. Two figures per round:
 *
 * - the answer's reply (answerToolApproval, `resumed: true`): the inbox input and the answer entry
 *   committed, then the approval_waits row read until the turn worker's call took the answer;
 * - answer to the call's result in the ledger: the answer entry relayed to the turn worker
 *   (LISTEN/NOTIFY and the rows), the call taking it, the shell command, its result committed.
 *
 * Uses SENDBOX_TEST_DATABASE_URL / SENDBOX_TEST_OBJECT_STORE_URL when set, else starts the services.
 *
 *   npx tsx bench/approval-answer.ts [rounds=30]
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startClusterWorker, type ClusterWorker } from '../packages/box/src/cluster/worker.ts';
import { scriptedProvider, type ScriptedStep } from '../packages/box/src/providers/scripted.ts';
import type { ModelStepRequest } from '../packages/box/src/providers/types.ts';
import { setApprovalRules } from '../packages/box/src/testing/cluster-rows.ts';
import { testServices } from '../packages/box/src/testing/services.ts';

const ROUNDS = Number(process.argv[2] ?? 30);

const p = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const ms = (n: number) => `${n.toFixed(1)} ms`;
const sleep = (n: number) => new Promise((resolve) => setTimeout(resolve, n));

/** One shell call per prompt, then an empty step (no send: the turn ends; a send reminder changes nothing). */
function script(name: string) {
  let calls = 0;
  return (request: ModelStepRequest): ScriptedStep => {
    const prompt = request.messages.findLastIndex(
      (message) => message.role === 'user' && JSON.stringify(message.content).includes('round '),
    );
    const answered = request.messages.findLastIndex((message) => message.role === 'tool') > prompt;
    return answered
      ? {}
      : { toolCalls: [{ id: `${name}-${++calls}`, name: 'shell', input: { command: 'true' } }] };
  };
}

const services = await testServices();
const schema = `bench_${randomBytes(4).toString('hex')}`;
const masterKey = randomBytes(32);
const dirs: string[] = [];
const workers: ClusterWorker[] = [];
for (const [name, takeTurns] of [
  ['gateway', false],
  ['turns', true],
] as const) {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `sendbox-bench-${name}-`));
  dirs.push(dataDir);
  workers.push(
    await startClusterWorker({
      databaseUrl: services.databaseUrl,
      objectStoreUrl: services.objectStoreUrl,
      credentials: services.credentials,
      dataDir,
      schema,
      masterKey,
      env: {},
      provider: scriptedProvider(script(name)),
      workerName: name,
      takeTurns,
    }),
  );
}
const gateway = workers[0]!;
const agent = await gateway.host.createAgent({ name: 'Asks first' });
await setApprovalRules(gateway.db, agent.id, { shell: 'ask' });

const rows = async () =>
  (
    await gateway.db.pool.query<{ id: string; entry: string }>(
      `SELECT id, entry FROM ${gateway.db.table('ledger')} WHERE agent_id = $1 ORDER BY seq`,
      [agent.id],
    )
  ).rows;
/** The card no answer entry answers yet. */
const openCard = async () => {
  const all = await rows();
  const ids = new Set(all.map((row) => row.id));
  return all.find(
    (row) =>
      (JSON.parse(row.entry) as { status?: string }).status === 'awaiting-approval' &&
      !ids.has(`${row.id}-answer`),
  )?.id;
};
const replies: number[] = [];
const results: number[] = [];
for (let round = 0; round < ROUNDS; round++) {
  await gateway.host.sendPrompt({ agentId: agent.id, prompt: `round ${round}`, clientNonce: `r${round}` });
  let card = await openCard();
  while (!card) {
    await sleep(5);
    card = await openCard();
  }
  const started = performance.now();
  const reply = await gateway.host.answerToolApproval({
    agentId: agent.id,
    entryId: card,
    decision: 'allow',
  });
  replies.push(performance.now() - started);
  if (!reply.resumed) throw new Error(`round ${round}: the answer was not taken by the waiting call`);
  while (!(await rows()).some((row) => row.id === `t${round}c0`)) await sleep(2);
  results.push(performance.now() - started);
  while (!(await rows()).some((row) => row.id === `t${round}e`)) await sleep(5);
}
replies.sort((a, b) => a - b);
results.sort((a, b) => a - b);
console.log(
  `${ROUNDS} cards answered through a gateway that runs no turn, the call waiting on another worker:`,
);
console.log(`  the answer's reply (resumed: true): p50 ${ms(p(replies, 0.5))}, p99 ${ms(p(replies, 0.99))}`);
console.log(
  `  answer -> the call's result in the ledger: p50 ${ms(p(results, 0.5))}, p99 ${ms(p(results, 0.99))}`,
);

for (const worker of workers.reverse()) await worker.close();
const cleanup = await admin();
await cleanup.query(`DROP SCHEMA IF EXISTS "${schema}_jobs" CASCADE`);
await cleanup.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
await cleanup.end();
for (const dir of dirs) await rm(dir, { recursive: true, force: true });
await services.release();

/** A connection of its own for dropping the bench's schemas once the workers are closed. */
async function admin() {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: services.databaseUrl });
  await client.connect();
  return client;
}
