/**
 * `await` wake-up latency: how long after a background command ends does an
 * `await` blocked on it return. The command prints the clock (CLOCK_REALTIME,
 * ns) as its very last act, then exits; the latency is the time the `await`
 * call returned minus that stamp, so it covers bash's exit, bubblewrap's
 * teardown, the pipes closing, the output reaching the file and the wake-up.
 * Target: p99 < 100 ms.
 *
 *   npx tsx bench/await-wakeup.ts [tasks=200]
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { detectConfinement } from '../packages/box/src/sandbox/confinement.ts';
import { noScrub } from '../packages/box/src/secrets/scrub.ts';
import { AgentTasks, DEFAULT_TASK_LIMITS } from '../packages/box/src/tasks/agent-tasks.ts';
import { TaskBook } from '../packages/box/src/tasks/task-book.ts';
import { awaitTool } from '../packages/box/src/tools/await/index.ts';
import { shellTool } from '../packages/box/src/tools/shell/index.ts';
import type { ToolContext } from '../packages/box/src/tools/types.ts';

const TASKS = Number(process.argv[2] ?? 200);

const dir = await mkdtemp(path.join(process.env.SENDBOX_BENCH_DIR ?? tmpdir(), 'sendbox-bench-await-'));
const sandbox = path.join(dir, 'sandbox');
await mkdir(sandbox);
const confinement = await detectConfinement();
if (!confinement.status.confined)
  throw new Error(`bubblewrap is not usable here: ${confinement.status.detail}`);
await confinement.prepare(sandbox);
const tasks = new AgentTasks({
  book: new TaskBook(path.join(dir, 'tasks.db')),
  limits: () => DEFAULT_TASK_LIMITS,
  scrubber: () => noScrub,
  now: Date.now,
  emit: () => undefined,
});
const shell = shellTool({ confinement });
let call = 0;
const ctx = (): ToolContext => ({
  sandboxDir: sandbox,
  env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: sandbox },
  scrub: noScrub,
  todos: [],
  now: Date.now,
  tasks,
  call: { turn: 0, toolCallId: `call_${++call}` },
});

const samples: number[] = [];
for (let i = 0; i < TASKS + 5; i++) {
  const started = await shell.run({ command: 'sleep 0.05; date +%s%N', isBackground: true }, ctx());
  if (!('success' in started.envelope)) throw new Error(JSON.stringify(started.envelope));
  const taskId = started.envelope.success.taskId as string;
  const out = await awaitTool.run({ taskId, blockUntilMs: 60_000 }, ctx());
  const returnedNs = BigInt(Date.now()) * 1_000_000n; // ms resolution: enough against a 100 ms target
  if (!('success' in out.envelope)) throw new Error(JSON.stringify(out.envelope));
  const complete = out.envelope.success.complete as { output: string; exitCode: number };
  if (complete.exitCode !== 0) throw new Error(JSON.stringify(complete));
  const endedNs = BigInt(complete.output.trim());
  if (i >= 5) samples.push(Number(returnedNs - endedNs) / 1e6); // the first tasks warm up
}
await tasks.close();
await rm(dir, { recursive: true, force: true });

const pct = (p: number) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
console.log(
  `await wake-up after a background command's last act, ${TASKS} tasks (${confinement.status.mode})`,
);
console.log(
  `p50 ${pct(50).toFixed(1)} ms   p90 ${pct(90).toFixed(1)} ms   p99 ${pct(99).toFixed(1)} ms   max ${pct(100).toFixed(1)} ms   (target p99 < 100 ms)`,
);
console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
