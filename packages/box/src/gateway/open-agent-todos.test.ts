/** `openAgent` over real HTTP gives the agent's task list with its entries (the web's todo panel opens on it). */
import { afterEach, expect, it } from 'vitest';
import { scriptedProvider } from '../providers/scripted.ts';
import { SseReader, startTestBox, type TestBox } from './test-support.ts';

let box: TestBox | undefined;
afterEach(async () => {
  await box?.close();
  box = undefined;
});

it('returns todos beside the entries and the pending inputs', async () => {
  const todos = [
    { id: 'a', content: 'Read the brief', status: 'completed' },
    { id: 'b', content: 'Ship it', status: 'in_progress' },
  ];
  box = await startTestBox(
    scriptedProvider([
      { toolCalls: [{ name: 'update_todos', input: { todos } }] },
      { toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'planned' } }] },
      {},
    ]),
  );
  const { body } = await box.call('createAgent', { name: 'Planner' });
  const agentId = (body as { agent: { id: string } }).agent.id;
  const empty = (await box.call('openAgent', { id: agentId })).body as { todos: unknown[] };
  expect(empty.todos).toEqual([]);

  const stream = new SseReader(await box.api(`events?agentId=${agentId}`));
  await box.call('sendPrompt', { agentId, prompt: 'plan', clientNonce: 'p1' });
  await stream.collect((e) => e.event === 'entry' && (e.data as { id: string }).id === 't0e');
  await stream.cancel();

  const opened = (await box.call('openAgent', { id: agentId })).body as {
    todos: unknown[];
    pending: unknown[];
  };
  expect(opened.todos).toMatchObject(todos);
  expect(opened.pending).toEqual([]);
});
