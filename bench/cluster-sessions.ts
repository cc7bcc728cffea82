/**
 * What a cluster worker's copy of every agent's sessions costs (packages/box/src/cluster/layout-mirror.ts)
 * and what the sidebar's search over it costs (search/message-search.ts), on a real PostgreSQL:
 *
 * - the copy written at a worker's first start (every agent's rows), and at a restart with nothing new;
 * - one agent's new turn (a ledger row and a transcript row) brought into the copy (`settle`);
 * - the first search (the index built), then a search after one agent's new turn (the copy brought
 *   up to date and the index refreshed: only that agent's files read again), each repeated.
 *
 *   npx tsx bench/cluster-sessions.ts [agents=200] [turns per agent=20] [rounds=20]
 *
 * Uses SENDBOX_TEST_DATABASE_URL when set (`. /tmp/svc-shared/env`), else starts the test services.
 * Each turn is one ledger row and one transcript row of about 1 KB. Say the load (`uptime`) with
 * the figures.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { LayoutMirror } from '../packages/box/src/cluster/layout-mirror.ts';
import { MessageSearch } from '../packages/box/src/search/message-search.ts';
import { openTestSchema } from '../packages/box/src/stores/postgres/backend.ts';
import type { Database } from '../packages/box/src/stores/postgres/database.ts';
import { testServices } from '../packages/box/src/testing/services.ts';

const AGENTS = Number(process.argv[2] ?? 200);
const TURNS = Number(process.argv[3] ?? 20);
const ROUNDS = Number(process.argv[4] ?? 20);

const words = [
  'ledger',
  'harbor',
  'invoice',
  'lantern',
  'meadow',
  'quartz',
  'ripple',
  'saddle',
  'timber',
  'walnut',
];
const prose = (agent: number, turn: number) =>
  Array.from({ length: 150 }, (_, i) => words[(agent * 7 + turn * 3 + i) % words.length]).join(' ');

async function addTurn(db: Database, agentId: string, seq: number, text: string): Promise<void> {
  const entry = { id: `t${seq}u`, kind: 'notice', text, level: 'info', timestampMs: Date.now() };
  const line = `${JSON.stringify({ role: 'user', message: { role: 'user', content: `[t${seq}u]\n${text}` } })}\n`;
  await db.pool.query(
    `WITH l AS (INSERT INTO ${db.table('ledger')} (agent_id, seq, id, entry) VALUES ($1, $2, $3, $4))
     INSERT INTO ${db.table('transcript')} (agent_id, seq, text) VALUES ($1, $2, $5)`,
    [agentId, seq, entry.id, JSON.stringify(entry), line],
  );
}

const stats = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return `p50 ${at(0.5).toFixed(1)} ms, p99 ${at(0.99).toFixed(1)} ms (${values.length} runs)`;
};

const services = await testServices();
const fresh = await openTestSchema(services.databaseUrl);
const { db } = fresh;
const dir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-bench-sessions-'));
try {
  const agents = Array.from({ length: AGENTS }, () => randomUUID());
  const seqs = new Map(agents.map((id) => [id, 0]));
  for (const [i, agentId] of agents.entries()) {
    await db.pool.query(
      `INSERT INTO ${db.table('profiles')} (agent_id, profile, version) VALUES ($1, $2, 1)`,
      [agentId, JSON.stringify({ name: `Agent ${i}` })],
    );
    for (let turn = 1; turn <= TURNS; turn++) await addTurn(db, agentId, turn, prose(i, turn));
    seqs.set(agentId, TURNS);
  }
  const options = { db, root: path.join(dir, 'layout'), stateDir: path.join(dir, 'state') };
  console.log(
    `${AGENTS} agents × ${TURNS} turns (about ${Math.round((AGENTS * TURNS * 2.2) / 1024)} MB of rows)`,
  );

  let t = performance.now();
  const mirror = new LayoutMirror(options);
  const cold = await mirror.syncAll();
  console.log(
    `first start, every agent copied: ${(performance.now() - t).toFixed(0)} ms (${cold.entries} entries, ${cold.transcriptBytes} bytes)`,
  );
  await mirror.close();

  t = performance.now();
  const restarted = new LayoutMirror(options);
  const warm = await restarted.syncAll();
  console.log(
    `restart, nothing new: ${(performance.now() - t).toFixed(0)} ms (${warm.entries} entries written)`,
  );

  const oneAgent: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const agentId = agents[round % agents.length]!;
    const seq = seqs.get(agentId)! + 1;
    seqs.set(agentId, seq);
    await addTurn(db, agentId, seq, `round ${round} ${prose(round, seq)}`);
    const start = performance.now();
    restarted.observe({ type: 'state', agentId, state: 'idle' });
    await restarted.settle();
    oneAgent.push(performance.now() - start);
  }
  console.log(`one agent's new turn into the copy: ${stats(oneAgent)}`);

  const search = new MessageSearch({ dataDir: dir, files: restarted, log: () => undefined });
  t = performance.now();
  await search.search('quartz lantern');
  console.log(`first search (index built over the copy): ${(performance.now() - t).toFixed(0)} ms`);
  const afterTurn: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const agentId = agents[(round * 13) % agents.length]!;
    const seq = seqs.get(agentId)! + 1;
    seqs.set(agentId, seq);
    const word = `zebra${round}x`;
    await addTurn(db, agentId, seq, `${word} ${prose(round, seq)}`);
    const start = performance.now();
    const event = { type: 'entry', agentId } as unknown as Parameters<MessageSearch['observe']>[0];
    restarted.observe(event);
    search.observe(event);
    const hits = await search.search(word);
    afterTurn.push(performance.now() - start);
    if (!hits.some((hit) => hit.agentId === agentId)) throw new Error(`round ${round}: ${word} not found`);
  }
  console.log(`search after one agent's new turn (copy + index refresh + query): ${stats(afterTurn)}`);
  await search.close();
  await restarted.close();
} finally {
  await fresh.drop();
  await rm(dir, { recursive: true, force: true });
  await services.release();
}
