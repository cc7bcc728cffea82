/**
 * The model view of a 10,000-turn agent with compaction (issue 21): what building each call's
 * view costs — the history since the newest summary, through the guidance layer, counted against
 * the window, pruned or summarised when it passes 80 % — while the agent keeps working (one
 * step of about 600 tokens appended before each call). Target: < 50 ms per call.
 *
 * The history is rebuilt from a real JSONL first (as a restart does), with a summary record near
 * its end as an agent that lived this long has; the summaries written during the run come from a
 * scripted model that answers at once, so the figures are the box's own time, not a model's.
 *
 *   node --expose-gc --import tsx bench/model-view.ts [turns=10000] [calls=400] [window=131072] [userChars=12000]
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { SEND_MESSAGE_GUIDANCE } from '@sendbox/protocol';
import { runQueueWaitNs } from './cpu-wait.ts';
import { grokBot } from '@sendbox/txcript';
import {
  Compaction,
  historyFromRecords,
  injectionsLayer,
  scriptedProvider,
  summaryRecordText,
  TokenCounter,
  type ModelMessage,
} from '@sendbox/box';

const TURNS = Number(process.argv[2] ?? 10_000);
const CALLS = Number(process.argv[3] ?? 400);
const WINDOW = Number(process.argv[4] ?? 131_072);
const MODEL = 'grok-3';
/** The user's words per turn during the run: long ones make pruning alone fall short, so summaries are written. */
const USER_CHARS = Number(process.argv[5] ?? 12_000);

const words = ['harbor', 'lantern', 'quartz', 'meadow', 'ribbon', 'cobalt', 'saffron', 'glacier'];
let seed = 7;
function prose(chars: number): string {
  let out = '';
  while (out.length < chars) {
    seed = (seed * 48271) % 2147483647;
    out += `${words[seed % words.length]}${seed % 1000} `;
  }
  return out.slice(0, chars);
}

/** One turn as the box writes it: the user's words, two shell calls with output, a send. */
function turnLines(t: number): string[] {
  const lines: unknown[] = [
    { role: 'user', message: { content: [{ type: 'text', text: `[t${t}u]\n${prose(300)}` }] } },
  ];
  for (let k = 0; k < 2; k++) {
    const id = `c${t}_${k}`;
    lines.push({
      role: 'assistant',
      message: {
        content: [{ type: 'tool_use', name: 'shell', input: { command: `ls ${k}`, toolCallId: id } }],
      },
    });
    lines.push({
      role: 'tool',
      message: {
        content: [
          { type: 'tool_result', name: 'shell', result: { success: { stdout: prose(600), exitCode: 0 } } },
        ],
      },
    });
  }
  lines.push({
    role: 'assistant',
    message: {
      content: [
        {
          type: 'tool_use',
          name: 'send_message',
          input: { text: { content: prose(200) }, toolCallId: `s${t}` },
        },
      ],
    },
  });
  lines.push({
    role: 'tool',
    message: {
      content: [
        {
          type: 'tool_result',
          name: 'send_message',
          result: { success: { timestamp: '1', messageId: `t${t}s0` } },
        },
      ],
    },
  });
  return lines.map((line) => JSON.stringify(line));
}

const kept = { todos: [], openQuestions: [], secretNames: [] };

/** The agent's JSONL, read back as a restart does; the text and the records are dropped after. */
function openAgent(): { history: ModelMessage[]; rebuildMs: number } {
  const lines: string[] = [];
  for (let t = 0; t < TURNS; t++) {
    lines.push(...turnLines(t));
    // The agent was compacted before: its newest summary keeps the last 40 turns.
    if (t === TURNS - 1) {
      const summary = summaryRecordText(TURNS - 40, prose(3_000), kept);
      lines.push(JSON.stringify({ role: 'user', message: { content: [{ type: 'text', text: summary }] } }));
    }
  }
  const jsonl = `${lines.join('\n')}\n`;
  const started = performance.now();
  const records = grokBot.text
    .parse(jsonl, 'bench.jsonl')
    .records.flatMap((r) => (r.kind === 'record' ? [r.json] : []));
  const history = historyFromRecords(records);
  return { history, rebuildMs: performance.now() - started };
}

const { history, rebuildMs } = openAgent();
// What the open left behind is collected before the steady state is measured (run with --expose-gc).
(globalThis as { gc?: () => void }).gc?.();
let start: number;

const counter = await TokenCounter.forModel(MODEL);
let summaries = 0;
const model = scriptedProvider(() => {
  summaries += 1;
  return { text: prose(2_000) };
});
const compaction = new Compaction({
  window: () => WINDOW,
  counter: () => Promise.resolve(counter),
  provider: () => model,
  kept: () => Promise.resolve(kept),
});
const layers = [injectionsLayer({ guidance: SEND_MESSAGE_GUIDANCE, sendReminderEvery: 6 })];
const plan = {
  system: prose(2_000),
  tools: [{ name: 'shell', description: prose(1_000), inputSchema: {} }],
  turn: TURNS,
};
const io = { recordHiddenPrompt: () => undefined, recordNotice: () => undefined };

start = performance.now();
await compaction.view(history, plan, layers, io);
const firstMs = performance.now() - start;

const times: number[] = [];
const ownTimes: number[] = [];
/** Calls that wrote a summary (the text it is written from is rendered and counted): listed apart. */
const summaryCallMs: number[] = [];
let pruned = 0;
for (let i = 0; i < CALLS; i++) {
  const id = `b${i}`;
  history.push({
    role: 'assistant',
    content: [{ type: 'tool-call', toolCallId: id, toolName: 'shell', input: { command: `cat f${i}` } }],
  });
  history.push({
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: id,
        toolName: 'shell',
        output: { type: 'text', value: prose(2_400) },
      },
    ],
  });
  if (i % 8 === 7)
    history.push({
      role: 'user',
      content: [{ type: 'text', text: `[t${TURNS + i}u]\n${prose(USER_CHARS)}` }],
    });
  const summariesBefore = summaries;
  const waitBefore = runQueueWaitNs();
  start = performance.now();
  const view = await compaction.view(history, { ...plan, turn: TURNS + i }, layers, io);
  const ms = performance.now() - start;
  const waitAfter = runQueueWaitNs();
  if (JSON.stringify(view.messages).includes('Pruned from your context')) pruned += 1;
  if (summaries > summariesBefore) {
    summaryCallMs.push(ms);
    continue;
  }
  times.push(ms);
  if (waitBefore !== undefined && waitAfter !== undefined) ownTimes.push(ms - (waitAfter - waitBefore) / 1e6);
}
times.sort((a, b) => a - b);
ownTimes.sort((a, b) => a - b);
const at = (list: number[], q: number) =>
  list[Math.min(list.length - 1, Math.floor(q * list.length))]!.toFixed(2);
const pick = (q: number) => at(times, q);
console.log(
  `model view, ${TURNS} turns (${history.length} messages at the end), window ${WINDOW} tokens (${MODEL})`,
);
console.log(`  rebuild from the JSONL at open: ${rebuildMs.toFixed(0)} ms (once per agent open)`);
console.log(`  first call after open (scans the whole history once): ${firstMs.toFixed(1)} ms`);
console.log(
  `  ${times.length} calls: p50 ${pick(0.5)} ms, p99 ${pick(0.99)} ms, max ${pick(1)} ms (target p99 < 50 ms)`,
);
if (ownTimes.length > 0) {
  console.log(
    `  without the time spent waiting for a CPU: p50 ${at(ownTimes, 0.5)} ms, p99 ${at(ownTimes, 0.99)} ms`,
  );
}
console.log(
  `  calls that wrote a summary (besides the model's own time): ${summaryCallMs.map((ms) => ms.toFixed(0)).join(', ')} ms`,
);
console.log(
  `  calls with pruned outputs: ${pruned}; summaries written: ${summaries} (scripted model, no latency)`,
);
console.log(
  `  load average: ${loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')}`,
);
