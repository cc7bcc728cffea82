/**
 * What the model call's idle timeout costs on a long stream (issue 18: "none measurable").
 * A loopback OpenAI-compatible server streams one `send_message` whose text is WORDS words, one
 * SSE chunk per word, as fast as the socket takes them (the worst case for a per-chunk cost: a
 * real model sends far fewer chunks per second). Each run is one provider step with drafts on,
 * as a turn makes it:
 *
 *   production  openAiCompatibleProvider: idleFetch touches the step's IdleWatch on every body
 *               chunk, and the stream loop on every part (8 s idle timeout, as in the issue);
 *   baseline    the same aiSdkProvider over a plain fetch: no per-byte watch (the per-part touch
 *               stays; its cost is bounded by the third figure).
 *
 * The two alternate, RUNS each, after a warm-up; the figures are wall time per step. The third
 * figure is IdleWatch.touch()'s own cost per call, times the parts of one step.
 *
 *   npx tsx bench/idle-timeout.ts [words=20000] [runs=30]
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { aiSdkProvider, IdleWatch } from '../packages/box/src/providers/ai-sdk.ts';
import { openAiCompatibleProvider } from '../packages/box/src/providers/index.ts';
import type { ModelProvider, ModelStepRequest } from '../packages/box/src/providers/types.ts';
import { writeCompletionStream } from '../packages/box/src/testing/openai-stream.ts';

const WORDS = Number(process.argv[2] ?? 20_000);
const RUNS = Number(process.argv[3] ?? 30);
const TIMEOUT_MS = 8_000;

const text = Array.from({ length: WORDS }, (_, i) => `word${i % 97}`).join(' ');
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    void writeCompletionStream(res, {
      id: 'chatcmpl-bench',
      model: 'bench',
      content: null,
      toolCalls: [
        { id: 'call_1', name: 'send_message', arguments: JSON.stringify({ type: 'text', content: text }) },
      ],
    });
  });
});
// A slow reader must not be cut: the step, not the server, decides when it has waited too long.
server.keepAliveTimeout = 600_000;
server.requestTimeout = 0;
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;

const production = openAiCompatibleProvider({
  baseURL,
  model: 'bench',
  timeoutMs: TIMEOUT_MS,
  maxRetries: 0,
});
const plain = createOpenAICompatible({ name: 'openai-compatible', baseURL });
const baseline: ModelProvider = aiSdkProvider({
  provider: 'openai-compatible',
  model: 'bench',
  languageModel: plain.chatModel('bench'),
  timeoutMs: TIMEOUT_MS,
  maxRetries: 0,
});

let drafts = 0;
const request: ModelStepRequest = {
  system: 'bench',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'go' }] }],
  tools: [
    {
      name: 'send_message',
      description: 'send',
      inputSchema: {
        type: 'object',
        properties: { type: { type: 'string' }, content: { type: 'string' } },
        required: ['type', 'content'],
      },
    },
  ],
  onSendDraft: () => {
    drafts++;
  },
};

async function once(provider: ModelProvider): Promise<number> {
  const started = performance.now();
  const result = await provider.step(request);
  const took = performance.now() - started;
  const sent = result.toolCalls[0]?.input as { content?: string } | undefined;
  if (sent?.content !== text) throw new Error('the streamed send_message did not arrive whole');
  return took;
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};

for (let i = 0; i < 3; i++) {
  await once(production);
  await once(baseline);
}
const times = { production: [] as number[], baseline: [] as number[] };
for (let i = 0; i < RUNS; i++) {
  // Alternating, so a change in machine load falls on both.
  if (i % 2 === 0) {
    times.production.push(await once(production));
    times.baseline.push(await once(baseline));
  } else {
    times.baseline.push(await once(baseline));
    times.production.push(await once(production));
  }
}
server.close();

const watch = new IdleWatch(TIMEOUT_MS);
const TOUCHES = 5_000_000;
const touchStart = performance.now();
for (let i = 0; i < TOUCHES; i++) watch.touch();
const touchNs = ((performance.now() - touchStart) * 1e6) / TOUCHES;
watch.stop();

const line = (name: string, values: number[]) =>
  `${name.padEnd(11)} p50 ${quantile(values, 0.5).toFixed(1)} ms  p90 ${quantile(values, 0.9).toFixed(1)} ms  min ${Math.min(...values).toFixed(1)} ms`;
console.log(
  `one step streaming ${WORDS} words (${WORDS + 4} SSE chunks, ${(text.length / 1024).toFixed(0)} KiB), ${RUNS} runs each, ${drafts} drafts told:`,
);
console.log(line('production', times.production));
console.log(line('baseline', times.baseline));
const diff = quantile(times.production, 0.5) - quantile(times.baseline, 0.5);
console.log(
  `difference of the medians: ${diff.toFixed(1)} ms (${((100 * diff) / quantile(times.baseline, 0.5)).toFixed(1)}%)`,
);
console.log(
  `IdleWatch.touch(): ${touchNs.toFixed(1)} ns per call; ${WORDS + 4} parts in one step: ${((touchNs * (WORDS + 4)) / 1e6).toFixed(3)} ms`,
);
