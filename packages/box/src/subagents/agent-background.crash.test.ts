/**
 * SIGKILL during a subagent, with a background command running, then a restart on the same data
 * dir: both turns are closed as the turn closer closes a turn, the parent's interrupted `task`
 * call still names the child, the tasks read as interrupted, the model is told on the next turn,
 * and txcript reads both transcripts (the child listed under its parent).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { BOX_STOPPED_NOTICE } from '../agent/turn-texts.ts';
import { createAgentHost, type LocalAgentHost } from '../host/agent-host.ts';
import { scriptedProvider } from '../providers/scripted.ts';
import { agentPaths } from '../stores/files/layout.ts';
import { processesRunning, until } from '../testing/processes.ts';

const CHILD = fileURLToPath(new URL('./test-crash-child.ts', import.meta.url));
const TXCRIPT = fileURLToPath(new URL('../../../txcript/bin/txcript.mjs', import.meta.url));

function jsonl(text: string): Array<Record<string, unknown>> {
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function blocks(records: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  return records.flatMap((record) => {
    const content = (record.message as { content?: unknown } | undefined)?.content;
    return Array.isArray(content) ? (content as Array<Record<string, unknown>>) : [];
  });
}

let dataDir = '';
let host: LocalAgentHost | undefined;
afterAll(async () => {
  await host?.close();
  for (const pid of [
    ...(await processesRunning('sleep', '309.51')),
    ...(await processesRunning('sleep', '309.52')),
  ])
    process.kill(pid, 'SIGKILL');
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('a crash during a subagent', () => {
  it('SIGKILL, then a restart: the parent turn goes on, the child closed, the link kept, the model told, txcript reads both', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-crash-child-'));
    const box = spawn(process.execPath, ['--import', 'tsx', CHILD, dataDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    box.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    box.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<void>((resolve) => box.once('exit', () => resolve()));
    await until(
      async () =>
        box.exitCode === null &&
        (await processesRunning('sleep', '309.51')).length === 1 &&
        (await processesRunning('sleep', '309.52')).length === 1,
      `the box's command and its child's command (stderr: ${stderr})`,
    );
    box.kill('SIGKILL');
    await exited;
    const { agentId } = JSON.parse(stdout.split('\n')[0]!) as { agentId: string };
    // Confined commands die with the box (bubblewrap's --die-with-parent).
    await until(
      async () =>
        (await processesRunning('sleep', '309.51')).length +
          (await processesRunning('sleep', '309.52')).length ===
        0,
      'the commands to die with the box',
    );

    const model = scriptedProvider([
      { toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'I see what was cut.' } }] },
      {},
      { toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'Nothing more.' } }] },
      {},
    ]);
    host = await createAgentHost({ dataDir, provider: model, env: {} });
    await host.idle(agentId);
    const tasks = await host.listTasks(agentId);
    expect(tasks.map((task) => [task.kind, task.state]).sort()).toEqual([
      ['command', 'interrupted'],
      ['subagent', 'interrupted'],
    ]);
    const childId = tasks.find((task) => task.kind === 'subagent')!.id;

    // The parent's turn: its task call's interrupted result naming the child, then it went on.
    const parent = jsonl(await readFile(agentPaths(dataDir, agentId).jsonl, 'utf8'));
    const taskResult = blocks(parent).find((block) => block.type === 'tool_result' && block.name === 'task');
    expect(taskResult?.result).toEqual({
      error: { error: expect.stringMatching(/interrupted/) as unknown, agentId: childId },
    });
    const entries = await host.entriesAfter(agentId, 0);
    expect(entries.filter((entry) => entry.kind === 'notice').map((entry) => entry.text)).not.toContain(
      BOX_STOPPED_NOTICE,
    );
    expect(entries.find((entry) => entry.kind === 'send-message')).toMatchObject({
      id: expect.stringMatching(/^t0s/) as unknown,
      message: { content: 'I see what was cut.' },
    });
    expect(entries.some((entry) => entry.id === 't0e')).toBe(true);

    // The child's turn: every call has its result.
    const child = jsonl(await readFile(agentPaths(dataDir, childId).jsonl, 'utf8'));
    const childBlocks = blocks(child);
    expect(childBlocks.filter((block) => block.type === 'tool_use')).toHaveLength(1);
    expect(childBlocks.filter((block) => block.type === 'tool_result')).toEqual([
      {
        type: 'tool_result',
        name: 'shell',
        result: { error: { error: expect.stringMatching(/interrupted/) as unknown } },
      },
    ]);

    // The turn going on: the model reads what the crash cut, and that its turn goes on.
    const seen = JSON.stringify(model.requests[0]!.messages);
    expect(seen).toContain('sleep 309.51');
    expect(seen).toContain(childId);
    expect(seen).toMatch(/interrupted/);
    expect(seen).toContain('This turn was cut');
    // The next turn: the background note was written once.
    await host.sendPrompt({ agentId, prompt: 'what happened?', clientNonce: 'after-crash' });
    await host.idle(agentId);
    const notes = jsonl(await readFile(agentPaths(dataDir, agentId).jsonl, 'utf8')).filter((record) =>
      JSON.stringify(record).includes('The box stopped while this background work ran'),
    );
    expect(notes).toHaveLength(1);

    // txcript: the child under its parent; both open.
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: dataDir,
      TXCRIPT_GROK_BOT_ROOT: `${dataDir}/agent-transcripts`,
      TXCRIPT_GROK_BOT_AGENTS: `${dataDir}/agents`,
      TXCRIPT_NO_CACHE: '1',
    };
    const list = spawnSync(process.execPath, [TXCRIPT, 'list', '--from', 'grok_bot', '--json'], {
      env,
      encoding: 'utf8',
    });
    expect(list.status, list.stderr).toBe(0);
    const sessions = JSON.parse(list.stdout) as Array<{ id: string; parent: string | null }>;
    expect(sessions.map((s) => [s.id, s.parent])).toEqual([
      [agentId, null],
      [childId, agentId],
    ]);
    for (const id of [agentId, childId]) {
      const view = spawnSync(process.execPath, [TXCRIPT, 'view', id, '--from', 'grok_bot'], {
        env,
        encoding: 'utf8',
      });
      expect(view.status, view.stderr).toBe(0);
      expect(view.stdout).toMatch(/interrupted/);
    }
  }, 90_000);
});
