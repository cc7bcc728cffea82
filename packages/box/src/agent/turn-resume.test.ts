import { describe, expect, it } from 'vitest';
import type { JsonObject } from '@sendbox/txcript';
import { deliveredKey } from '../tools/send-message/index.ts';
import { resumePointOf, TURN_RESUMED_NOTE } from './turn-resume.ts';

const record = (role: string, ...content: JsonObject[]): JsonObject => ({ role, message: { role, content } });
const text = (value: string): JsonObject => ({ type: 'text', text: value });
const use = (name: string): JsonObject => ({ type: 'tool_use', name, input: {} });
const result = (name: string): JsonObject => ({ type: 'tool_result', name, result: {} });

describe('where a cut turn stands', () => {
  it('counts the ids, sends, steps and earlier resumes of its own turn only', () => {
    const hello = { type: 'text', content: 'hello' };
    const point = resumePointOf(
      1,
      [
        record('user', text('[t0u]\nearlier')),
        record('assistant', use('shell')),
        record('tool', result('shell')),
        record('user', text('[t1u]\nnow')),
        record('assistant', text('thinking')),
        record('assistant', use('shell')),
        record('tool', result('shell')),
        record('assistant', use('send_message')),
        record('tool', result('send_message')),
        record('user', text(TURN_RESUMED_NOTE)),
        record('assistant', use('shell')),
      ],
      [
        { id: 't0u', kind: 'message' },
        { id: 't0s4', kind: 'send-message', message: { type: 'text', content: 'old' } },
        { id: 't1u', kind: 'message' },
        { id: 't1a0', kind: 'thinking' },
        { id: 't1c0', kind: 'tool-call' },
        { id: 't1s0', kind: 'send-message', message: hello },
        { id: 't1n2', kind: 'notice' },
        { id: 't11s7', kind: 'send-message', message: { type: 'text', content: 'other turn' } },
      ],
    );
    expect(point.counters).toEqual({ assistant: 1, send: 1, tool: 1, notice: 3 });
    expect([...point.delivered]).toEqual([[deliveredKey(hello as never), 't1s0']]);
    expect(point.sent).toBe(1);
    expect(point.steps).toBe(3);
    expect(point.resumes).toBe(1);
  });

  it('keys a delivered file by its content-addressed name, not by the worker path it was copied to', () => {
    const on = (dir: string) => ({
      type: 'attachment',
      url: `file:///${dir}/agents/a1/attachments/ab12.png`,
      sha256: 'ab12',
    });
    expect(deliveredKey(on('data-a') as never)).toBe(deliveredKey(on('data-b') as never));
    expect(deliveredKey(on('data-a') as never)).not.toBe(
      deliveredKey({ ...on('data-a'), url: 'file:///data-a/agents/a1/attachments/cd34.png' } as never),
    );
  });
});
