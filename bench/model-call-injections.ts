/**
 * What rebuilding guidance and reminders per model call costs (host/middleware/injections.ts):
 * `withInjections` over a long agent history — N turns, each a user message, six shell calls
 * with results, and a send — as the turn driver does before every step. Target: well under the
 * model call itself (milliseconds at most for thousands of messages).
 *
 *   npx tsx bench/model-call-injections.ts [turns=500] [runs=200]
 */
import { performance } from 'node:perf_hooks';
import { SEND_MESSAGE_GUIDANCE } from '@sendbox/protocol';
import { withInjections, type ModelMessage } from '@sendbox/box';

const TURNS = Number(process.argv[2] ?? 500);
const RUNS = Number(process.argv[3] ?? 200);

const history: ModelMessage[] = [];
for (let t = 0; t < TURNS; t++) {
  history.push({ role: 'user', content: [{ type: 'text', text: `[t${t}u]\nstep ${t}` }] });
  for (let k = 0; k < 6; k++) {
    const id = `c${t}_${k}`;
    history.push({
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId: id, toolName: 'shell', input: { command: 'ls' } }],
    });
    history.push({
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: id, toolName: 'shell', output: { type: 'text', value: 'a\nb' } },
      ],
    });
  }
  const id = `s${t}`;
  history.push({
    role: 'assistant',
    content: [
      {
        type: 'tool-call',
        toolCallId: id,
        toolName: 'send_message',
        input: { type: 'text', content: 'done' },
      },
    ],
  });
  history.push({
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: id,
        toolName: 'send_message',
        output: { type: 'text', value: `Message sent to user. (id: t${t}s0)` },
      },
    ],
  });
}

const config = { guidance: SEND_MESSAGE_GUIDANCE, sendReminderEvery: 6 };
for (let i = 0; i < 20; i++) withInjections(history, config); // warm-up
const times: number[] = [];
for (let i = 0; i < RUNS; i++) {
  const start = performance.now();
  withInjections(history, config);
  times.push(performance.now() - start);
}
times.sort((a, b) => a - b);
const pick = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(3);
console.log(`withInjections over ${history.length} messages (${TURNS} turns), ${RUNS} runs`);
console.log(`  median ${pick(0.5)} ms, p95 ${pick(0.95)} ms, max ${pick(1)} ms`);
