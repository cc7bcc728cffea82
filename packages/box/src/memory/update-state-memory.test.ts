/** update_state memory and profile through the real host and the scripted model. */
import { afterEach, expect, it } from 'vitest';
import { hostFixture, lastToolOutputs, type HostFixture } from '../testing/host-fixture.ts';

let fixture: HostFixture | undefined;
afterEach(async () => {
  await fixture?.dispose();
  fixture = undefined;
});

const call = (input: unknown) => ({ toolCalls: [{ name: 'update_state', input }] });
const send = { toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'ok' } }] };

it('the model writes memory, reads it in its next call, forgets it by exact text (a miss names near matches)', async () => {
  fixture = await hostFixture([
    call({ memory: { action: 'write', text: 'The user likes green tea' } }),
    call({ memory: { action: 'write', text: 'Everyone: the office is in Lyon', scope: 'user' } }),
    call({ memory: { action: 'forget', text: 'likes tea' } }),
    call({ memory: { action: 'forget', text: 'The user likes green tea' } }),
    send,
    {},
  ]);
  await fixture.prompt('remember things');
  const requests = fixture.model.requests;
  expect(requests[0]!.system).not.toContain('green tea');
  expect(requests[1]!.system).toContain('- The user likes green tea');
  expect(requests[2]!.system).toContain('- Everyone: the office is in Lyon');
  expect(lastToolOutputs(fixture.model, 3).join('\n')).toMatch(
    /Near matches[\s\S]*"The user likes green tea"/,
  );
  expect(requests[4]!.system).not.toContain('green tea');
  expect(requests[4]!.system).toContain('- Everyone: the office is in Lyon');
  expect(await fixture.jsonlText()).not.toContain('## Agent memory');
});

it('the model renames itself: the next call has the new name, the user sees a notice and the name-changed event', async () => {
  fixture = await hostFixture([call({ profile: { name: 'Ada', instructions: 'Be terse.' } }), send, {}]);
  await fixture.prompt('rename yourself');
  expect(fixture.model.requests[1]!.system).toMatch(/^You are Ada,[\s\S]*# Your instructions\nBe terse\./);
  const entries = await fixture.entries();
  expect(entries).toContainEqual(
    expect.objectContaining({
      kind: 'event',
      event: { type: 'name-changed', from: 'Test agent', to: 'Ada' },
    }),
  );
  expect(entries).toContainEqual(
    expect.objectContaining({
      kind: 'notice',
      text: expect.stringMatching(
        /renamed itself from "Test agent" to "Ada"[\s\S]*instructions to "Be terse\."/,
      ) as unknown,
    }),
  );
  expect((await fixture.host.listAgents())[0]!.name).toBe('Ada');
});
