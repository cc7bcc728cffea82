/**
 * Background work that ends while the agent is idle wakes it (the real box, real files,
 * bubblewrap, the scripted model): a hidden `[A background task just completed]` user record
 * starts a turn of its own; work the model awaited, or the user stopped, wakes nothing; work that
 * ended during a turn wakes the agent once that turn is over; after a SIGKILL between the wake's
 * mark and its inbox commit, the next start wakes the agent exactly once.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentHost, type LocalAgentHost } from '../host/agent-host.ts';
import { scriptedProvider, type ScriptedProvider, type ScriptedStep } from '../providers/scripted.ts';
import { agentPaths } from '../stores/files/layout.ts';
import { hostFixture, type HostFixture } from '../testing/host-fixture.ts';
import { until } from '../testing/processes.ts';

const CRASH_CHILD = fileURLToPath(new URL('./test-wake-crash.ts', import.meta.url));
const TXCRIPT = fileURLToPath(new URL('../../../txcript/bin/txcript.mjs', import.meta.url));
const WAKE = '[SAND_HIDDEN_PROMPT][A background task just completed]';

const send = (content: string) => ({ name: 'send_message', input: { type: 'text', content } });

let box: HostFixture | undefined;
let host: LocalAgentHost | undefined;
let dataDir = '';
afterEach(async () => {
  await box?.dispose();
  box = undefined;
  await host?.close();
  host = undefined;
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  dataDir = '';
});

/** The user texts the model was sent in each request's last user message. */
function lastUserText(model: ScriptedProvider, request: number): string {
  const messages = model.requests[request]?.messages ?? [];
  const user = [...messages].reverse().find((message) => message.role === 'user');
  return JSON.stringify(user?.content ?? '');
}

async function settle(ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms));
}

describe('a background task that ends while the agent is idle', () => {
  it('wakes the agent with a hidden prompt that starts a turn of its own, once', async () => {
    const script: ScriptedStep[] = [
      { toolCalls: [{ name: 'shell', input: { command: 'sleep 0.3; echo built-ok', isBackground: true } }] },
      { toolCalls: [send('Started the build.')] },
      {},
      // The wake's turn.
      { toolCalls: [send('The build finished.')] },
      {},
    ];
    box = await hostFixture(script);
    await box.prompt('build it');
    expect(box.model.requests).toHaveLength(3);
    const fixture = box;
    await until(() => fixture.model.requests.length === 5, 'the wake turn', 20_000);
    await box.host.idle(box.agentId);
    const wake = lastUserText(box.model, 3);
    expect(wake).toContain(WAKE);
    expect(wake).toContain('built-ok');
    expect(wake).toMatch(/Exit code: 0/);

    // The ledger: a hidden user message of turn 1; the JSONL: the record under its address tag.
    const entries = await box.entries();
    expect(entries.find((entry) => entry.id === 't1u')).toMatchObject({
      kind: 'message',
      role: 'user',
      hidden: true,
      content: expect.stringMatching(
        /^\[A background task just completed\] A background task you started/,
      ) as unknown,
    });
    const records = await box.records();
    const texts = records.flatMap((record) => {
      const content = (record.message as { content?: unknown } | undefined)?.content;
      return Array.isArray(content)
        ? (content as Array<{ type?: string; text?: string }>).flatMap((b) =>
            b.type === 'text' ? [b.text] : [],
          )
        : [];
    });
    expect(texts.filter((text) => text?.startsWith(`[t1u]\n${WAKE}`))).toHaveLength(1);

    // Nothing more: one wake for one task.
    await settle(600);
    expect(box.model.requests).toHaveLength(5);

    // txcript reads it back as a hidden host prompt and shows the session.
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: box.dataDir,
      TXCRIPT_GROK_BOT_ROOT: `${box.dataDir}/agent-transcripts`,
      TXCRIPT_GROK_BOT_AGENTS: `${box.dataDir}/agents`,
      TXCRIPT_NO_CACHE: '1',
    };
    const view = spawnSync(process.execPath, [TXCRIPT, 'view', box.agentId, '--from', 'grok_bot'], {
      env,
      encoding: 'utf8',
    });
    expect(view.status, view.stderr).toBe(0);
    expect(view.stdout).toContain('The build finished.');
  }, 60_000);

  it('a task that ends during a turn, unawaited, wakes the agent after that turn', async () => {
    const script: ScriptedStep[] = [
      {
        toolCalls: [
          { name: 'shell', input: { command: 'echo quick-one', isBackground: true } },
          { name: 'shell', input: { command: 'sleep 0.8' } },
        ],
      },
      { toolCalls: [send('Busy.')] },
      {},
      { toolCalls: [send('Quick one done.')] },
      {},
    ];
    box = await hostFixture(script);
    await box.prompt('two things');
    // The task ended while the turn ran: nothing was injected into that turn.
    expect(JSON.stringify(box.model.requests.slice(0, 3).map((r) => r.messages))).not.toContain(WAKE);
    const fixture = box;
    await until(() => fixture.model.requests.length === 5, 'the wake turn after the busy one', 20_000);
    expect(lastUserText(box.model, 3)).toContain('quick-one');
  }, 60_000);

  it('a task the model awaited to its end, or the user stopped, wakes nothing', async () => {
    let taskId = '';
    const script: Array<ScriptedStep | (() => ScriptedStep)> = [
      { toolCalls: [{ name: 'shell', input: { command: 'sleep 0.2; echo seen', isBackground: true } }] },
      () => ({ toolCalls: [{ name: 'await', input: { taskId, blockUntilMs: 20_000 } }] }),
      { toolCalls: [send('Done, I saw it.')] },
      {},
      { toolCalls: [{ name: 'shell', input: { command: 'sleep 302.71', isBackground: true } }] },
      { toolCalls: [send('Started the long one.')] },
      {},
    ];
    let at = 0;
    const model = scriptedProvider((request) => {
      const step = script[at++];
      if (step === undefined) throw new Error(`no step ${at}: an unexpected wake`);
      if (at === 2) {
        const text = JSON.stringify(request.messages.at(-1));
        taskId = /task-[0-9a-f]{12}/.exec(text)?.[0] ?? '';
      }
      return typeof step === 'function' ? step() : step;
    });
    box = await hostFixture([], { provider: model });
    await box.prompt('build and wait');
    expect(taskId).not.toBe('');
    await settle(800);
    expect(model.requests).toHaveLength(4);

    await box.prompt('start the long one');
    expect(model.requests).toHaveLength(7);
    const [long] = (await box.host.listTasks(box.agentId)).filter((task) => task.state === 'running');
    expect(long).toBeDefined();
    await box.host.stopTask(box.agentId, long!.id);
    const fixture = box;
    await until(
      async () => (await fixture.host.listTasks(fixture.agentId)).every((task) => task.state !== 'running'),
      'the stopped task to end',
    );
    await settle(800);
    expect(model.requests).toHaveLength(7);
  }, 60_000);
});

describe('a crash between the wake and its inbox commit', () => {
  it('SIGKILL, then a restart: the agent is woken exactly once', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-wake-crash-'));
    const child = spawn(process.execPath, ['--import', 'tsx', CRASH_CHILD, dataDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exit = await new Promise<NodeJS.Signals | null>((resolve) =>
      child.once('exit', (_code, signal) => resolve(signal)),
    );
    expect(exit, stderr).toBe('SIGKILL');
    const { agentId } = JSON.parse(stdout.split('\n')[0]!) as { agentId: string };
    const jsonl = agentPaths(dataDir, agentId).jsonl;
    expect(await readFile(jsonl, 'utf8')).not.toContain(WAKE);

    const restart = async (steps: ScriptedStep[]) => {
      const model = scriptedProvider(steps);
      host = await createAgentHost({ dataDir, provider: model, env: {} });
      await host.openAgent(agentId);
      return model;
    };
    const model = await restart([{ toolCalls: [send('The job finished while I was away.')] }, {}]);
    const opened = host!;
    await until(() => model.requests.length === 2, 'the wake after the restart', 20_000);
    await opened.idle(agentId);
    expect(lastUserText(model, 0)).toContain('crash-job-output');
    await opened.close();
    host = undefined;

    // Opened again: nothing is owed any more.
    const again = await restart([]);
    await settle(800);
    expect(again.requests).toHaveLength(0);
    const wakes = (await readFile(jsonl, 'utf8'))
      .split('\n')
      .filter((line) => line.includes('A background task just completed'));
    expect(wakes).toHaveLength(1);
  }, 90_000);
});
