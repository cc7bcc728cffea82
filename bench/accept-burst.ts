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
 * The burst's client runs on a worker thread, so its 500 fetches do not share the box's event loop
 * (a browser is another process), and the model is a warm stub that copies nothing; the CPU figure
 * is the box's thread alone.
 *
 *   npx tsx bench/accept-burst.ts [agents=50] [prompts=10] [rounds=50] [answering|held]
 *
 * SENDBOX_BENCH_CPU_PROFILE=FILE writes a V8 CPU profile of the box's thread during the burst alone
 * (open it in Chrome DevTools or speedscope).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { Session } from 'node:inspector/promises';
import { agentFiles, boxAgentFolders, createAgentHost, startGateway } from '@sendbox/box';
import type { HostEvent, ModelProvider } from '@sendbox/box';

const AGENTS = Number(process.argv[2] ?? 50);
const PROMPTS = Number(process.argv[3] ?? 10);
const ROUNDS = Number(process.argv[4] ?? 50);
const HELD = process.argv[5] === 'held';
const base = process.env.SENDBOX_BENCH_DIR ?? os.tmpdir();
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))]!;
const fmt = (xs: number[]) =>
  `p50 ${quantile(xs, 0.5).toFixed(1)} ms, p99 ${quantile(xs, 0.99).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms`;

/**
 * A warm model stub: answers each prompt with one send, then ends the turn; with `held`, only after
 * the burst. It answers from the request's last message alone and keeps nothing (the tests'
 * scriptedProvider deep-copies every request, a cost of the stub and not of the box).
 */
let release = (): void => undefined;
const burstOver = HELD ? new Promise<void>((resolve) => (release = resolve)) : Promise.resolve();
let calls = 0;
const model: ModelProvider = {
  provider: 'scripted',
  model: 'bench-model',
  step: async (request) => {
    await burstOver;
    const answered = request.messages.at(-1)?.role === 'tool';
    return {
      text: '',
      reasoning: '',
      toolCalls: answered
        ? []
        : [{ id: `call_${++calls}`, name: 'send_message', input: { type: 'text', content: 'on it' } }],
      finishReason: answered ? 'stop' : 'tool-calls',
    };
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
// The client runs on a thread of its own (as a browser would be another process): its 500
// fetches do not share the box's event loop.
const client = new Worker(
  `const { parentPort, workerData } = require('node:worker_threads');
  const { url, token, ids, prompts } = workerData;
  parentPort.once('message', async () => {
    const latencies = [];
    await Promise.all(ids.flatMap((agentId, a) => Array.from({ length: prompts }, async (_, p) => {
      const started = performance.now();
      const response = await fetch(new URL('api/sendPrompt', url), {
        method: 'POST',
        headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/json' },
        body: JSON.stringify({ agentId, prompt: 'prompt ' + p, clientNonce: 'b-' + a + '-' + p }),
      });
      if (!response.ok) throw new Error('sendPrompt: ' + response.status + ' ' + (await response.text()));
      await response.json();
      latencies.push(performance.now() - started);
    })));
    parentPort.postMessage(latencies);
  });`,
  { eval: true, workerData: { url: gateway.url, token: gateway.token, ids, prompts: PROMPTS } },
);
await new Promise((resolve) => client.once('online', resolve));
const profileFile = process.env.SENDBOX_BENCH_CPU_PROFILE;
const profiler = profileFile ? new Session() : null;
if (profiler) {
  profiler.connect();
  await profiler.post('Profiler.enable');
  await profiler.post('Profiler.setSamplingInterval', { interval: 200 });
  await profiler.post('Profiler.start');
}
const cpuBefore = process.threadCpuUsage();
const burstStarted = performance.now();
client.postMessage('go');
const latencies = await new Promise<number[]>((resolve, reject) => {
  client.once('message', resolve);
  client.once('error', reject);
});
const burstAccepted = performance.now() - burstStarted;
// CPU the box's thread spent until the last accept: on a machine shared with other work the
// wall-clock figures stretch with the load, this one much less.
const burstCpu = process.threadCpuUsage(cpuBefore);
if (profiler && profileFile) {
  const { profile } = await profiler.post('Profiler.stop');
  await writeFile(profileFile, JSON.stringify(profile));
  profiler.disconnect();
}
await client.terminate();
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
  `  CPU of the box's thread until the last accept: ${((burstCpu.user + burstCpu.system) / 1000).toFixed(0)} ms ` +
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
