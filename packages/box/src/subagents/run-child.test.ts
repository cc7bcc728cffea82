import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { grokBot } from '@sendbox/txcript';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AttachmentStore } from '../attachments/store.ts';
import { fileChildTranscripts } from '../stores/files/agent-stores.ts';
import { agentPaths } from '../stores/files/layout.ts';
import { stepBudget, type StepBudget } from '../agent/turn.ts';
import type { SequencedEntry } from '../stores/ledger.ts';
import { WritePoints } from '../stores/write-points.ts';
import { scriptedProvider, withScript, type ScriptedProvider } from '../providers/scripted.ts';
import { detectConfinement, type Confinement } from '../sandbox/confinement.ts';
import { noScrub } from '../secrets/scrub.ts';
import { SecretStore } from '../secrets/store.ts';
import { AgentTasks, DEFAULT_TASK_LIMITS } from '../tasks/agent-tasks.ts';
import { TaskBook } from '../tasks/task-book.ts';
import { awaitTool } from '../tools/await/index.ts';
import { shellTool } from '../tools/shell/index.ts';
import { taskInput, taskTool } from '../tools/task/index.ts';
import type { HostTool, ToolContext, ToolEnvelope } from '../tools/types.ts';
import { childSteps } from './child-steps.ts';
import { runChild, type ChildParent } from './run-child.ts';

let confinement: Confinement;
let dataDir: string;
let sandbox: string;
let tasks: AgentTasks;
let model: ScriptedProvider;
let childEntries: Array<{ agentId: string; entry: SequencedEntry }>;
let options: { maxSteps: number; maxDepth: number; budget?: StepBudget };

beforeAll(async () => {
  confinement = await detectConfinement();
});

beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-child-'));
  sandbox = path.join(dataDir, 'sandboxes', 'parent');
  await mkdir(sandbox, { recursive: true });
  await confinement.prepare(sandbox);
  tasks = new AgentTasks({
    book: new TaskBook(path.join(dataDir, 'tasks.db')),
    limits: () => DEFAULT_TASK_LIMITS,
    scrubber: () => noScrub,
    now: Date.now,
    emit: () => undefined,
  });
  model = scriptedProvider([]);
  childEntries = [];
  options = { maxSteps: 10, maxDepth: 1 };
});

afterEach(async () => {
  await tasks.close();
  await rm(dataDir, { recursive: true, force: true });
});

const tools = (): HostTool[] => [shellTool({ confinement }), awaitTool, taskTool] as HostTool[];

function parent(): ChildParent {
  return {
    agent: {
      id: 'parent',
      paths: { ...agentPaths(dataDir, 'parent'), sandbox },
      profile: { name: 'Parent', description: '', harness: 'box', title: '' },
      toolEnv: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      attachments: new AttachmentStore(path.join(dataDir, 'attachments')),
      secrets: new SecretStore(path.join(dataDir, 'secrets.enc'), Buffer.alloc(32, 7), 'parent'),
      toolGates: [],
      scrubber: () => noScrub,
      allowDomains: () => Promise.resolve([]),
      now: Date.now,
    },
    dataDir,
    transcript: fileChildTranscripts(dataDir),
    provider: model,
    tools: tools(),
    maxDepth: options.maxDepth,
    depth: 0,
    writePoints: new WritePoints(),
    maxSteps: options.maxSteps,
    ...(options.budget ? { budget: options.budget } : {}),
    onEntry: (agentId, entry) => childEntries.push({ agentId, entry }),
  };
}

let calls = 0;
function ctx(signal?: AbortSignal): ToolContext {
  return {
    sandboxDir: sandbox,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    scrub: noScrub,
    todos: [],
    now: Date.now,
    tasks,
    subagents: { start: (job) => runChild(parent(), job) },
    call: { turn: 0, toolCallId: `call_${++calls}` },
    ...(signal ? { signal } : {}),
  };
}

const shellCall = (command: string) => ({ toolCalls: [{ name: 'shell', input: { command } }] });

async function delegate(prompt: string, extra: { isBackground?: boolean } = {}, signal?: AbortSignal) {
  return (await taskTool.run({ description: 'a job', prompt, ...extra }, ctx(signal))).envelope;
}

function payloadOf(envelope: ToolEnvelope): Record<string, unknown> {
  if ('success' in envelope) return envelope.success;
  if ('failure' in envelope) return envelope.failure;
  throw new Error(`expected success or failure, got ${JSON.stringify(envelope)}`);
}

async function childRecords(agentId: string) {
  const file = agentPaths(dataDir, agentId).jsonl;
  const parsed = grokBot.text.parse(await readFile(file, 'utf8'), file);
  return parsed.records.flatMap((line) => (line.kind === 'record' ? [line.json] : []));
}

/** The requests the model got from the child (its first user message carries its script). */
function childRequests() {
  return model.requests.filter((request) => JSON.stringify(request.messages[0]).includes('scripted-steps'));
}

describe('a foreground subagent', () => {
  it('works in the parent sandbox, writes its own transcript, and returns its text with the calls it made', async () => {
    const out = await delegate(
      withScript('Write hello to out.txt', [shellCall('echo hello > out.txt'), { text: 'Wrote out.txt.' }]),
    );
    expect(out).toHaveProperty('success');
    const result = payloadOf(out);
    expect(result).toMatchObject({
      isBackground: false,
      result: 'Wrote out.txt.',
      toolCalls: 'Tool calls made: 1 (shell: success).',
      steps: 2,
    });
    expect(result.agentId).toMatch(
      /^sand-subagent-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/,
    );
    expect(typeof result.durationMs).toBe('number');
    expect(await readFile(path.join(sandbox, 'out.txt'), 'utf8')).toBe('hello\n');
    // Its transcript, Grok Bot's layout: the prompt as [t0u], the call and result, its answer.
    const records = await childRecords(result.agentId as string);
    expect(records.map((r) => r.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(JSON.stringify(records[0])).toContain('[t0u]\\nWrite hello to out.txt');
    expect(records[3]).toEqual({
      role: 'assistant',
      message: { content: [{ type: 'text', text: 'Wrote out.txt.' }] },
    });
    // Its tools: the parent's minus send_message and task (depth 1), on the same model.
    const [first] = childRequests();
    expect(first!.tools.map((tool) => tool.name)).toEqual(['shell', 'await']);
    expect(first!.system).toMatch(/subagent of Parent/);
    // Its steps went out live, by its id, and read back the same from its transcript.
    expect(childEntries.map((e) => e.entry.kind)).toEqual(['tool-call', 'thinking', 'turn-ended']);
    expect(new Set(childEntries.map((e) => e.agentId))).toEqual(new Set([result.agentId]));
    const live = childEntries.map((e) => e.entry as unknown as Record<string, unknown>);
    const readBack = childSteps(records, noScrub) as unknown as Array<Record<string, unknown>>;
    expect(readBack.map((e) => [e.kind, e.name, e.status, e.output, e.text])).toEqual(
      live.slice(0, 2).map((e) => [e.kind, e.name, e.status, e.output, e.text]),
    );
  });

  it('says so when the child made no tool call', async () => {
    const out = await delegate(withScript('Fix the bug', [{ text: 'Done, the bug is fixed.' }]));
    expect(payloadOf(out)).toMatchObject({
      result: 'Done, the bug is fixed.',
      toolCalls: 'Tool calls made: none.',
    });
  });

  it('refuses a recursion: the child has no task tool and a call of it is an error', async () => {
    const out = await delegate(
      withScript('Delegate further', [
        { toolCalls: [{ name: 'task', input: { description: 'x', prompt: 'y' } }] },
        { text: 'Could not delegate.' },
      ]),
    );
    expect(payloadOf(out)).toMatchObject({ toolCalls: 'Tool calls made: 1 (task: error).' });
    const agentId = payloadOf(out).agentId as string;
    const records = await childRecords(agentId);
    expect(JSON.stringify(records[2])).toContain('There is no tool named task');
  });

  it("takes subagentType as Grok Bot's {custom: {name}} or a name, and refuses one the box lacks", async () => {
    const general = taskInput.parse({
      description: 'd',
      prompt: 'p',
      subagentType: { custom: { name: 'general' } },
    });
    const ok = await taskTool.run({ ...general, prompt: withScript('Hi', [{ text: 'hi' }]) }, ctx());
    expect(payloadOf(ok.envelope)).toMatchObject({ result: 'hi' });
    const other = taskInput.parse({
      description: 'd',
      prompt: 'p',
      subagentType: { custom: { name: 'explorer' } },
    });
    expect((await taskTool.run(other, ctx())).envelope).toEqual({
      error: { error: 'There is no subagentType "explorer" on this box. Types: general.' },
    });
  });

  it('the profile can allow depth 2: the child gets task', async () => {
    options.maxDepth = 2;
    await delegate(withScript('Look around', [{ text: 'ok' }]));
    expect(childRequests()[0]!.tools.map((tool) => tool.name)).toEqual(['shell', 'await', 'task']);
  });

  it('ends at its own step limit with a result that says so', async () => {
    options.maxSteps = 2;
    const out = await delegate(withScript('Loop', [shellCall('true'), shellCall('true'), shellCall('true')]));
    expect(out).toHaveProperty('success');
    expect(payloadOf(out)).toMatchObject({
      stopReason: 'step-limit',
      steps: 2,
      toolCalls: 'Tool calls made: 2 (shell: success, shell: success).',
    });
    expect(String(payloadOf(out).result)).toMatch(/hit its step limit/);
  });

  it("draws from the parent turn's step budget", async () => {
    options.budget = stepBudget(1);
    const out = await delegate(withScript('Two steps', [shellCall('true'), { text: 'done' }]));
    expect(payloadOf(out)).toMatchObject({ stopReason: 'turn-budget', steps: 1 });
  });

  it('a failed model call is a failure naming it', async () => {
    const out = await delegate(withScript('x', [{ error: 'provider is down' }]));
    expect(out).toHaveProperty('failure');
    expect(String(payloadOf(out).result)).toMatch(/provider is down/);
  });

  it('Stop (the turn signal) ends the child while its command runs', async () => {
    const abort = new AbortController();
    const pending = delegate(
      withScript('Wait', [shellCall('sleep 30'), { text: 'never' }]),
      {},
      abort.signal,
    );
    for (let i = 0; i < 100 && !childRequests().length; i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    abort.abort();
    const out = await pending;
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(out).toHaveProperty('failure');
    expect(payloadOf(out)).toMatchObject({ stopReason: 'stopped' });
  });
});

describe('a background subagent', () => {
  it('returns at once and is awaited to its result', async () => {
    const out = await delegate(withScript('Slow job', [shellCall('sleep 0.5'), { text: 'slow job done' }]), {
      isBackground: true,
    });
    const started = payloadOf(out);
    expect(started).toMatchObject({ isBackground: true, backgroundReason: 'requested' });
    const agentId = started.agentId as string;
    expect(started.taskId).toBe(agentId);
    const done = (await awaitTool.run({ taskId: agentId, blockUntilMs: 20_000 }, ctx())).envelope;
    expect(done).toMatchObject({
      success: {
        complete: {
          taskId: agentId,
          agentId,
          result: 'slow job done',
          toolCalls: 'Tool calls made: 1 (shell: success).',
        },
      },
    });
  });

  it('stopAll (Stop, deleteAgent, shutdown) cancels a running child', async () => {
    const out = await delegate(withScript('Wait', [shellCall('sleep 30'), { text: 'never' }]), {
      isBackground: true,
    });
    const agentId = payloadOf(out).agentId as string;
    for (let i = 0; i < 100 && !childRequests().length; i++) await new Promise((r) => setTimeout(r, 50));
    await tasks.stopAll();
    const done = (await awaitTool.run({ taskId: agentId }, ctx())).envelope;
    expect(done).toMatchObject({ success: { complete: { agentId, stopReason: 'stopped' } } });
  });

  it('at most the profile cap of children run at once', async () => {
    for (let i = 0; i < DEFAULT_TASK_LIMITS.maxChildren; i++) {
      await delegate(withScript('Wait', [shellCall('sleep 30'), { text: 'never' }]), { isBackground: true });
    }
    const refused = await delegate(withScript('One more', [{ text: 'x' }]), { isBackground: true });
    expect(refused).toMatchObject({
      error: { error: expect.stringMatching(/At most 2 subagents run at once/) as unknown },
    });
  });
});
