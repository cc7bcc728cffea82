/**
 * listAgents right after a restart (docs/runtime.md, "The roster"): N agents, each with one
 * answered prompt, the box stopped and started again, then the first listAgents. Once with
 * roster.db as the box left it, once with it removed (every agent read from its files, as
 * before the roster). Target: < 100 ms for 1,000 agents.
 *
 *   npx tsx bench/roster.ts [agents=1000]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createAgentHost, scriptedProvider } from '@sendbox/box';

const AGENTS = Number(process.argv[2] ?? 1000);
const dataDir = await mkdtemp(
  path.join(process.env.SENDBOX_BENCH_DIR ?? os.tmpdir(), 'sendbox-bench-roster-'),
);
const answer = () =>
  scriptedProvider((request) =>
    request.messages.at(-1)?.role === 'tool'
      ? {}
      : { toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'on it' } }] },
  );
const seeding = await createAgentHost({ dataDir, provider: answer(), env: {} });
for (let i = 0; i < AGENTS; i++) {
  const agent = await seeding.createAgent({ name: `Agent ${i}` });
  await seeding.sendPrompt({ agentId: agent.id, prompt: 'hello', clientNonce: `seed-${i}` });
  await seeding.idle(agent.id);
}
await seeding.close();

async function firstList(label: string): Promise<void> {
  const host = await createAgentHost({ dataDir, provider: answer(), env: {} });
  const started = performance.now();
  const rows = await host.listAgents();
  const took = performance.now() - started;
  const opened = host.openAgents;
  await host.close();
  console.log(
    `  ${label}: ${took.toFixed(1)} ms for ${rows.length} agents (${opened} opened)${label.startsWith('with') ? `   (target < 100 ms: ${took < 100 ? 'met' : 'NOT met'})` : ''}`,
  );
}
console.log(`first listAgents after a restart, ${AGENTS} agents with one answered prompt each`);
await firstList('with the roster');
await rm(path.join(dataDir, 'roster.db'), { force: true });
await rm(path.join(dataDir, 'roster.db-wal'), { force: true });
await firstList('without it (every agent read from its files)');
await firstList('with the roster it wrote back');
await rm(dataDir, { recursive: true, force: true });
console.log(
  `  (machine: ${os.cpus().length} cores, load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')})`,
);
