import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ModelMessage } from '../providers/types.ts';
import { scriptedProvider, type ScriptedStep } from '../providers/scripted.ts';
import { createAgentHost } from '../host/agent-host.ts';
import { withInjections } from './injections.ts';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

const send = (content: string) => ({
  id: `s-${content}`,
  name: 'send_message',
  input: { type: 'text', content },
});
const shell = (id: string) => ({ id, name: 'shell', input: { command: 'true' } });

/**
 * Turn one: two shell calls (the reminder after the second), a text-only step (its reminder), then
 * a step with text and a send. One call per step and text opening each step: the JSONL marks no
 * step boundary, so only such steps read back as they ran (docs/formats/grok-bot.md).
 */
const TURN_ONE: ScriptedStep[] = [
  { toolCalls: [shell('a')] },
  { toolCalls: [shell('b')] },
  { text: 'thinking out loud' },
  { text: 'now I tell them', toolCalls: [send('done')] },
  {},
];
const TURN_TWO: ScriptedStep[] = [{ toolCalls: [send('again')] }, {}];

async function run(turns: string[], restartBefore: number | undefined): Promise<readonly ModelMessage[]> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-inject-'));
  dirs.push(dataDir);
  const script = [...TURN_ONE, ...TURN_TWO];
  let model = scriptedProvider(script);
  let host = await createAgentHost({ dataDir, provider: model, env: {}, sendReminderEvery: 2 });
  const { id } = await host.createAgent({ name: 'Injections' });
  for (const [i, prompt] of turns.entries()) {
    if (i === restartBefore) {
      await host.close();
      model = scriptedProvider(TURN_TWO);
      host = await createAgentHost({ dataDir, provider: model, env: {}, sendReminderEvery: 2 });
    }
    await host.sendPrompt({ agentId: id, prompt, clientNonce: `n${i}` });
    await host.idle(id);
  }
  await host.close();
  // The first request of the last turn: everything before it as the model read it.
  const requests = model.requests;
  return requests[requests.length - TURN_TWO.length]!.messages;
}

describe('guidance and reminders, added per model call', () => {
  it('give a restarted agent exactly the messages a live one reads', async () => {
    const live = await run(['one', 'two'], undefined);
    const restarted = await run(['one', 'two'], 1);
    // What the host adds is all in user messages: the turns with their guidance, and the reminders.
    const users = (messages: readonly ModelMessage[]) => messages.filter((m) => m.role === 'user');
    expect(users(restarted)).toEqual(users(live));
    expect(restarted.map((m) => m.role)).toEqual(live.map((m) => m.role));
    const texts = JSON.stringify(live);
    // Guidance after both user turns, the non-send reminder once, the text-only reminder once.
    expect(texts.match(/## Talking to the user/g)).toHaveLength(2);
    expect(texts.match(/tool calls in a row/g)).toHaveLength(1);
    expect(texts.match(/ended with plain text only/g)).toHaveLength(1);
  });

  it('adds nothing to the history it is given', () => {
    const history: ModelMessage[] = [{ role: 'user', content: [{ type: 'text', text: '[t0u]\nhi' }] }];
    const copy = structuredClone(history);
    const out = withInjections(history, { guidance: 'G', sendReminderEvery: 6 });
    expect(history).toEqual(copy);
    expect(out).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: '[t0u]\nhi' },
          { type: 'text', text: '<system_reminder>\nG\n</system_reminder>' },
        ],
      },
    ]);
  });
});
