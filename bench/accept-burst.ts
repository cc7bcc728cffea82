/**
 * Accepting input under load and unloaded (docs/runtime.md, "Durable turns"):
 *
 * 1. Burst: 50 agents × 10 prompts sent at once through the gateway (HTTP on loopback), each
 *    answered by a model that sends one message and ends its turn, so turns write while inputs
 *    arrive. Latency of each sendPrompt from request to response: the inbox commit and the
 *    fsync that covers it. Target: p99 < 500 ms.
 * 2. Unloaded prompt → entry: one agent, one prompt at a time; from the call to the ledger
 *    entry of the model's reply (the accept, the turn's start, one model step, the send).
 *
 * With `held` the model never answers during the burst, so the figure is the accept path alone
 * (no turn competes with it for the CPU).
 *
 *   npx tsx bench/accept-burst.ts [agents=50] [prompts=10] [rounds=50] [answering|held]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { agentFiles, boxAgentFolders, createAgentHost, scriptedProvider, startGateway } from '@sendbox/box';
import type { HostEvent } from '@sendbox/box';

const AGENTS = Number(process.argv[2] ?? 50);
const PROMPTS = Number(process.argv[3] ?? 10);
const ROUNDS = Number(process.argv[4] ?? 50);
const HELD = process.argv[5] === 'held';
const base = process.env.SENDBOX_BENCH_DIR ?? os.tmpdir();
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))]!;
const fmt = (xs: number[]) =>
  `p50 ${quantile(xs, 0.5).toFixed(1)} ms, p99 ${quantile(xs, 0.99).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms`;

/** Answers each prompt with one send, then ends the turn; with `held`, only after the burst. */
let release = (): void => undefined;
const burstOver = HELD ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
const answer = scriptedProvider((request) =>
  request.messages.at(-1)?.role === 'tool'
    ? {}
    : { toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'on it' } }] },
);
const model: typeof answer = {
  ...answer,
  step: async (request) => {
    await burstOver;
    return answer.step(request);
  },
};

const dataDir = await mkdtemp(path.join(base, 'sendbox-bench-accept-'));
const webRoot = await mkdtemp(path.join(base, 'sendbox-bench-web-'));
const host = await createAgentHost({ dataDir, provider: model, env: {} });
const gateway = await startGateway({
  host,
  files: agentFiles(host, boxAgentFolders(dataDir)),
  dataDir,
  webRoot,
  version: 'bench',
  port: 0,
  logError: (line) => console.error(line),
});
const call = async (method: string, body: unknown): Promise<unknown> => {
  const response = await fetch(new URL(`api/${method}`, gateway.url), {
    method: 'POST',
    headers: { Authorization: `Bearer ${gateway.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method}: ${response.status} ${await response.text()}`);
  return response.json();
};

// 1. burst
const ids: string[] = [];
for (let i = 0; i < AGENTS; i++)
  ids.push(((await call('createAgent', { name: `Agent ${i}` })) as { agent: { id: string } }).agent.id);
const latencies: number[] = [];
const cpuBefore = process.cpuUsage();
const burstStarted = performance.now();
await Promise.all(
  ids.flatMap((agentId, a) =>
    Array.from({ length: PROMPTS }, async (_, p) => {
      const started = performance.now();
      await call('sendPrompt', { agentId, prompt: `prompt ${p}`, clientNonce: `b-${a}-${p}` });
      latencies.push(performance.now() - started);
    }),
  ),
);
const burstAccepted = performance.now() - burstStarted;
// CPU this process spent until the last accept (client and box alike): on a machine shared with
// other work the wall-clock figures stretch with the load, this one much less.
const burstCpu = process.cpuUsage(cpuBefore);
release();
for (const id of ids) await host.idle(id);
const burstDone = performance.now() - burstStarted;
console.log(
  `burst: ${AGENTS} agents × ${PROMPTS} prompts at once through the gateway (${base}; turns ${HELD ? 'held until every prompt is accepted' : 'running meanwhile'})`,
);
console.log(
  `  sendPrompt accept: ${fmt(latencies)}   (target p99 < 500 ms: ${quantile(latencies, 0.99) < 500 ? 'met' : 'NOT met'})`,
);
console.log(
  `  all accepted after ${burstAccepted.toFixed(0)} ms; every turn answered after ${burstDone.toFixed(0)} ms`,
);
console.log(
  `  CPU of this process until the last accept: ${((burstCpu.user + burstCpu.system) / 1000).toFixed(0)} ms ` +
    `(user ${(burstCpu.user / 1000).toFixed(0)}, system ${(burstCpu.system / 1000).toFixed(0)}), ` +
    `${((burstCpu.user + burstCpu.system) / 1000 / latencies.length).toFixed(2)} ms per prompt`,
);

// 2. unloaded prompt → entry
const agentId = ((await call('createAgent', { name: 'Alone' })) as { agent: { id: string } }).agent.id;
const toEntry: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  const started = performance.now();
  const replied = new Promise<void>((resolve) => {
    const stop = host.subscribe((event: HostEvent) => {
      if (event.type === 'entry' && event.agentId === agentId && event.entry.kind === 'send-message') {
        stop();
        resolve();
      }
    });
  });
  await call('sendPrompt', { agentId, prompt: `alone ${i}`, clientNonce: `u-${i}` });
  await replied;
  toEntry.push(performance.now() - started);
  await host.idle(agentId);
}
console.log(`unloaded prompt → the reply's ledger entry, ${ROUNDS} prompts one at a time: ${fmt(toEntry)}`);

await gateway.close();
await host.close();
await rm(dataDir, { recursive: true, force: true });
await rm(webRoot, { recursive: true, force: true });
console.log(
  `  (machine: ${os.cpus().length} cores, load average ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')})`,
);
