/**
 * The gateway under an agent with a 10,000-entry ledger, over real HTTP on
 * loopback, with the real host and a scripted model:
 *
 * - `openAgent` latency, 50 calls: on the focused agent, and switching from
 *   another agent (the store is re-read on focus); plus the same call on the
 *   host directly, so the gateway's share is the difference. Target p99 < 100 ms.
 * - send → entry-event latency: `sendPrompt`, then the model's one text
 *   message arriving on the agent's SSE stream; 200 sends, on the big agent
 *   and on a fresh one. Target p99 < 50 ms. Also the gateway's own share:
 *   from the host emitting the entry to the client having it.
 *
 * The ledger is seeded through the runtime itself: turns whose scripted model
 * sends 200 distinct text messages each, so JSONL and store.db agree.
 * Client and server share one process (and event loop), so the figures
 * include the client's own work (its JSON.parse of the 10,000 entries); the
 * gateway's handler time for openAgent is printed beside them.
 *
 *   npx tsx bench/gateway-open.ts [entries=10000] [sends=200]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  agentFiles,
  boxAgentFolders,
  createAgentHost,
  startGateway,
  type ModelProvider,
  type ModelStepRequest,
  type ModelStepResult,
  type SequencedEntry,
} from '@sendbox/box';

const ENTRIES = Number(process.argv[2] ?? 10_000);
const SENDS = Number(process.argv[3] ?? 200);
const SENDS_PER_SEED_TURN = 200;

/** `seed:<n>` → one step of n distinct sends; `say:<x>` → one send "echo: <x>"; a tool result ends the turn. */
function benchModel(): ModelProvider {
  let calls = 0;
  const end: ModelStepResult = { text: '', reasoning: '', toolCalls: [], finishReason: 'stop' };
  return {
    provider: 'scripted',
    model: 'bench',
    step(request: ModelStepRequest): Promise<ModelStepResult> {
      const last = request.messages.at(-1);
      if (last?.role !== 'user') return Promise.resolve(end);
      const text =
        typeof last.content === 'string'
          ? last.content
          : last.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
      const seed = /seed:(\d+):(\d+)/.exec(text);
      const say = /say:([\w-]+)/.exec(text);
      const contents = seed
        ? Array.from({ length: Number(seed[2]) }, (_, i) => `Progress ${seed[1]}.${i}: step done, moving on.`)
        : say
          ? [`echo: ${say[1]}`]
          : [];
      return Promise.resolve({
        text: '',
        reasoning: '',
        toolCalls: contents.map((content) => ({
          id: `call_${++calls}`,
          name: 'send_message',
          input: { type: 'text', content },
        })),
        finishReason: contents.length ? 'tool-calls' : 'stop',
      });
    },
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

function report(label: string, samples: number[], targetP99: number): void {
  const sorted = [...samples].sort((a, b) => a - b);
  const p50 = percentile(sorted, 50);
  const p99 = percentile(sorted, 99);
  const verdict = p99 < targetP99 ? 'ok' : 'OVER TARGET';
  console.log(
    `${label.padEnd(48)} n=${String(samples.length).padStart(3)}  p50 ${p50.toFixed(2).padStart(7)} ms  ` +
      `p99 ${p99.toFixed(2).padStart(7)} ms  max ${sorted.at(-1)!.toFixed(2).padStart(7)} ms  ` +
      `(target p99 < ${targetP99} ms: ${verdict})`,
  );
}

const dataDir = await mkdtemp(
  path.join(process.env.SENDBOX_BENCH_DIR ?? os.tmpdir(), 'sendbox-bench-gateway-'),
);
const host = await createAgentHost({ dataDir, provider: benchModel(), env: {} });
const gateway = await startGateway({
  host,
  files: agentFiles(host, boxAgentFolders(dataDir)),
  dataDir,
  webRoot: path.join(dataDir, 'no-web'),
  version: 'bench',
  port: 0,
  logError: (message) => console.error(message),
  // The gateway's own time per request (routing, host call, response built), to tell it from the client's.
  logRequest: (line) => {
    const match = /^POST \/api\/openAgent 200 ([\d.]+)ms$/.exec(line);
    if (match) serverOpen.push(Number(match[1]));
  },
});
const serverOpen: number[] = [];
const headers = { Authorization: `Bearer ${gateway.token}` };

async function call<T>(method: string, body: unknown): Promise<T> {
  const response = await fetch(new URL(`api/${method}`, gateway.url), {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** Sends `count` prompts one after another; each time, the latency until its send-message entry arrives on SSE. */
async function measureSends(
  agentId: string,
  count: number,
): Promise<{ accept: number[]; sendToEvent: number[]; delivery: number[] }> {
  // When the host emitted each entry (same process, same clock): the gateway's own share is emit → client.
  const emittedAt = new Map<string, number>();
  const unsubscribe = host.subscribe((event) => {
    if (
      event.type === 'entry' &&
      event.entry.kind === 'send-message' &&
      event.entry.message.type === 'text'
    ) {
      emittedAt.set(event.entry.message.content.replace(/^echo: /, ''), performance.now());
    }
  });
  // Resume after what the ledger holds now: the stream carries only what the sends add.
  const after = (await host.entriesAfter(agentId, 0)).at(-1)?.seq ?? 0;
  const stream = await fetch(new URL(`api/events?agentId=${agentId}&after=${after}`, gateway.url), {
    headers,
  });
  if (!stream.ok || stream.body === null) throw new Error(`events: ${stream.status}`);
  const reader = stream.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const waiting = new Map<string, (at: number) => void>();
  void (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (!block.includes('event: entry') || data === undefined) continue;
        const entry = JSON.parse(data) as SequencedEntry;
        if (entry.kind === 'send-message' && entry.message.type === 'text') {
          waiting.get(entry.message.content.replace(/^echo: /, ''))?.(performance.now());
        }
      }
    }
  })();

  const accept: number[] = [];
  const sendToEvent: number[] = [];
  const delivery: number[] = [];
  for (let i = 0; i < count; i++) {
    const key = `${agentId.slice(0, 8)}-${i}`;
    const arrived = new Promise<number>((resolve, reject) => {
      waiting.set(key, resolve);
      setTimeout(() => reject(new Error(`no entry event for ${key} within 10 s`)), 10_000).unref();
    });
    const started = performance.now();
    await call('sendPrompt', { agentId, prompt: `say:${key}`, clientNonce: key });
    accept.push(performance.now() - started);
    const at = await arrived;
    sendToEvent.push(at - started);
    delivery.push(at - (emittedAt.get(key) ?? NaN));
    waiting.delete(key);
    await host.idle(agentId);
  }
  await reader.cancel();
  unsubscribe();
  return { accept, sendToEvent, delivery };
}

try {
  const { agent } = await call<{ agent: { id: string } }>('createAgent', { name: 'Big ledger' });
  const { agent: other } = await call<{ agent: { id: string } }>('createAgent', { name: 'Other' });

  // Seed through the runtime: each turn adds a user message, the sends and a turn-ended entry.
  const seedStarted = performance.now();
  let turn = 0;
  for (;;) {
    const count = (await host.entriesAfter(agent.id, 0)).length;
    if (count >= ENTRIES) break;
    const sends = Math.min(SENDS_PER_SEED_TURN, Math.max(1, ENTRIES - count - 2));
    await host.sendPrompt({
      agentId: agent.id,
      prompt: `seed:${turn}:${sends}`,
      clientNonce: `seed-${turn}`,
    });
    await host.idle(agent.id);
    turn += 1;
  }
  const ledger = await host.entriesAfter(agent.id, 0);
  const seeded = ledger.length;
  console.log(
    `seeded ${seeded} ledger entries in ${turn} turns through the runtime in ` +
      `${((performance.now() - seedStarted) / 1000).toFixed(1)} s (${dataDir})`,
  );

  // openAgent on the focused agent.
  await call('openAgent', { id: agent.id });
  const focused: number[] = [];
  for (let i = 0; i < 50; i++) {
    const started = performance.now();
    const { entries } = await call<{ entries: SequencedEntry[] }>('openAgent', { id: agent.id });
    focused.push(performance.now() - started);
    if (entries.length !== seeded)
      throw new Error(`openAgent returned ${entries.length} entries, not ${seeded}`);
  }
  // The same call on the host directly: what the gateway adds is the difference.
  const direct: number[] = [];
  for (let i = 0; i < 50; i++) {
    const started = performance.now();
    await host.openAgent(agent.id);
    direct.push(performance.now() - started);
  }
  const serverFocused = serverOpen.splice(0).slice(1); // the first is the warm-up call
  // openAgent after focusing another agent: the store lock moves and the session catches up with its files.
  const switching: number[] = [];
  const serverSwitching: number[] = [];
  for (let i = 0; i < 50; i++) {
    await call('openAgent', { id: other.id });
    const started = performance.now();
    await call('openAgent', { id: agent.id });
    switching.push(performance.now() - started);
    serverSwitching.push(serverOpen.splice(0).at(-1) ?? NaN);
  }

  // send → entry event, on the big agent and on a fresh one (what the ledger's size costs).
  const big = await measureSends(agent.id, SENDS);
  const { agent: fresh } = await call<{ agent: { id: string } }>('createAgent', { name: 'Fresh' });
  const small = await measureSends(fresh.id, SENDS);

  console.log('');
  report(`openAgent over HTTP, focused (${seeded} entries)`, focused, 100);
  report(`host.openAgent direct, focused (${seeded} entries)`, direct, 100);
  report(`openAgent over HTTP, switching (${seeded} entries)`, switching, 100);
  report(`  of which the gateway's handler, focused`, serverFocused, 100);
  report(`  of which the gateway's handler, switching`, serverSwitching, 100);
  report(`sendPrompt accepted, ${seeded}-entry agent`, big.accept, 50);
  report(`send -> entry on SSE, ${seeded}-entry agent`, big.sendToEvent, 50);
  report(`host emits entry -> client has it, ${seeded}-entry`, big.delivery, 50);
  report('sendPrompt accepted, fresh agent', small.accept, 50);
  report('send -> entry on SSE, fresh agent', small.sendToEvent, 50);
  report('host emits entry -> client has it, fresh agent', small.delivery, 50);
} finally {
  await gateway.close();
  await host.close();
  await rm(dataDir, { recursive: true, force: true });
}
