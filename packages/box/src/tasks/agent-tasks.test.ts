import { mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { detectConfinement, type Confinement } from '../sandbox/confinement.ts';
import { noScrub, scrubberFor, type Scrubber } from '../secrets/scrub.ts';
import { awaitTool } from '../tools/await/index.ts';
import { shellTool } from '../tools/shell/index.ts';
import type { ToolContext, ToolEnvelope } from '../tools/types.ts';
import { AgentTasks, DEFAULT_TASK_LIMITS, type TaskLimits, type TaskView } from './agent-tasks.ts';
import { TaskBook } from './task-book.ts';
import type { SharedTaskOutput } from './shared-output.ts';

let confinement: Confinement;
let root: string;
let sandbox: string;
let book: TaskBook;
let tasks: AgentTasks;
let views: TaskView[];
let limits: TaskLimits;
let scrub: Scrubber;

beforeAll(async () => {
  confinement = await detectConfinement();
});

function makeTasks(options: { outputCapBytes?: number; sharedOutput?: SharedTaskOutput } = {}): AgentTasks {
  return new AgentTasks({
    book,
    limits: () => limits,
    scrubber: () => scrub,
    now: () => Date.now(),
    emit: (view) => views.push(view),
    ...options,
  });
}

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'sendbox-tasks-'));
  sandbox = path.join(root, 'sandbox');
  await mkdir(sandbox);
  await confinement.prepare(sandbox);
  book = new TaskBook(path.join(root, 'tasks.db'));
  views = [];
  limits = { ...DEFAULT_TASK_LIMITS };
  scrub = noScrub;
  tasks = makeTasks();
});

afterEach(async () => {
  await tasks.close();
  await rm(root, { recursive: true, force: true });
});

let calls = 0;
function ctx(signal?: AbortSignal): ToolContext {
  return {
    sandboxDir: sandbox,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', SECRET_TOKEN: 'hunter2-secret-value' },
    scrub,
    todos: [],
    now: () => Date.now(),
    tasks,
    call: { turn: 0, toolCallId: `call_${++calls}` },
    ...(signal ? { signal } : {}),
  };
}

const shell = () => shellTool({ confinement });

async function background(command: string): Promise<{ taskId: string; outputFilePath: string }> {
  const out = await shell().run({ command, isBackground: true }, ctx());
  const envelope = out.envelope as {
    success?: { taskId: string; outputFilePath: string };
    isBackground?: boolean;
  };
  if (!envelope.success) throw new Error(`not started: ${JSON.stringify(out.envelope)}`);
  expect(envelope.isBackground).toBe(true);
  return envelope.success;
}

async function awaitTask(
  input: { taskId: string; blockUntilMs?: number; regex?: string },
  signal?: AbortSignal,
) {
  return (await awaitTool.run(input, ctx(signal))).envelope;
}

function errorOf(envelope: ToolEnvelope): string {
  if (!('error' in envelope) || !('error' in envelope.error))
    throw new Error(`expected an error, got ${JSON.stringify(envelope)}`);
  return envelope.error.error;
}

function successOf(envelope: ToolEnvelope): Record<string, Record<string, unknown>> {
  if (!('success' in envelope)) throw new Error(`expected success, got ${JSON.stringify(envelope)}`);
  return envelope.success as Record<string, Record<string, unknown>>;
}

/** `sleep <marker>` processes (the sandbox's processes are the host's too, in another PID namespace). */
async function processesWith(marker: string): Promise<number> {
  let found = 0;
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline === `sleep\0${marker}\0`) found += 1;
  }
  return found;
}

describe('background commands', () => {
  it('returns a task id at once, runs confined, and is awaited to completion with its exit code and output', async () => {
    const started = Date.now();
    const { taskId, outputFilePath } = await background('sleep 0.3; echo "in $PWD as $(id -u)"; exit 3');
    expect(Date.now() - started).toBeLessThan(3000);
    expect(taskId).toMatch(/^task-[0-9a-f]{12}$/);
    expect(outputFilePath).toBe(path.join(await realSandbox(), '.tasks', `${taskId}.log`));
    const done = successOf(await awaitTask({ taskId, blockUntilMs: 20_000 }));
    expect(done.complete).toMatchObject({ taskId, exitCode: 3, outputFilePath });
    // As root, the agent's own uid: the owner of its prepared sandbox folder.
    const uid = process.getuid?.() === 0 ? (await stat(await realSandbox())).uid : process.getuid?.();
    expect(done.complete!.output).toBe(`in ${await realSandbox()} as ${uid}\n`);
    expect(await readFile(outputFilePath, 'utf8')).toBe(`in ${await realSandbox()} as ${uid}\n`);
    // Awaiting again shows no output twice.
    expect(successOf(await awaitTask({ taskId })).complete!.output).toBe('');
    expect(views.at(-1)).toMatchObject({ id: taskId, state: 'ended', exitCode: 3 });
  });

  it('records its end and answers its await even when the shared output store does not answer (a cluster database out of reach)', async () => {
    await tasks.close();
    tasks = makeTasks({
      sharedOutput: {
        append: () => new Promise(() => undefined),
        since: () => new Promise(() => undefined),
        seen: () => new Promise(() => undefined),
        markSeen: () => new Promise(() => undefined),
      },
    });
    const { taskId } = await background('echo done');
    const done = successOf(await awaitTask({ taskId, blockUntilMs: 20_000 }));
    expect(done.complete).toMatchObject({ taskId, exitCode: 0, output: 'done\n' });
    expect(book.get(taskId)?.state).toBe('ended');
  });

  it('cannot see outside the sandbox, as in the foreground', async () => {
    const { taskId } = await background(
      `ls ${JSON.stringify(root)} 2>&1; cat ${JSON.stringify(book.file)} 2>&1 | head -c 20`,
    );
    const done = successOf(await awaitTask({ taskId, blockUntilMs: 20_000 })).complete!;
    expect(String(done.output)).not.toContain('tasks.db');
    expect(String(done.output)).not.toContain('SQLite');
    expect(String(done.output)).toMatch(/cannot open directory|No such file/);
  });

  it('returns stillRunning with the output so far when the wait ends first', async () => {
    const { taskId } = await background('echo first; sleep 30');
    const waited = successOf(await awaitTask({ taskId, blockUntilMs: 700 }));
    expect(waited.stillRunning).toMatchObject({ taskId, output: 'first\n', outputLength: 6 });
    expect(waited.stillRunning!.runtimeMs).toBeGreaterThanOrEqual(600);
    expect(waited.complete).toBeUndefined();
  });

  it('wakes on a regex match in output not seen yet, and not again on the same output', async () => {
    const { taskId } = await background('echo booting; sleep 0.4; echo "listening on 8080"; sleep 30');
    const t0 = Date.now();
    const matched = successOf(await awaitTask({ taskId, blockUntilMs: 20_000, regex: 'listening on \\d+' }));
    expect(Date.now() - t0).toBeLessThan(15_000);
    expect(matched.stillRunning).toMatchObject({ taskId, regexRequested: true, regexMatched: true });
    expect(matched.stillRunning!.output).toContain('listening on 8080');
    // The match was seen: the same pattern waits for new output (none comes) until the time passes.
    const again = successOf(await awaitTask({ taskId, blockUntilMs: 300, regex: 'listening on \\d+' }));
    expect(again.stillRunning).toMatchObject({ regexMatched: false, output: '' });
  });

  it('refuses a pattern the linear-time engine cannot run, naming why', async () => {
    const { taskId } = await background('sleep 5');
    const out = await awaitTask({ taskId, regex: '(a)\\1' });
    expect(errorOf(out)).toMatch(/back-reference or lookaround/);
  });

  it('matches and shows output scrubbed: a pattern cannot test for a secret', async () => {
    scrub = scrubberFor(new Map([['SECRET_TOKEN', 'hunter2-secret-value']]));
    const { taskId } = await background('echo "token=$SECRET_TOKEN"; sleep 30');
    const probe = successOf(await awaitTask({ taskId, blockUntilMs: 800, regex: 'hunter2' }));
    expect(probe.stillRunning).toMatchObject({ regexMatched: false });
    expect(String(probe.stillRunning!.output)).not.toContain('hunter2');
    expect(String(probe.stillRunning!.output)).toContain('[secret SECRET_TOKEN redacted]');
  });

  it('kills a command at its wall-clock limit', async () => {
    limits = { ...limits, maxRuntimeMs: 400 };
    const { taskId } = await background('sleep 30');
    const done = successOf(await awaitTask({ taskId, blockUntilMs: 20_000 })).complete!;
    expect(done).toMatchObject({ taskId, reason: 'timed-out' });
    expect(String(done.note)).toMatch(/wall-clock limit of 400 ms/);
  });

  it('runs at most four at once and says which are running', async () => {
    for (let i = 0; i < 4; i++) await background(`sleep 30 # ${i}`);
    const fifth = await shell().run({ command: 'sleep 30', isBackground: true }, ctx());
    expect(errorOf(fifth.envelope)).toMatch(
      /At most 4 background commands run at once.*task-[0-9a-f]{12} \(sleep 30 # 0\)/,
    );
  });

  it('stopAll kills the whole process tree, setsid children included', async () => {
    const marker = `${Math.floor(Math.random() * 1e6)}.271`;
    const { taskId } = await background(`setsid sleep ${marker} & sleep ${marker}`);
    for (let i = 0; i < 100 && (await processesWith(marker)) < 2; i++) await sleep(50);
    expect(await processesWith(marker)).toBe(2);
    await tasks.stopAll();
    expect(await processesWith(marker)).toBe(0);
    const done = successOf(await awaitTask({ taskId })).complete!;
    expect(done).toMatchObject({ reason: 'stopped' });
  });

  it('an await ends when the turn is stopped (its signal)', async () => {
    const { taskId } = await background('sleep 30');
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 200);
    const t0 = Date.now();
    const out = successOf(await awaitTask({ taskId, blockUntilMs: 60_000 }, abort.signal));
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(out.stillRunning).toMatchObject({ taskId });
  });

  it('keeps output up to the cap in the file and says the rest was dropped', async () => {
    await tasks.close();
    tasks = makeTasks({ outputCapBytes: 1000 });
    const { taskId, outputFilePath } = await background('head -c 5000 /dev/zero | tr "\\0" x');
    const done = successOf(await awaitTask({ taskId, blockUntilMs: 20_000 })).complete!;
    expect(done.outputLength).toBe(5000);
    const file = await readFile(outputFilePath, 'utf8');
    expect(file.startsWith('x'.repeat(1000))).toBe(true);
    expect(file).toContain('[output cut at 1000 bytes');
    expect(file.length).toBeLessThan(1100);
  });

  it('an unknown task id is an error naming the running ones', async () => {
    const { taskId } = await background('sleep 30');
    expect(await awaitTask({ taskId: 'task-000000000000' })).toMatchObject({
      error: { error: `There is no task task-000000000000. Running tasks: ${taskId}.` },
    });
  });
});

describe('after a crash', () => {
  it('a task left running is interrupted on the next open, and await says so', async () => {
    const { taskId, outputFilePath } = await background('echo partial; sleep 30');
    for (let i = 0; i < 100 && views.at(-1)?.outputLength !== 8; i++) await sleep(50);
    // The process dies without ending anything (its record stays `running`): a fresh book and registry.
    const crashed = new TaskBook(book.file);
    const next = new AgentTasks({
      book: crashed,
      limits: () => limits,
      scrubber: () => scrub,
      now: () => Date.now(),
      emit: () => undefined,
    });
    const interrupted = next.recoverInterrupted();
    expect(interrupted.map((task) => [task.id, task.state, task.outputPath])).toEqual([
      [taskId, 'interrupted', outputFilePath],
    ]);
    expect(crashed.unreported().map((task) => task.id)).toEqual([taskId]);
    crashed.markReported([taskId]);
    expect(crashed.unreported()).toEqual([]);
    const out = await awaitTool.run({ taskId }, { ...ctx(), tasks: next });
    expect(out.envelope).toMatchObject({
      success: { complete: { taskId, exitCode: null, interrupted: true, outputFilePath } },
    });
    await next.close();
  });
});

async function realSandbox(): Promise<string> {
  const { realpath } = await import('node:fs/promises');
  return realpath(sandbox);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
