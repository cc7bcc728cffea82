/**
 * Background-task records across cluster workers, on a real PostgreSQL (issue 25): a task started in
 * a turn on a worker process is listed with its state by a gateway that runs no turn, and stopped
 * through it by the worker running it; when that
 * worker is SIGKILLed, its process is lost and the record says so (`interrupted`, not `running`
 * forever), and the agent's next turn on another worker is told; an `await` on another worker follows
 * the record of a task whose process lives elsewhere until it ends.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { AgentTasks } from '../tasks/agent-tasks.ts';
import { scriptedProvider } from '../providers/scripted.ts';
import type { ModelProvider } from '../providers/types.ts';
import { useServices } from '../stores/postgres/backend.ts';
import { PgTaskBook } from '../stores/postgres/task-book.ts';
import { startHeartbeat, WORKER_TTL_MS } from '../stores/postgres/worker-heartbeats.ts';
import { startAcceptingWorker, WorkerProcesses } from '../testing/cluster-children.ts';
import { sendText } from '../testing/host-fixture.ts';
import { until } from '../testing/processes.ts';
import { useClusterKit } from '../testing/cluster-kit.ts';
import { noScrub, scrubberFor } from '../secrets/scrub.ts';
import { detectConfinement, type Confinement } from '../sandbox/confinement.ts';
import { KEEP_AFTER_END_MS, PgTaskOutputs } from '../stores/postgres/task-outputs.ts';
import { shellTool } from '../tools/shell/index.ts';
import type { SharedTaskOutput } from '../tasks/shared-output.ts';
import { TaskWakes } from '../tasks/task-wakes.ts';
import type { TaskStore } from '../tasks/task-book.ts';

const services = useServices();

/** `outputs` whose appends each take `ms` longer. */
function slowly(outputs: SharedTaskOutput, ms: number): SharedTaskOutput {
  return {
    append: async (taskId, start, bytes) => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      await outputs.append(taskId, start, bytes);
    },
    since: (taskId, from) => outputs.since(taskId, from),
    seen: (taskId) => outputs.seen(taskId),
    markSeen: (taskId, upTo) => outputs.markSeen(taskId, upTo),
  };
}

/** Starts `command` in the background through the shell tool, in a turn of `tasks`' agent; its task id. */
async function runInBackground(
  command: string,
  sandboxDir: string,
  confinement: Confinement,
  tasks: AgentTasks,
): Promise<string> {
  const started = await shellTool({ confinement }).run(
    { command, isBackground: true },
    {
      sandboxDir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      scrub: noScrub,
      todos: [],
      now: () => Date.now(),
      tasks,
      call: { turn: 0, toolCallId: 'call-1' },
    },
  );
  return (started.envelope as { success: { taskId: string } }).success.taskId;
}

describe('background tasks across cluster workers', () => {
  const kit = useClusterKit(services);

  it('lists a task of another worker with its state and stops it through the gateway; its worker SIGKILLed, it is interrupted and the next turn is told', async () => {
    const { databaseUrl, objectStoreUrl, credentials } = services();
    const { schema, db } = await kit.freshSchema();
    const masterKey = randomBytes(32);
    const front = await startAcceptingWorker({
      databaseUrl,
      objectStoreUrl,
      credentials,
      schema,
      masterKey,
      dataDir: await kit.tempDir('gateway'),
      workerName: 'gateway',
    });
    kit.defer(() => front.close());
    const processes = new WorkerProcesses();
    kit.defer(() => Promise.resolve(processes.stopAll()));
    const a = await processes.start({
      databaseUrl,
      objectStoreUrl,
      credentials,
      schema,
      keyHex: masterKey.toString('hex'),
      dataDir: await kit.tempDir('worker-a'),
      name: 'worker-a',
    });
    const agent = await front.host.createAgent({ name: 'Background' });
    await front.host.sendPrompt({ agentId: agent.id, prompt: 'bg sleep 300', clientNonce: 'b0' });
    const tasks = () => front.host.listTasks(agent.id);
    await until(async () => (await tasks()).length === 1, 'the task to be listed', 60_000);
    const [task] = await tasks();
    expect(task).toMatchObject({ kind: 'command', label: 'sleep 300', state: 'running' });
    const { rows } = await db.pool.query<{ worker: string }>(
      `SELECT worker FROM ${db.table('tasks')} WHERE agent_id = $1`,
      [agent.id],
    );
    expect(rows).toEqual([{ worker: 'worker-a' }]);
    // Still running while A lives, past the TTL.
    await new Promise((resolve) => setTimeout(resolve, WORKER_TTL_MS + 1000));
    expect((await tasks())[0]!.state).toBe('running');

    // A second task, stopped through the gateway, which does not run it: A stops it.
    await front.host.sendPrompt({ agentId: agent.id, prompt: 'bg sleep 301', clientNonce: 'b2' });
    const byLabel = async (label: string) => (await tasks()).find((view) => view.label === label);
    await until(async () => (await byLabel('sleep 301'))?.state === 'running', 'the second task', 60_000);
    const second = (await byLabel('sleep 301'))!;
    expect(await front.host.stopTask(agent.id, second.id)).toEqual({ stopped: true });
    await until(async () => (await byLabel('sleep 301'))?.state === 'ended', 'A to stop it', 10_000);
    expect(await byLabel('sleep 301')).toMatchObject({ reason: 'stopped' });
    expect(await front.host.stopTask(agent.id, second.id)).toEqual({ stopped: false });
    expect((await byLabel('sleep 300'))!.state).toBe('running');

    a.child.kill('SIGKILL');
    await until(
      async () => (await byLabel('sleep 300'))!.state === 'interrupted',
      'the lost task to be interrupted',
      WORKER_TTL_MS + 10_000,
    );

    // The agent's next turn, on a worker that never held it, is told what was lost.
    const model = scriptedProvider([sendText('ok'), {}]);
    const b = await kit.startWorker({
      dataDirName: 'worker-b',
      schema,
      masterKey,
      env: {},
      provider: model,
      workerName: 'worker-b',
    });
    void b;
    await front.host.sendPrompt({ agentId: agent.id, prompt: 'what happened?', clientNonce: 'b1' });
    await until(() => model.requests.length > 0, 'the next turn on B', 60_000);
    const seen = JSON.stringify(model.requests[0]!.messages);
    expect(seen).toContain(
      `background command ${task!.id} (sleep 300): it ran on cluster worker worker-a, which stopped`,
    );
  }, 150_000);

  it('await on another worker follows the record of a task whose process lives elsewhere until it ends', async () => {
    const { db } = await kit.freshSchema();
    const elsewhere = await startHeartbeat(db, 'worker-a');
    kit.defer(() => elsewhere.stop());
    const agentId = 'agent-await';
    const a = new PgTaskBook(db, agentId, 'worker-a', WORKER_TTL_MS);
    const b = new PgTaskBook(db, agentId, 'worker-b', WORKER_TTL_MS);
    a.started({
      id: 'task-1',
      kind: 'command',
      turn: 0,
      toolCallId: 'call-1',
      label: 'make build',
      outputPath: '/sandbox/.tasks/task-1.log',
      agentId: null,
      startedAt: Date.now(),
      notice: null,
    });
    const tasksOnB = new AgentTasks({
      book: b,
      limits: () => ({ maxCommands: 4, maxRuntimeMs: 60_000, maxChildren: 2 }),
      scrubber: () => noScrub,
      now: Date.now,
      emit: () => undefined,
    });
    const short = await tasksOnB.wait('task-1', { blockUntilMs: 300 });
    expect(short.kind).toBe('running');
    expect(JSON.stringify(short)).toContain('runs on cluster worker worker-a');
    let endWritten = false;
    setTimeout(() => {
      a.ended('task-1', Date.now(), { exitCode: 0, reason: 'exited' });
      endWritten = true;
    }, 700);
    // Complete, not still running at the end of its block: it followed the record to its end (no
    // wall-clock bound, which a loaded machine would break).
    const done = await tasksOnB.wait('task-1', { blockUntilMs: 20_000 });
    expect(endWritten).toBe(true);
    expect(done).toMatchObject({ kind: 'complete', payload: { taskId: 'task-1', exitCode: 0 } });
  }, 30_000);

  it('await on another worker shows the output the task’s worker shared, scrubbed, matches a regex in it, and has every byte at the end', async () => {
    const { db } = await kit.freshSchema();
    const agentId = 'agent-shared-output';
    const elsewhere = await startHeartbeat(db, 'worker-a');
    kit.defer(() => elsewhere.stop());
    const root = await mkdtemp(path.join(os.tmpdir(), 'sendbox-shared-output-'));
    kit.defer(() => rm(root, { recursive: true, force: true }));
    const confinement = await detectConfinement();
    await confinement.prepare(root);
    const secret = 'hunter2-secret-value';
    const limits = () => ({ maxCommands: 4, maxRuntimeMs: 60_000, maxChildren: 2 });
    const tasksOnA = new AgentTasks({
      book: new PgTaskBook(db, agentId, 'worker-a', WORKER_TTL_MS),
      limits,
      scrubber: () => noScrub,
      now: Date.now,
      emit: () => undefined,
      // A slow database on A's side: the end must still not be recorded before its last output.
      sharedOutput: slowly(new PgTaskOutputs(db, agentId), 400),
    });
    kit.defer(() => tasksOnA.close());
    const tasksOnB = new AgentTasks({
      book: new PgTaskBook(db, agentId, 'worker-b', WORKER_TTL_MS),
      limits,
      scrubber: () => scrubberFor(new Map([['API_TOKEN', secret]])),
      now: Date.now,
      emit: () => undefined,
      sharedOutput: new PgTaskOutputs(db, agentId),
    });
    // A command on A: its output comes over three seconds, the secret in the middle.
    const taskId = await runInBackground(
      `echo starting; sleep 1; echo "token ${secret}"; echo ready-now; sleep 2; echo bye`,
      root,
      confinement,
      tasksOnA,
    );
    // B's await waits for the regex in what A shares (not only for the record's end).
    const matched = await tasksOnB.wait(taskId, { blockUntilMs: 20_000, pattern: /ready-now/ });
    expect(matched).toMatchObject({ kind: 'running', payload: { regexRequested: true, regexMatched: true } });
    const shown = 'payload' in matched ? JSON.stringify(matched.payload.output) : '';
    expect(shown).toContain('starting\\n');
    expect(shown).toContain('ready-now');
    expect(shown).not.toContain(secret);
    // The end: what came after, not what was shown, and the exit code.
    const done = await tasksOnB.wait(taskId, { blockUntilMs: 20_000 });
    expect(done).toMatchObject({ kind: 'complete', payload: { exitCode: 0, output: 'bye\n' } });
    // A wake on B quotes the end of the output as shared (B's sandbox has no such file).
    const record = new PgTaskBook(db, agentId, 'worker-b', WORKER_TTL_MS).get(taskId)!;
    const tail = await tasksOnB.tailText(record, path.join(root, 'not-this-worker'));
    expect(tail).toContain('ready-now\nbye\n');
    expect(tail).not.toContain(secret);
  }, 60_000);

  it('never shows output twice: what an await on any worker showed is where the next one starts, on a third worker or on the one running it', async () => {
    const { db } = await kit.freshSchema();
    const agentId = 'agent-seen-output';
    const heartbeat = await startHeartbeat(db, 'worker-a');
    kit.defer(() => heartbeat.stop());
    const root = await mkdtemp(path.join(os.tmpdir(), 'sendbox-seen-output-'));
    kit.defer(() => rm(root, { recursive: true, force: true }));
    const confinement = await detectConfinement();
    await confinement.prepare(root);
    const limits = () => ({ maxCommands: 4, maxRuntimeMs: 60_000, maxChildren: 2 });
    const on = (worker: string) =>
      new AgentTasks({
        book: new PgTaskBook(db, agentId, worker, WORKER_TTL_MS),
        limits,
        scrubber: () => noScrub,
        now: Date.now,
        emit: () => undefined,
        sharedOutput: new PgTaskOutputs(db, agentId),
      });
    const [tasksOnA, tasksOnB, tasksOnC] = [on('worker-a'), on('worker-b'), on('worker-c')];
    kit.defer(() => tasksOnA.close());
    // Each line waits for the test's go-ahead, so what each await has seen is known.
    const after = (file: string) => `until [ -e ${file} ]; do sleep 0.05; done`;
    const taskId = await runInBackground(
      `echo one; ${after('go2')}; echo two; ${after('go3')}; echo three; ${after('go4')}; echo four`,
      root,
      confinement,
      tasksOnA,
    );
    const shown = (result: Awaited<ReturnType<AgentTasks['wait']>>) =>
      'payload' in result && typeof result.payload.output === 'string' ? result.payload.output : undefined;
    const upTo = (pattern: RegExp) => ({ blockUntilMs: 20_000, pattern });

    expect(shown(await tasksOnB.wait(taskId, upTo(/one/)))).toBe('one\n');
    await writeFile(path.join(root, 'go2'), '');
    // A third worker goes on from where B's await left off.
    expect(shown(await tasksOnC.wait(taskId, upTo(/two/)))).toBe('two\n');
    await writeFile(path.join(root, 'go3'), '');
    // The worker running it reads its own file, from where B and C left off.
    expect(shown(await tasksOnA.wait(taskId, upTo(/three/)))).toBe('three\n');
    await writeFile(path.join(root, 'go4'), '');
    const done = await tasksOnB.wait(taskId, { blockUntilMs: 20_000 });
    expect(done).toMatchObject({ kind: 'complete', payload: { exitCode: 0, output: 'four\n' } });
  }, 60_000);

  it('keeps the newest bytes of a task’s shared output, and gives what follows a lost piece', async () => {
    const { db } = await kit.freshSchema();
    const outputs = new PgTaskOutputs(db, 'agent-kept', 8);
    await outputs.append('t', 0, Buffer.from('abcdef'));
    await outputs.append('t', 6, Buffer.from('ghijkl'));
    expect(await outputs.since('t', 2)).toEqual({ start: 2, end: 12, bytes: Buffer.from('cdefghijkl') });
    await outputs.append('t', 12, Buffer.from('mnop'));
    // 'abcdef' ends before the newest 8 bytes: dropped; a read from 0 starts where the kept bytes do.
    expect(await outputs.since('t', 0)).toEqual({ start: 6, end: 16, bytes: Buffer.from('ghijklmnop') });
    expect(await outputs.since('t', 16)).toEqual({ start: 16, end: 16, bytes: Buffer.alloc(0) });
    // A piece its worker could not share (bytes 2-5): only what follows the gap.
    await outputs.append('u', 0, Buffer.from('ab'));
    await outputs.append('u', 5, Buffer.from('xy'));
    expect(await outputs.since('u', 0)).toEqual({ start: 5, end: 7, bytes: Buffer.from('xy') });
    // A task that ended over an hour ago: its output goes when another task of the agent starts.
    const book = new PgTaskBook(db, 'agent-kept', 'worker-a', WORKER_TTL_MS);
    const started = (id: string, startedAt: number) =>
      book.started({
        id,
        kind: 'command',
        turn: 0,
        toolCallId: id,
        label: id,
        outputPath: null,
        agentId: null,
        startedAt,
      });
    started('t', Date.now() - 2 * KEEP_AFTER_END_MS);
    book.ended('t', Date.now() - KEEP_AFTER_END_MS - 1000, { exitCode: 0 });
    started('u', Date.now());
    book.ended('u', Date.now(), { exitCode: 0 });
    await outputs.append('next', 0, Buffer.from('go'));
    expect((await outputs.since('t', 0)).bytes).toEqual(Buffer.alloc(0));
    expect((await outputs.since('u', 0)).bytes).toEqual(Buffer.from('xy'));
  });

  it('wakes the agent once for a task’s end when sessions on two workers both find it untold', async () => {
    const { db } = await kit.freshSchema();
    const agentId = 'agent-wake';
    const onA = new PgTaskBook(db, agentId, 'worker-a', WORKER_TTL_MS);
    const onB = new PgTaskBook(db, agentId, 'worker-b', WORKER_TTL_MS);
    const now = Date.now();
    onA.started({
      id: 'task-1',
      kind: 'command',
      turn: 0,
      toolCallId: 'call-1',
      label: 'make build',
      outputPath: null,
      agentId: null,
      startedAt: now,
      notice: null,
    });
    onA.ended('task-1', now + 1, { exitCode: 0, reason: 'exited' });
    const woken: string[] = [];
    const door = (who: string) => ({
      free: true,
      wake: (nonce: string) => {
        woken.push(`${who} ${nonce}`);
        return Promise.resolve();
      },
    });
    // B's session reads the end untold; A's session wakes the agent for it before B marks it.
    const wakesA = new TaskWakes(
      onA,
      (text) => text,
      () => Promise.resolve(undefined),
    );
    const racing: TaskStore = Object.assign(Object.create(onB) as PgTaskBook, {
      untold: () => {
        const untold = onB.untold();
        wakesA.ready(door('A'));
        return untold;
      },
    });
    const wakesB = new TaskWakes(
      racing,
      (text) => text,
      () => Promise.resolve(undefined),
    );
    wakesB.ready(door('B'));
    await wakesB.settled();
    await wakesA.settled();
    expect(woken).toHaveLength(1);
    expect(woken[0]).toMatch(/^A task-wake:/);
    expect(onB.get('task-1')!.notice).toBe('told');
  }, 30_000);

  it('tells the next turn in a session a worker kept about a task lost with another worker', async () => {
    const { databaseUrl, objectStoreUrl, credentials } = services();
    const { schema } = await kit.freshSchema();
    const masterKey = randomBytes(32);
    const front = await startAcceptingWorker({
      databaseUrl,
      objectStoreUrl,
      credentials,
      schema,
      masterKey,
      dataDir: await kit.tempDir('gateway'),
      workerName: 'gateway',
    });
    kit.defer(() => front.close());
    // B runs one turn at a time; a turn of the agent "Holder" waits until it is let go.
    let letGo: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    let holding = false;
    kit.defer(() => letGo());
    const script = scriptedProvider((request) =>
      JSON.stringify(request.messages.at(-1)).includes('send_message') ? {} : sendText('ok'),
    );
    const model: ModelProvider = {
      ...script,
      step: async (request) => {
        if (request.system.startsWith('You are Holder')) {
          holding = true;
          await held;
        }
        return script.step(request);
      },
    };
    await kit.startWorker({
      dataDirName: 'worker-b',
      schema,
      masterKey,
      env: { SENDBOX_TURN_CONCURRENCY: '1' },
      provider: model,
      workerName: 'worker-b',
    });
    const agent = await front.host.createAgent({ name: 'Kept' });
    const holder = await front.host.createAgent({ name: 'Holder' });
    await front.host.sendPrompt({ agentId: agent.id, prompt: 'hi', clientNonce: 'k0' });
    await until(() => script.requests.length >= 2, 'the first turn on B (its session kept)', 60_000);
    await front.host.sendPrompt({ agentId: holder.id, prompt: 'hold', clientNonce: 'h0' });
    await until(() => holding, 'B to be busy with the holder', 60_000);

    // With B busy, a worker process runs the agent's background command.
    const processes = new WorkerProcesses();
    kit.defer(() => Promise.resolve(processes.stopAll()));
    const a = await processes.start({
      databaseUrl,
      objectStoreUrl,
      credentials,
      schema,
      keyHex: masterKey.toString('hex'),
      dataDir: await kit.tempDir('worker-a'),
      name: 'worker-a',
    });
    await front.host.sendPrompt({ agentId: agent.id, prompt: 'bg sleep 300', clientNonce: 'k1' });
    const tasks = () => front.host.listTasks(agent.id);
    await until(async () => (await tasks())[0]?.state === 'running', 'the task on A', 60_000);
    const [task] = await tasks();
    letGo();
    a.child.kill('SIGKILL');
    await until(
      async () => (await tasks())[0]!.state === 'interrupted',
      'the lost task to be interrupted',
      WORKER_TTL_MS + 10_000,
    );

    const before = script.requests.length;
    await front.host.sendPrompt({ agentId: agent.id, prompt: 'what happened?', clientNonce: 'k2' });
    await until(
      () => script.requests.slice(before).some((request) => request.system.startsWith('You are Kept')),
      'the next turn on B',
      60_000,
    );
    const next = script.requests.slice(before).find((request) => request.system.startsWith('You are Kept'))!;
    expect(JSON.stringify(next.messages)).toContain(
      `background command ${task!.id} (sleep 300): it ran on cluster worker worker-a, which stopped`,
    );
  }, 180_000);

  it('a gateway that runs no turn leaves the note of a lost task to the turn worker: it marks nothing reported and writes nothing', async () => {
    const cluster = await kit.cluster();
    const first = await cluster.acceptingGateway({ name: 'gateway-1' });
    const agent = await first.worker.host.createAgent({ name: 'Lost' });
    // A task of a worker that is gone (no heartbeat): any reader marks it interrupted.
    new PgTaskBook(cluster.db, agent.id, 'gone-worker', WORKER_TTL_MS).started({
      id: 'task-1',
      kind: 'command',
      turn: 0,
      toolCallId: 'call-1',
      label: 'sleep 300',
      outputPath: null,
      agentId: null,
      startedAt: Date.now(),
    });
    // Another gateway opens the agent for the first time.
    const second = await cluster.acceptingGateway({ name: 'gateway-2' });
    const entries = await second.worker.host.openAgentJson(agent.id);
    expect((await second.worker.host.listTasks(agent.id))[0]).toMatchObject({ state: 'interrupted' });
    const book = new PgTaskBook(cluster.db, agent.id, 'reader', WORKER_TTL_MS);
    expect(book.get('task-1')).toMatchObject({ state: 'interrupted', reported: false });
    expect(book.unreported().map((task) => task.id)).toEqual(['task-1']);
    expect(entries).not.toContain('gone-worker');
  }, 60_000);

  it('a task marked lost while its worker paused, then ended: its end wins until the model was told it was lost, never both', async () => {
    const { db } = await kit.freshSchema();
    const agentId = 'agent-paused';
    // worker-a has no fresh heartbeat (paused past the TTL): a reader marks its running tasks lost.
    const onA = new PgTaskBook(db, agentId, 'worker-a', WORKER_TTL_MS);
    const reader = new PgTaskBook(db, agentId, 'worker-b', WORKER_TTL_MS);
    for (const id of ['untold', 'told', 'raced']) {
      onA.started({
        id,
        kind: 'command',
        turn: 0,
        toolCallId: `call-${id}`,
        label: 'make build',
        outputPath: null,
        agentId: null,
        startedAt: Date.now(),
        notice: null,
      });
    }
    expect(reader.recent(10).map((task) => task.state)).toEqual([
      'interrupted',
      'interrupted',
      'interrupted',
    ]);
    // A session reads "raced" as lost; it ends before the session marks it told: it is not marked.
    expect(reader.unreported().map((task) => task.id)).toContain('raced');
    onA.ended('raced', Date.now(), { exitCode: 0, reason: 'exited' });
    expect(reader.markReported(['raced'])).toEqual([]);
    expect(reader.get('raced')).toMatchObject({ state: 'ended', reported: false });
    // The model is told that "told" was lost (a session's open note); then worker-a resumes and both end.
    expect(reader.markReported(['told'])).toEqual(['told']);
    const exit = { exitCode: 0, reason: 'exited' };
    onA.ended('untold', Date.now(), exit);
    onA.ended('told', Date.now(), exit);
    expect(reader.get('untold')).toMatchObject({ state: 'ended', reported: false, outcome: exit });
    expect(reader.get('told')).toMatchObject({ state: 'interrupted', reported: true, outcome: exit });
    // The model hears the first one's end (a wake) and nothing more of the second.
    expect(reader.untold().map((task) => task.id)).toEqual(['raced', 'untold']);
    expect(reader.unreported()).toEqual([]);
  }, 30_000);

  it('marks the tasks a previous process of the same worker name left running as interrupted when it starts', async () => {
    const schema = kit.schemaName();
    const masterKey = randomBytes(32);
    const first = await kit.startWorker({
      dataDirName: 'named',
      schema,
      masterKey,
      env: {},
      provider: scriptedProvider([]),
      workerName: 'named-worker',
      takeTurns: false,
    });
    const book = new PgTaskBook(first.worker.db, 'agent-restart', 'named-worker', WORKER_TTL_MS);
    book.started({
      id: 'task-1',
      kind: 'command',
      turn: 0,
      toolCallId: 'call-1',
      label: 'sleep 300',
      outputPath: null,
      agentId: null,
      startedAt: Date.now(),
    });
    // The process dies (its row stays running); another starts at once under the same name.
    const second = await kit.startWorker({
      dataDirName: 'named-again',
      schema,
      masterKey,
      env: {},
      provider: scriptedProvider([]),
      workerName: 'named-worker',
      takeTurns: false,
    });
    const again = new PgTaskBook(second.worker.db, 'agent-restart', 'named-worker', WORKER_TTL_MS);
    expect(again.get('task-1')).toMatchObject({ state: 'interrupted', reported: false });
    await first.close();
  }, 60_000);
});
