import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { historyFromRecords, toolReaders } from '../../context/model-view.ts';
import { hostFixture } from '../../testing/host-fixture.ts';
import { noScrub } from '../../secrets/scrub.ts';
import type { ToolContext } from '../types.ts';
import { StateError, updateStateTool, type RoutineCommand, type StateHandler } from './index.ts';

const ctx = (extra: Partial<ToolContext> = {}): ToolContext => ({
  sandboxDir: '/nonexistent',
  env: {},
  scrub: noScrub,
  todos: [],
  now: () => 1000,
  ...extra,
});

const parse = (input: unknown) => updateStateTool.input.safeParse(input);

describe('update_state input', () => {
  it('takes exactly one of routine, memory or profile', () => {
    expect(parse({ memory: { action: 'write', text: 'likes tea' } }).success).toBe(true);
    expect(parse({ profile: { name: 'Ada' } }).success).toBe(true);
    const none = parse({});
    expect(none.success).toBe(false);
    expect(none.error?.issues[0]?.message).toMatch(/exactly one of routine, memory or profile/);
    const two = parse({ memory: { action: 'write', text: 'x' }, profile: { name: 'Ada' } });
    expect(two.error?.issues[0]?.message).toMatch(/not memory and profile/);
  });

  it('says which routine fields an action needs, by path', () => {
    const create = parse({ routine: { action: 'create', name: 'Digest' } });
    expect(create.error?.issues.map((issue) => issue.path.join('.'))).toEqual([
      'routine.schedule',
      'routine.prompt',
    ]);
    const pause = parse({ routine: { action: 'pause', schedule: '@every 1h' } });
    expect(pause.error?.issues.map((issue) => [issue.path.join('.'), issue.message])).toEqual([
      ['routine.id', expect.stringMatching(/needs the routine's id/)],
      ['routine.schedule', expect.stringMatching(/update/)],
    ]);
    expect(parse({ routine: { action: 'update', id: 'r1', prompt: 'new' } }).success).toBe(true);
    expect(parse({ profile: {} }).success).toBe(false);
  });

  it('is shown to the model as one object schema', () => {
    const schema = z.toJSONSchema(updateStateTool.input, { target: 'draft-7', io: 'input' }) as {
      type: string;
      properties: Record<string, unknown>;
    };
    expect(schema.type).toBe('object');
    expect(Object.keys(schema.properties)).toEqual(['routine', 'memory', 'profile']);
  });
});

describe('update_state dispatch', () => {
  it("hands each part to its room's handler and answers with the handler's sentence", async () => {
    const seen: RoutineCommand[] = [];
    const routines: StateHandler<RoutineCommand> = {
      apply: (input) => {
        seen.push(input);
        return Promise.resolve({ text: 'Created routine "Digest" (id r1).', target: 'Digest' });
      },
    };
    const input = updateStateTool.input.parse({
      routine: { action: 'create', name: 'Digest', schedule: '@every 1h', prompt: 'sum up' },
    });
    const outcome = await updateStateTool.run(input, ctx({ routines }));
    expect(outcome.envelope).toEqual({ success: { currentStep: 'Created routine "Digest" (id r1).' } });
    expect(outcome.summary).toBe('routine Digest: Created routine "Digest" (id r1).');
    expect(seen).toEqual([input.routine]);
  });

  it('answers a part whose room is absent with an error the model can read', async () => {
    for (const [input, message] of [
      [{ memory: { action: 'write', text: 'x' } }, /Memory is not available/],
      [{ profile: { name: 'Ada' } }, /profile is not available/],
      [{ routine: { action: 'delete', id: 'r1' } }, /Routines are not available/],
    ] as const) {
      const outcome = await updateStateTool.run(updateStateTool.input.parse(input), ctx());
      expect(outcome.envelope).toEqual({ error: { error: expect.stringMatching(message) as unknown } });
    }
  });

  it("turns a handler's StateError into the call's error, and lets other errors through", async () => {
    const refusing: StateHandler<RoutineCommand> = {
      apply: () => Promise.reject(new StateError('no routine with id r9: your routines are r1')),
    };
    const input = updateStateTool.input.parse({ routine: { action: 'pause', id: 'r9' } });
    const outcome = await updateStateTool.run(input, ctx({ routines: refusing }));
    expect(outcome.envelope).toEqual({ error: { error: 'no routine with id r9: your routines are r1' } });
    const broken: StateHandler<RoutineCommand> = { apply: () => Promise.reject(new Error('disk on fire')) };
    await expect(updateStateTool.run(input, ctx({ routines: broken }))).rejects.toThrow('disk on fire');
  });
});

describe('update_state on disk', () => {
  it('is recorded as a communicate_update whose currentStep names the tool, and read back as the call the model made', async () => {
    const args = { memory: { action: 'write', text: 'The user likes tea', scope: 'user' } };
    const box = await hostFixture([
      { toolCalls: [{ id: 'c1', name: 'update_state', input: args }] },
      { toolCalls: [{ id: 'c2', name: 'send_message', input: { type: 'text', content: 'ok' } }] },
    ]);
    try {
      await box.prompt('remember that I like tea');
      const records = await box.records();
      const call = records.find(
        (record) =>
          JSON.stringify(record).includes('"tool_use"') &&
          JSON.stringify(record).includes('communicate_update'),
      );
      const block = (call!.message as { content: Array<{ name: string; input: Record<string, unknown> }> })
        .content[0]!;
      expect(block.name).toBe('communicate_update');
      expect(block.input.toolCallId).toBe('c1');
      expect(JSON.parse(block.input.currentStep as string)).toEqual({
        __sand_tool__: true,
        tool: 'update_state',
        detail: 'memory',
        target: 'user',
        args,
      });
      const result = records.find(
        (record) =>
          JSON.stringify(record).includes('"tool_result"') &&
          JSON.stringify(record).includes('communicate_update'),
      );
      expect((result!.message as { content: Array<{ name: string; result: unknown }> }).content[0]).toEqual({
        type: 'tool_result',
        name: 'communicate_update',
        result: {
          success: { currentStep: 'Remembered in the user memory (1 entry, 18 of 8192 bytes).' },
        },
      });
      // The ledger's row keeps the tool's own name for the UI.
      const entry = (await box.entries()).find((e) => e.kind === 'tool-call');
      expect(entry).toMatchObject({ name: 'update_state', status: 'success', toolCallId: 'c1' });
      // Live and rebuilt, the model sees its own call and the same answer.
      const live = box.model.requests[1]!.messages.slice(-2);
      const rebuilt = historyFromRecords(records as never, toolReaders([updateStateTool])).slice(1, 3);
      expect(rebuilt).toEqual(live);
      expect(live[0]).toMatchObject({
        role: 'assistant',
        content: [{ type: 'tool-call', toolName: 'update_state', input: args }],
      });
    } finally {
      await box.dispose();
    }
  });
});
