import { describe, expect, it } from 'vitest';
import type { Message, Transcript } from '../model/common.ts';
import { MISSING_RESULT_TEXT, repairToolPairing } from './orphans.ts';

const T = '2026-01-01T00:00:00.000Z';
const tx = (messages: Message[]): Transcript => ({ meta: { id: 's', timestamp: T }, messages });
const call = (id: string): Message => ({
  role: 'assistant',
  timestamp: T,
  content: [{ type: 'tool_use', id, tool: { name: 'Bash', command: 'ls' } }],
});
const result = (id: string, content = 'out'): Message => ({
  role: 'user',
  timestamp: T,
  content: [{ type: 'tool_result', tool_use_id: id, content }],
});

describe('repairToolPairing', () => {
  it('leaves a well-paired transcript as the same object', () => {
    const t = tx([call('a'), result('a')]);
    expect(repairToolPairing(t)).toBe(t);
  });

  it('turns a result with no earlier call into user text', () => {
    const out = repairToolPairing(tx([result('ghost', 'late output')]));
    expect(out.messages[0]!.content).toEqual([
      { type: 'text', text: '[tool result for unknown call ghost]\nlate output' },
    ]);
  });

  it('treats a second result for one call as an orphan', () => {
    const out = repairToolPairing(tx([call('a'), result('a'), result('a', 'again')]));
    expect(out.messages[2]!.content[0]!.type).toBe('text');
  });

  it('gives a call with no result a synthetic error result right after it', () => {
    const out = repairToolPairing(
      tx([call('a'), { role: 'user', timestamp: T, content: [{ type: 'text', text: 'hi' }] }]),
    );
    expect(out.messages.map((m) => m.role)).toEqual(['assistant', 'user', 'user']);
    expect(out.messages[1]!.content).toEqual([
      { type: 'tool_result', tool_use_id: 'a', content: MISSING_RESULT_TEXT, is_error: true },
    ]);
  });

  it('joins the synthetic result to the results that open the next user message', () => {
    const parallel: Message = {
      role: 'assistant',
      timestamp: T,
      content: [
        { type: 'tool_use', id: 'a', tool: { name: 'Bash', command: 'ls' } },
        { type: 'tool_use', id: 'b', tool: { name: 'Bash', command: 'pwd' } },
      ],
    };
    const out = repairToolPairing(tx([parallel, result('a')]));
    expect(out.messages).toHaveLength(2);
    expect(out.messages[1]!.content.map((b) => (b.type === 'tool_result' ? b.tool_use_id : b.type))).toEqual([
      'a',
      'b',
    ]);
  });

  it('renames a repeated call id and points later results at the newest call', () => {
    const out = repairToolPairing(tx([call('a'), result('a', 'one'), call('a'), result('a', 'two')]));
    const ids = out.messages.map((m) => {
      const b = m.content[0]!;
      return b.type === 'tool_use'
        ? b.id
        : b.type === 'tool_result'
          ? `${b.tool_use_id}<-${typeof b.content === 'string' ? b.content : '?'}`
          : b.type;
    });
    expect(ids).toEqual(['a', 'a<-one', 'a_2', 'a_2<-two']);
  });

  it('is idempotent', () => {
    const messy = tx([result('x'), call('a'), call('a'), result('a'), call('b')]);
    const once = repairToolPairing(messy);
    expect(repairToolPairing(once)).toEqual(once);
  });
});
