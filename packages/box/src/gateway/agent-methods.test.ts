/** getAgent, updateAgent, listMemory and forgetMemory over real HTTP, with the events an open tab follows. */
import { afterEach, expect, it } from 'vitest';
import { MemoryFile } from '../memory/memory-file.ts';
import { scriptedProvider } from '../providers/scripted.ts';
import { agentPaths, userMemoryFile } from '../stores/files/layout.ts';
import { SseReader, startTestBox, type TestBox } from './test-support.ts';

let box: TestBox | undefined;
afterEach(async () => {
  await box?.close();
  box = undefined;
});

async function newAgent(test: TestBox, name: string): Promise<string> {
  const { body } = await test.call('createAgent', { name });
  return (body as { agent: { id: string } }).agent.id;
}

it('updateAgent renames live: the open agent’s stream gets the event entry and a roster update', async () => {
  box = await startTestBox(scriptedProvider());
  const id = await newAgent(box, 'Old name');
  await box.call('openAgent', { id });
  const stream = new SseReader(await box.api(`events?agentId=${id}`));
  const updated = await box.call('updateAgent', { id, name: 'New name', instructions: 'Be brief.' });
  expect(updated).toEqual({
    status: 200,
    body: expect.objectContaining({
      id,
      name: 'New name',
      instructions: 'Be brief.',
      provider: 'scripted',
    }) as unknown,
  });
  const events = await stream.collect((event) => event.event === 'roster');
  await stream.cancel();
  expect(events).toContainEqual(
    expect.objectContaining({
      event: 'entry',
      data: expect.objectContaining({
        kind: 'event',
        event: { type: 'name-changed', from: 'Old name', to: 'New name' },
      }) as unknown,
    }),
  );
  const roster = (await box.call('listAgents')).body as Array<{ id: string; name: string }>;
  expect(roster.find((row) => row.id === id)?.name).toBe('New name');
  expect((await box.call('getAgent', { id })).body).toMatchObject({
    name: 'New name',
    instructions: 'Be brief.',
  });
});

it('updateAgent refuses bad fields with 400 naming them, and an unknown agent with 404', async () => {
  box = await startTestBox(scriptedProvider());
  const id = await newAgent(box, 'A');
  const bad = await box.call('updateAgent', { id, name: '', allowDomains: ['https://x.com/'] });
  expect(bad.status).toBe(400);
  expect(JSON.stringify(bad.body)).toMatch(/name is empty/);
  expect(JSON.stringify(bad.body)).toMatch(/allowDomains/);
  expect((await box.call('updateAgent', { id: 'nobody', name: 'x' })).status).toBe(404);
  expect((await box.call('getAgent', { id })).body).toMatchObject({ name: 'A' });
});

it('listMemory shows both scopes; forgetMemory deletes by exact text, 404 with near matches otherwise', async () => {
  box = await startTestBox(scriptedProvider());
  const id = await newAgent(box, 'A');
  await new MemoryFile(agentPaths(box.dataDir, id).memory, 'agent').write('Own fact', 1);
  await new MemoryFile(userMemoryFile(box.dataDir), 'user').write('Shared fact', 2);
  const listed = await box.call('listMemory', { agentId: id });
  expect(listed.body).toEqual({
    scopes: [
      { scope: 'agent', entries: [{ text: 'Own fact', createdAt: 1 }], bytes: 8, cap: 8192 },
      { scope: 'user', entries: [{ text: 'Shared fact', createdAt: 2 }], bytes: 11, cap: 8192 },
    ],
  });
  const miss = await box.call('forgetMemory', { agentId: id, scope: 'user', text: 'shared' });
  expect(miss.status).toBe(404);
  expect(JSON.stringify(miss.body)).toContain('Shared fact');
  const forgot = await box.call('forgetMemory', { agentId: id, scope: 'user', text: 'Shared fact' });
  expect(forgot.body).toMatchObject({
    scopes: [{ scope: 'agent' }, { scope: 'user', entries: [], bytes: 0 }],
  });
});
