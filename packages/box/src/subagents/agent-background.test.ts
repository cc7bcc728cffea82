/**
 * Background work in the real box (LocalAgentHost, real files, bubblewrap, the scripted model):
 * background commands awaited, a regex wait, stillRunning at the time limit, Stop killing a
 * command's whole tree, foreground and background subagents (their transcripts, their tools, the
 * parent's result, txcript's list), a recursion refused and Stop during a child. The crash cases
 * (SIGKILL, restart) are in agent-background.crash.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { readLedgerFile, type JsonObject } from '@sendbox/txcript';
import { createAgentHost } from '../host/agent-host.ts';
import {
  scriptedProvider,
  withScript,
  type ScriptedProvider,
  type ScriptedStep,
} from '../providers/scripted.ts';
import type { ModelStepRequest } from '../providers/types.ts';
import { agentPaths } from '../stores/files/layout.ts';
import { processesRunning, until } from '../testing/processes.ts';
import { hostFixture, type HostFixture } from '../testing/host-fixture.ts';

const TXCRIPT = fileURLToPath(new URL('../../../txcript/bin/txcript.mjs', import.meta.url));

const send = (content: string) => ({ name: 'send_message', input: { type: 'text', content } });
const finish: ScriptedStep[] = [{ toolCalls: [send('done')] }, {}];

/** A step computed from the tool results the model just read (parsed JSON where they are JSON). */
type Step = ScriptedStep | ((results: Array<Record<string, unknown>>) => ScriptedStep);

/** The parent's model: its steps in order; a child's script rides in its prompt (withScript). */
function parentModel(steps: Step[]): ScriptedProvider {
  let at = 0;
  return scriptedProvider((request) => {
    const step = steps[at++];
    if (step === undefined) throw new Error(`the parent's script has no step ${at}`);
    return typeof step === 'function' ? step(lastResults(request)) : step;
  });
}

function lastResults(request: ModelStepRequest): Array<Record<string, unknown>> {
  const last = request.messages.at(-1);
  if (!last || last.role !== 'tool') return [];
  return last.content.flatMap((part) => {
    if (part.type !== 'tool-result') return [];
    if (part.output.type !== 'text' && part.output.type !== 'error-text') return [];
    try {
      return [JSON.parse(part.output.value) as Record<string, unknown>];
    } catch {
      return [{ text: part.output.value }];
    }
  });
}

const successOf = (result: Record<string, unknown> | undefined) =>
  (result?.success ?? {}) as Record<string, unknown>;

/** The tool_result blocks of a JSONL, by tool name. */
function resultsOf(records: Array<Record<string, unknown>>, name: string): JsonObject[] {
  return records.flatMap((record) => {
    const content = (record.message as { content?: unknown } | undefined)?.content;
    if (!Array.isArray(content)) return [];
    return (content as JsonObject[]).flatMap((block) =>
      block.type === 'tool_result' && block.name === name ? [block.result as JsonObject] : [],
    );
  });
}

let box: HostFixture | undefined;
afterEach(async () => {
  await box?.dispose();
  box = undefined;
});

async function boxWith(steps: Step[]): Promise<{ box: HostFixture; model: ScriptedProvider }> {
  const model = parentModel(steps);
  box = await hostFixture([], { provider: model });
  return { box, model };
}

describe('background commands in the box', () => {
  it('a background command returns its task id at once and is awaited to completion', async () => {
    let started: Record<string, unknown> = {};
    let awaited: Record<string, unknown> = {};
    const { box } = await boxWith([
      {
        toolCalls: [
          { name: 'shell', input: { command: 'sleep 0.4; echo built; exit 3', isBackground: true } },
        ],
      },
      (results) => {
        started = successOf(results[0]);
        return { toolCalls: [{ name: 'await', input: { taskId: started.taskId, blockUntilMs: 20_000 } }] };
      },
      (results) => {
        awaited = successOf(results[0]);
        return finish[0]!;
      },
      {},
    ]);
    await box.prompt('build it');
    expect(started.taskId).toMatch(/^task-[0-9a-f]{12}$/);
    expect(awaited.complete).toMatchObject({ taskId: started.taskId, exitCode: 3, output: 'built\n' });
    // The output file is in the sandbox, and the JSONL has the call's shell envelope with isBackground.
    const complete = awaited.complete as { outputFilePath: string };
    expect(
      complete.outputFilePath.startsWith(box.sandbox) || complete.outputFilePath.includes('/sandboxes/'),
    ).toBe(true);
    const shell = resultsOf(await box.records(), 'shell');
    expect(shell[0]).toMatchObject({ success: { taskId: started.taskId }, isBackground: true });
    const tasks = await box.host.listTasks(box.agentId);
    expect(tasks).toEqual([
      expect.objectContaining({ id: started.taskId, kind: 'command', state: 'ended', exitCode: 3 }),
    ]);
  });

  it('a regex wait returns stillRunning as soon as the output matches', async () => {
    let awaited: Record<string, unknown> = {};
    let waitedMs = 0;
    let t0 = 0;
    const { box } = await boxWith([
      {
        toolCalls: [
          {
            name: 'shell',
            input: {
              command: 'echo booting; sleep 0.3; echo READY on 8080; sleep 305.11',
              isBackground: true,
            },
          },
        ],
      },
      (results) => {
        t0 = Date.now();
        return {
          toolCalls: [
            {
              name: 'await',
              input: { taskId: successOf(results[0]).taskId, regex: 'READY on \\d+', blockUntilMs: 60_000 },
            },
          ],
        };
      },
      (results) => {
        waitedMs = Date.now() - t0;
        awaited = successOf(results[0]);
        return finish[0]!;
      },
      {},
    ]);
    await box.prompt('start the server');
    expect(awaited.stillRunning).toMatchObject({ regexRequested: true, regexMatched: true });
    expect(String((awaited.stillRunning as { output: string }).output)).toContain('READY on 8080');
    expect(waitedMs).toBeLessThan(30_000);
  });

  it('an await that reaches its time limit returns stillRunning with the output so far', async () => {
    let awaited: Record<string, unknown> = {};
    const { box } = await boxWith([
      {
        toolCalls: [{ name: 'shell', input: { command: 'echo partial; sleep 306.23', isBackground: true } }],
      },
      (results) => ({
        toolCalls: [{ name: 'await', input: { taskId: successOf(results[0]).taskId, blockUntilMs: 400 } }],
      }),
      (results) => {
        awaited = successOf(results[0]);
        return finish[0]!;
      },
      {},
    ]);
    await box.prompt('run it');
    expect(awaited.stillRunning).toMatchObject({ output: 'partial\n' });
    expect(awaited.complete).toBeUndefined();
    expect(await processesRunning('sleep', '306.23')).toHaveLength(1);
    // Shutdown kills it.
    await box.host.close();
    await until(async () => (await processesRunning('sleep', '306.23')).length === 0, 'the command to die');
  });

  it('Stop kills a background command’s whole tree, and the task says it was stopped', async () => {
    const { box } = await boxWith([
      {
        toolCalls: [
          {
            name: 'shell',
            input: { command: '(sleep 307.31 & sleep 307.32 & wait) & wait', isBackground: true },
          },
          { name: 'shell', input: { command: 'sleep 307.33' } },
        ],
      },
      {},
    ]);
    await box.host.sendPrompt({ agentId: box.agentId, prompt: 'go', clientNonce: 'stop-tree' });
    await until(
      async () =>
        (await processesRunning('sleep', '307.31')).length === 1 &&
        (await processesRunning('sleep', '307.32')).length === 1 &&
        (await processesRunning('sleep', '307.33')).length === 1,
      'the commands to start',
    );
    expect(await box.host.cancelTurn(box.agentId)).toEqual({ cancelled: true });
    await box.host.idle(box.agentId);
    await until(
      async () =>
        (await processesRunning('sleep', '307.31')).length +
          (await processesRunning('sleep', '307.32')).length ===
        0,
      'the background tree to die',
    );
    await until(async () => (await box.host.listTasks(box.agentId))[0]?.state === 'ended', 'the task to end');
    expect((await box.host.listTasks(box.agentId))[0]).toMatchObject({ kind: 'command', reason: 'stopped' });
  });

  it('deleting the agent kills its background commands', async () => {
    const { box } = await boxWith([
      { toolCalls: [{ name: 'shell', input: { command: 'sleep 310.61', isBackground: true } }] },
      ...finish,
    ]);
    await box.prompt('start it');
    await until(async () => (await processesRunning('sleep', '310.61')).length === 1, 'the command');
    await box.host.deleteAgent(box.agentId);
    await until(async () => (await processesRunning('sleep', '310.61')).length === 0, 'the command to die');
    // Its end, recorded after the folders went, makes none of them again.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const paths = agentPaths(box.dataDir, box.agentId);
    expect(await readdir(paths.agentDir).catch(() => 'gone')).toBe('gone');
    expect(await readdir(paths.transcriptDir).catch(() => 'gone')).toBe('gone');
  });

  it('the UI’s stop ends one task and the events carry its live tail', async () => {
    let taskId = '';
    const { box } = await boxWith([
      {
        toolCalls: [
          {
            name: 'shell',
            input: {
              command: 'for i in $(seq 1 400); do echo line $i; sleep 0.05; done',
              isBackground: true,
            },
          },
        ],
      },
      (results) => {
        taskId = String(successOf(results[0]).taskId);
        return finish[0]!;
      },
      {},
    ]);
    await box.prompt('tail it');
    await until(
      () =>
        box.events.some(
          (event) =>
            event.type === 'task' && event.task.id === taskId && /line \d+/.test(event.task.tail ?? ''),
        ),
      'a tail event',
    );
    expect(await box.host.stopTask(box.agentId, taskId)).toEqual({ stopped: true });
    await until(async () => (await box.host.listTasks(box.agentId))[0]?.state === 'ended', 'the task to end');
    expect((await box.host.listTasks(box.agentId))[0]).toMatchObject({ reason: 'stopped' });
  });
});

/** The parent's step that starts a foreground child counting the sandbox's files (one shell call, then its answer). */
const countFilesChild = {
  toolCalls: [
    {
      name: 'task',
      input: {
        description: 'count files',
        prompt: withScript('Count the files in the sandbox.', [
          { toolCalls: [{ name: 'shell', input: { command: 'ls | wc -l' } }] },
          { text: 'There are 0 files.' },
        ]),
      },
    },
  ],
};

describe('subagents in the box', () => {
  it('a foreground child: its transcript, its tools without send_message, the parent’s result, txcript list', async () => {
    let result: Record<string, unknown> = {};
    const { box, model } = await boxWith([
      countFilesChild,
      (results) => {
        result = results[0] ?? {};
        return finish[0]!;
      },
      {},
    ]);
    await box.prompt('how many files?');
    const success = successOf(result);
    expect(success).toMatchObject({
      isBackground: false,
      result: 'There are 0 files.',
      toolCalls: 'Tool calls made: 1 (shell: success).',
    });
    expect(typeof success.durationMs).toBe('number');
    const childId = String(success.agentId);
    expect(childId).toMatch(/^sand-subagent-[0-9a-f-]{36}$/);
    // Its transcript in Grok Bot's layout, through the grok_bot codec.
    const file = agentPaths(box.dataDir, childId).jsonl;
    expect(file.endsWith(`agent-transcripts/${childId}/${childId}.jsonl`)).toBe(true);
    const lines = (await readFile(file, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as JsonObject);
    expect(lines.map((line) => line.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    // The child's requests: the parent's tools minus send_message and task, on the same model.
    const childRequests = model.requests.filter((r) =>
      JSON.stringify(r.messages[0]).includes('scripted-steps'),
    );
    expect(childRequests).toHaveLength(2);
    expect(childRequests[0]!.tools.map((tool) => tool.name)).not.toContain('send_message');
    expect(childRequests[0]!.tools.map((tool) => tool.name)).not.toContain('task');
    expect(childRequests[0]!.tools.map((tool) => tool.name)).not.toContain('update_state');
    expect(childRequests[0]!.tools.map((tool) => tool.name)).toContain('shell');
    const parentTools = model.requests[0]!.tools.map((tool) => tool.name);
    expect(parentTools).toEqual(expect.arrayContaining(['send_message', 'task', 'await', 'update_state']));
    // The parent's ledger row for the call names the child.
    const row = (await box.entries()).find((entry) => entry.kind === 'tool-call' && entry.name === 'task');
    expect(JSON.stringify(row)).toContain(childId);
    // txcript lists the child under its parent.
    const listed = txcript(box.dataDir, 'list', '--from', 'grok_bot', '--json');
    const sessions = JSON.parse(listed) as Array<{ id: string; parent: string | null }>;
    expect(sessions.map((s) => [s.id, s.parent])).toEqual([
      [box.agentId, null],
      [childId, box.agentId],
    ]);
    expect(txcript(box.dataDir, 'view', childId, '--from', 'grok_bot')).toContain('There are 0 files.');
    // Deleting the agent deletes its children's transcripts too: no orphan session stays listed.
    await box.host.deleteAgent(box.agentId);
    await expect(readFile(file, 'utf8')).rejects.toThrow(/ENOENT/);
    expect(JSON.parse(txcript(box.dataDir, 'list', '--from', 'grok_bot', '--json'))).toEqual([]);
  });

  it('duplicateAgent takes the children along under new ids: the copy opens their steps, and each agent deletes only its own', async () => {
    let result: Record<string, unknown> = {};
    const { box } = await boxWith([
      countFilesChild,
      (results) => {
        result = results[0] ?? {};
        return finish[0]!;
      },
      {},
    ]);
    await box.prompt('how many files?');
    const childId = String(successOf(result).agentId);
    const childText = await readFile(agentPaths(box.dataDir, childId).jsonl, 'utf8');

    const copy = await box.host.duplicateAgent(box.agentId);
    const tasks = await box.host.listTasks(copy.id);
    expect(tasks).toHaveLength(1);
    const copiedId = tasks[0]!.agentId!;
    expect(copiedId).toMatch(/^sand-subagent-[0-9a-f-]{36}$/);
    expect(copiedId).not.toBe(childId);
    expect(tasks[0]).toMatchObject({ kind: 'subagent', state: 'ended', label: 'count files' });
    const steps = await box.host.openSubagent(copy.id, copiedId);
    expect(steps.filter((step) => step.kind === 'tool-call').map((call) => [call.name, call.status])).toEqual(
      [['shell', 'success']],
    );
    expect(await readFile(agentPaths(box.dataDir, copiedId).jsonl, 'utf8')).toBe(childText);
    // The copy's JSONL and its ledger name its own child, not the original's.
    const copyJsonl = await readFile(agentPaths(box.dataDir, copy.id).jsonl, 'utf8');
    expect(copyJsonl).toContain(copiedId);
    expect(copyJsonl).not.toContain(childId);
    const row = (await box.host.entriesAfter(copy.id, 0)).find(
      (entry) => entry.kind === 'tool-call' && entry.name === 'task',
    );
    expect(JSON.stringify(row)).toContain(copiedId);
    await expect(box.host.openSubagent(copy.id, childId)).rejects.toMatchObject({ status: 404 });
    // txcript lists each child under its own parent.
    const sessions = JSON.parse(txcript(box.dataDir, 'list', '--from', 'grok_bot', '--json')) as Array<{
      id: string;
      parent: string | null;
    }>;
    expect(sessions.find((session) => session.id === copiedId)?.parent).toBe(copy.id);
    expect(sessions.find((session) => session.id === childId)?.parent).toBe(box.agentId);

    // Deleting the copy deletes its child's transcript, not the original's.
    await box.host.deleteAgent(copy.id);
    await expect(readFile(agentPaths(box.dataDir, copiedId).jsonl, 'utf8')).rejects.toThrow(/ENOENT/);
    expect(await readFile(agentPaths(box.dataDir, childId).jsonl, 'utf8')).toBe(childText);
    expect((await box.host.openSubagent(box.agentId, childId)).length).toBe(steps.length);
  });

  it('a background child returns at once and is awaited with its result', async () => {
    let started: Record<string, unknown> = {};
    let awaited: Record<string, unknown> = {};
    const { box } = await boxWith([
      {
        toolCalls: [
          {
            name: 'task',
            input: {
              description: 'slow job',
              isBackground: true,
              prompt: withScript('Do the slow job.', [
                { toolCalls: [{ name: 'shell', input: { command: 'sleep 0.3; echo ok > slow.txt' } }] },
                { text: 'Slow job done.' },
              ]),
            },
          },
        ],
      },
      (results) => {
        started = successOf(results[0]);
        return { toolCalls: [{ name: 'await', input: { taskId: started.agentId, blockUntilMs: 30_000 } }] };
      },
      (results) => {
        awaited = successOf(results[0]);
        return finish[0]!;
      },
      {},
    ]);
    await box.prompt('start the slow job');
    expect(started).toMatchObject({
      isBackground: true,
      agentId: expect.stringMatching(/^sand-subagent-/) as unknown,
    });
    expect(awaited.complete).toMatchObject({
      taskId: started.agentId,
      result: 'Slow job done.',
      toolCalls: 'Tool calls made: 1 (shell: success).',
    });
    expect(await readFile(`${box.sandbox}/slow.txt`, 'utf8')).toBe('ok\n');
  });

  it('a child sees the image its own read returns, as an image part, under the host’s vision switch', async () => {
    const { box, model } = await boxWith([
      {
        toolCalls: [
          {
            name: 'task',
            input: {
              description: 'look at the chart',
              prompt: withScript('Read chart.png and describe it.', [
                { toolCalls: [{ name: 'read', input: { path: 'chart.png' } }] },
                { text: 'A green square.' },
              ]),
            },
          },
        ],
      },
      finish[0]!,
      {},
    ]);
    const png = await sharp({
      create: { width: 40, height: 30, channels: 3, background: { r: 10, g: 200, b: 30 } },
    })
      .png()
      .toBuffer();
    await writeFile(`${box.sandbox}/chart.png`, png);
    await box.prompt('describe the chart');
    // The child's second call: the read's result says the image follows, a user message carries it.
    const childCall = model.requests.find(
      (request) =>
        JSON.stringify(request.messages[0]).includes('Read chart.png') &&
        request.messages.some((message) => message.role === 'tool'),
    );
    expect(childCall).toBeDefined();
    const last = childCall!.messages.at(-1)!;
    expect(last.role).toBe('user');
    expect(last.content).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'image', mediaType: 'image/png' })]),
    );
  });

  it('a recursion attempt is refused: the child has no task tool', async () => {
    let result: Record<string, unknown> = {};
    const { box } = await boxWith([
      {
        toolCalls: [
          {
            name: 'task',
            input: {
              description: 'recurse',
              prompt: withScript('Delegate it again.', [
                { toolCalls: [{ name: 'task', input: { description: 'deeper', prompt: 'again' } }] },
                { text: 'I could not delegate.' },
              ]),
            },
          },
        ],
      },
      (results) => {
        result = results[0] ?? {};
        return finish[0]!;
      },
      {},
    ]);
    await box.prompt('delegate');
    expect(successOf(result)).toMatchObject({ toolCalls: 'Tool calls made: 1 (task: error).' });
    const children = (await readdir(`${box.dataDir}/agent-transcripts`)).filter((name) =>
      name.startsWith('sand-subagent-'),
    );
    expect(children).toHaveLength(1);
  });

  it('Stop during a child cancels it: both turns end, its command dies, the parent’s call names it', async () => {
    const { box } = await boxWith([
      {
        toolCalls: [
          {
            name: 'task',
            input: {
              description: 'long child',
              prompt: withScript('Wait a long time.', [
                { toolCalls: [{ name: 'shell', input: { command: 'sleep 308.41' } }] },
                { text: 'never' },
              ]),
            },
          },
        ],
      },
      {},
    ]);
    await box.host.sendPrompt({ agentId: box.agentId, prompt: 'go', clientNonce: 'stop-child' });
    await until(async () => (await processesRunning('sleep', '308.41')).length === 1, 'the child’s command');
    expect(await box.host.cancelTurn(box.agentId)).toEqual({ cancelled: true });
    await box.host.idle(box.agentId);
    await until(async () => (await processesRunning('sleep', '308.41')).length === 0, 'the command to die');
    const [child] = (await box.host.listTasks(box.agentId)).filter((task) => task.kind === 'subagent');
    expect(child).toMatchObject({ state: 'ended' });
    const childRecords = (await readFile(agentPaths(box.dataDir, child!.id).jsonl, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    // The child's call got a result and its turn ended as stopped.
    expect(resultsOf(childRecords, 'shell')).toHaveLength(1);
    const steps = await box.host.openSubagent(box.agentId, child!.id);
    expect(steps.map((step) => step.kind)).toContain('tool-call');
    // The parent's task call has its result, and that result names the child.
    const [taskResult] = resultsOf(await box.records(), 'task');
    expect(JSON.stringify(taskResult)).toContain(child!.id);
    // The parent's turn ended with its Stop notice.
    const entries = await box.entries();
    expect(entries.some((entry) => entry.kind === 'notice' && entry.reason === 'stopped')).toBe(true);
    expect(entries.at(-1)?.kind).toBe('turn-ended');
  });
});

describe('limits from the profile', () => {
  it('a turn’s step budget counts its children’s steps: the child ends saying so, then the parent’s turn', async () => {
    const loop = Array.from({ length: 10 }, () => ({
      toolCalls: [{ name: 'shell', input: { command: 'true' } }],
    }));
    const { box, model } = await boxWith([
      { toolCalls: [{ name: 'task', input: { description: 'loop', prompt: withScript('Loop.', loop) } }] },
      { toolCalls: [{ name: 'shell', input: { command: 'true' } }] },
    ]);
    // The operator sets the limits in profile.json; the box reads them when it starts.
    const file = agentPaths(box.dataDir, box.agentId).profile;
    const profile = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    await writeFile(file, JSON.stringify({ ...profile, background: { maxStepsPerTurn: 4 } }));
    await box.host.close();
    const host = await createAgentHost({ dataDir: box.dataDir, provider: model, env: {} });
    try {
      await host.sendPrompt({ agentId: box.agentId, prompt: 'loop', clientNonce: 'budget' });
      await host.idle(box.agentId);
    } finally {
      await host.close();
    }
    // Parent step 1 (task) + child steps 2..4, then the budget is gone: the parent gets no step 5.
    const [result] = resultsOf(await box.records(), 'task');
    expect(successOf(result)).toMatchObject({ stopReason: 'turn-budget', steps: 3 });
    expect(String(successOf(result).result)).toMatch(/budget of model steps ran out/);
    const entries = readLedgerFile(agentPaths(box.dataDir, box.agentId).storeDb).rows.map(
      (row) => row.entry as Record<string, unknown>,
    );
    expect(entries.filter((entry) => entry.kind === 'notice').map((entry) => entry.reason)).toEqual([
      'turn-budget',
    ]);
    expect(model.requests).toHaveLength(4);
  });

  it('a background command’s wall-clock limit comes from the profile: killed at it, and the await says so', async () => {
    let awaited: Record<string, unknown> = {};
    const { box, model } = await boxWith([
      { toolCalls: [{ name: 'shell', input: { command: 'sleep 300.77', isBackground: true } }] },
      (results) => ({
        toolCalls: [{ name: 'await', input: { taskId: successOf(results[0]).taskId, blockUntilMs: 60_000 } }],
      }),
      (results) => {
        awaited = successOf(results[0]);
        return finish[0]!;
      },
      {},
    ]);
    const file = agentPaths(box.dataDir, box.agentId).profile;
    const profile = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    await writeFile(file, JSON.stringify({ ...profile, background: { maxRuntimeMs: 1500 } }));
    await box.host.close();
    const host = await createAgentHost({ dataDir: box.dataDir, provider: model, env: {} });
    const started = Date.now();
    try {
      await host.sendPrompt({ agentId: box.agentId, prompt: 'run it', clientNonce: 'runtime' });
      await host.idle(box.agentId);
    } finally {
      await host.close();
    }
    // Killed at 1.5 s, not at the default hour (nor at the await's 60 s).
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(awaited.complete).toMatchObject({ note: expect.stringContaining('limit of 1500 ms') as unknown });
    expect(await processesRunning('sleep', '300.77')).toEqual([]);
  });

  it('concurrent children are capped per agent: one over the cap is refused with the reason', async () => {
    const results: Array<Record<string, unknown>> = [];
    const slow = (n: number) => ({
      name: 'task',
      input: {
        description: `slow ${n}`,
        isBackground: true,
        prompt: withScript(`Job ${n}.`, [
          { toolCalls: [{ name: 'shell', input: { command: 'sleep 0.5' } }] },
          { text: `job ${n} done` },
        ]),
      },
    });
    const { box } = await boxWith([
      { toolCalls: [slow(1), slow(2), slow(3)] },
      (r) => {
        results.push(...r);
        return finish[0]!;
      },
      {},
    ]);
    await box.prompt('three jobs');
    expect(results.map((r) => Object.keys(r)[0])).toEqual(['success', 'success', 'text']);
    expect(String(results[2]!.text)).toMatch(/At most 2 subagents run at once/);
  });
});

function txcript(dataDir: string, ...args: string[]): string {
  const run = spawnSync(process.execPath, [TXCRIPT, ...args], {
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dataDir,
      TXCRIPT_GROK_BOT_ROOT: `${dataDir}/agent-transcripts`,
      TXCRIPT_GROK_BOT_AGENTS: `${dataDir}/agents`,
      TXCRIPT_NO_CACHE: '1',
      NO_COLOR: '1',
    },
  });
  if (run.status !== 0) throw new Error(`txcript ${args.join(' ')} exited ${run.status}: ${run.stderr}`);
  return run.stdout;
}
