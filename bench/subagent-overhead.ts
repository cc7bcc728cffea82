/**
 * A subagent's overhead: the same turn (a `read` call, then a final text, from the scripted
 * model) run directly on a turn context, and run as a child through the `task` tool (the task
 * book's rows, the child's transcript folder and file, the launcher, the result with its list
 * of calls). Runs alternate, so load hits both alike; the figure is the difference of medians.
 * Target: < 20 ms.
 *
 *   npx tsx bench/subagent-overhead.ts [runs=200]
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { userRecordTexts } from '../packages/box/src/agent/inputs.ts';
import { runTurn } from '../packages/box/src/agent/turn.ts';
import { turnDriver } from '../packages/box/src/agent/turn-driver.ts';
import { AttachmentStore } from '../packages/box/src/attachments/store.ts';
import { ensurePrivateDir } from '../packages/box/src/fs/atomic.ts';
import { scriptedProvider, withScript } from '../packages/box/src/providers/scripted.ts';
import type { ModelMessage } from '../packages/box/src/providers/types.ts';
import { noScrub } from '../packages/box/src/secrets/scrub.ts';
import { SecretStore } from '../packages/box/src/secrets/store.ts';
import { JsonlFile } from '../packages/box/src/stores/files/jsonl.ts';
import { fileChildTranscripts } from '../packages/box/src/stores/files/agent-stores.ts';
import { agentPaths } from '../packages/box/src/stores/files/layout.ts';
import { TranscriptWriter } from '../packages/box/src/stores/transcript-writer.ts';
import { WritePoints } from '../packages/box/src/stores/write-points.ts';
import { ChildLedger } from '../packages/box/src/subagents/child-ledger.ts';
import {
  CHILD_TURN_TEXTS,
  childContext,
  runChild,
  type ChildParent,
} from '../packages/box/src/subagents/run-child.ts';
import { AgentTasks, DEFAULT_TASK_LIMITS } from '../packages/box/src/tasks/agent-tasks.ts';
import { TaskBook } from '../packages/box/src/tasks/task-book.ts';
import { readTool } from '../packages/box/src/tools/read/index.ts';
import { taskTool } from '../packages/box/src/tools/task/index.ts';
import type { HostTool } from '../packages/box/src/tools/types.ts';

const RUNS = Number(process.argv[2] ?? 200);
const WARM_UP = 10;

const dir = await mkdtemp(path.join(process.env.SENDBOX_BENCH_DIR ?? tmpdir(), 'sendbox-bench-child-'));
const sandbox = path.join(dir, 'sandbox');
await mkdir(sandbox);
await writeFile(path.join(sandbox, 'note.txt'), 'a short note\n');
const model = scriptedProvider([]);
const points = new WritePoints();
const parent: ChildParent = {
  agent: {
    id: 'parent',
    paths: { ...agentPaths(dir, 'parent'), sandbox },
    profile: { name: 'Bench', description: '', harness: 'box', title: '' },
    toolEnv: { PATH: '/usr/bin:/bin' },
    attachments: new AttachmentStore(path.join(dir, 'attachments')),
    secrets: new SecretStore(path.join(dir, 'secrets.enc'), Buffer.alloc(32, 7), 'parent'),
    toolGates: [],
    scrubber: () => noScrub,
    allowDomains: () => Promise.resolve([]),
    now: Date.now,
  },
  dataDir: dir,
  transcript: fileChildTranscripts(dir),
  provider: model,
  tools: [readTool] as HostTool[],
  maxDepth: 1,
  depth: 0,
  writePoints: points,
  maxSteps: 25,
  onEntry: () => undefined,
};
const tasks = new AgentTasks({
  book: new TaskBook(path.join(dir, 'tasks.db')),
  limits: () => DEFAULT_TASK_LIMITS,
  scrubber: () => noScrub,
  now: Date.now,
  emit: () => undefined,
});
const prompt = withScript('Read note.txt and say what it holds.', [
  { toolCalls: [{ name: 'read', input: { path: 'note.txt' } }] },
  { text: 'It holds a short note.' },
]);

/** The turn on a context of its own, as a session would run it (its folder made beforehand). */
async function direct(i: number): Promise<number> {
  const own = agentPaths(dir, `direct-${i}`);
  await ensurePrivateDir(own.transcriptDir);
  const started = performance.now();
  const log = new JsonlFile(own.jsonl);
  const writer = new TranscriptWriter(
    log,
    new ChildLedger(),
    () => noScrub,
    () => undefined,
    points,
  );
  const texts = userRecordTexts(0, prompt);
  writer.appendRecords([{ role: 'user', blocks: texts.map((text) => ({ type: 'text' as const, text })) }]);
  const history: ModelMessage[] = [
    { role: 'user', content: texts.map((text) => ({ type: 'text' as const, text })) },
  ];
  const ctx = childContext(
    parent,
    { agentId: `direct-${i}`, description: 'bench', prompt, isBackground: false, onStep: () => undefined },
    { ...own, sandbox },
    writer,
  );
  const signal = new AbortController().signal;
  ctx.state.startTurn();
  await runTurn(history, turnDriver(ctx, 0, model, { signal }), ctx.state, {
    maxSteps: 25,
    texts: CHILD_TURN_TEXTS,
    signal,
    endsOnText: true,
  });
  log.close();
  return performance.now() - started;
}

let call = 0;
async function asChild(): Promise<number> {
  const started = performance.now();
  const out = await taskTool.run(
    { description: 'bench', prompt },
    {
      sandboxDir: sandbox,
      env: {},
      scrub: noScrub,
      todos: [],
      now: Date.now,
      tasks,
      subagents: { start: (job) => runChild(parent, job) },
      call: { turn: 0, toolCallId: `call_${++call}` },
    },
  );
  const took = performance.now() - started;
  if (!('success' in out.envelope) || out.envelope.success.result !== 'It holds a short note.')
    throw new Error(JSON.stringify(out.envelope));
  return took;
}

const directMs: number[] = [];
const childMs: number[] = [];
for (let i = 0; i < RUNS + WARM_UP; i++) {
  // Which runs first alternates, so neither always gets the warmer caches.
  let d: number;
  let c: number;
  if (i % 2 === 0) {
    d = await direct(i);
    c = await asChild();
  } else {
    c = await asChild();
    d = await direct(i);
  }
  if (i < WARM_UP) continue;
  directMs.push(d);
  childMs.push(c);
}
await tasks.close();
await rm(dir, { recursive: true, force: true });

const pct = (samples: number[], p: number) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
const line = (name: string, s: number[]) =>
  `${name}: p50 ${pct(s, 50).toFixed(2)} ms   p90 ${pct(s, 90).toFixed(2)} ms   p99 ${pct(s, 99).toFixed(2)} ms`;
console.log(`a two-step turn (read, then text), ${RUNS} runs each, alternating`);
console.log(line('run directly   ', directMs));
console.log(line('run as a child ', childMs));
console.log(
  `overhead of the child: ${(pct(childMs, 50) - pct(directMs, 50)).toFixed(2)} ms at p50, ${(pct(childMs, 90) - pct(directMs, 90)).toFixed(2)} ms at p90   (target < 20 ms)`,
);
console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
