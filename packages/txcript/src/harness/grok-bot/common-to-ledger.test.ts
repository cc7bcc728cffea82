import { ledgerEntrySchema } from '@sendbox/protocol';
import { describe, expect, it } from 'vitest';
import type { JsonObject, Message, Transcript } from '../../model/common.ts';
import { commonToLedger } from './common-to-ledger.ts';

const ts = '2026-11-30T10:00:00.000Z';
const msg = (role: Message['role'], content: Message['content']): Message => ({
  role,
  content,
  timestamp: ts,
});
const doc = (messages: Message[]): Transcript => ({ meta: { id: 's', timestamp: ts }, messages });

describe('commonToLedger', () => {
  it('makes sends the bubbles and assistant text private thinking when the session speaks through send_message', () => {
    const { entries } = commonToLedger(
      doc([
        msg('user', [{ type: 'text', text: 'hi' }]),
        msg('assistant', [
          { type: 'text', text: 'let me think' },
          {
            type: 'tool_use',
            id: 'c1',
            tool: { name: 'Raw', tool_name: 'send_message', input: { text: { content: 'Hello!' } } },
          },
        ]),
        msg('user', [
          { type: 'tool_result', tool_use_id: 'c1', content: { success: { messageId: 't0s0' } } },
        ]),
        msg('assistant', [
          {
            type: 'tool_use',
            id: 'c2',
            tool: {
              name: 'Raw',
              tool_name: 'send_message',
              input: { type: 'widget', widget: { prompt: 'Pick', options: [{ label: 'A' }] } },
            },
          },
        ]),
      ]),
    );
    expect(entries.map((e) => [e.id, e.kind])).toEqual([
      ['t0u', 'message'],
      ['t0a0', 'thinking'],
      ['t0s0', 'send-message'],
      ['t0s1', 'send-message'],
    ]);
    expect(entries[3]).toMatchObject({ message: { type: 'widget', widget: { prompt: 'Pick' } } });
    for (const e of entries) expect(ledgerEntrySchema.safeParse(e).success).toBe(true);
  });

  it('keeps assistant text visible for sessions without send_message, and tool calls compact with their status', () => {
    const { entries } = commonToLedger(
      doc([
        msg('user', [{ type: 'text', text: 'run it' }]),
        msg('assistant', [
          { type: 'text', text: 'Running.' },
          { type: 'tool_use', id: 'b1', tool: { name: 'Bash', command: 'make test' } },
        ]),
        msg('user', [{ type: 'tool_result', tool_use_id: 'b1', content: 'boom', is_error: true }]),
        msg('assistant', [{ type: 'text', text: 'It failed.' }]),
        msg('user', [{ type: 'text', text: 'again' }]),
      ]),
    );
    expect(entries.map((e) => e.id)).toEqual(['t0u', 't0a0', 't0a1', 't0a2', 't1u']);
    expect(entries[1]).toMatchObject({ kind: 'message', role: 'assistant', content: 'Running.' });
    expect(entries[2]).toMatchObject({
      kind: 'tool-call',
      name: 'shell', // the box's own name for the call
      status: 'failure',
      summary: 'make test',
    });
  });

  it('marks hidden prompts, never drops them, and does not show failed sends', () => {
    const { entries } = commonToLedger(
      doc([
        msg('user', [{ type: 'text', text: '[SAND_HIDDEN_PROMPT][first run] boot' }]),
        msg('assistant', [
          {
            type: 'tool_use',
            id: 'x',
            tool: { name: 'Raw', tool_name: 'send_message', input: { text: { content: 'lost' } } },
          },
        ]),
        msg('user', [
          { type: 'tool_result', tool_use_id: 'x', content: { error: { error: 'blocked' } }, is_error: true },
        ]),
      ]),
    );
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ kind: 'message', hidden: true });
  });

  it('keeps only what the user typed in a bubble, and links an answer to the send it answers', () => {
    const sendCall = (id: string, input: JsonObject) =>
      msg('assistant', [{ type: 'tool_use', id, tool: { name: 'Raw', tool_name: 'send_message', input } }]);
    const result = (id: string, messageId: string) =>
      msg('user', [{ type: 'tool_result', tool_use_id: id, content: { success: { messageId } } }]);
    const { entries } = commonToLedger(
      doc([
        msg('user', [
          { type: 'text', text: '[SAND_HIDDEN_PROMPT][routine] tidy\n[inbound] Ship the fix today' },
        ]),
        sendCall('w', { type: 'widget', widget: { prompt: 'Ship?', options: [{ label: 'Yes' }] } }),
        result('w', 'old7s3'),
        msg('user', [{ type: 'text', text: '[Answering your question old7s3: "Ship?"]\nYes' }]),
        sendCall('k', { type: 'secret-request', secret: { label: 'Token', name: 'TOKEN' } }),
        result('k', 'old8s0'),
        msg('user', [
          {
            type: 'text',
            text: '[Answering your question old8s0: "Token"]\n[SAND_HIDDEN_PROMPT]The user saved the secret.',
          },
        ]),
      ]),
    );
    const users = entries.filter((e) => e.kind === 'message');
    expect(users.map((e) => (e.kind === 'message' ? [e.content, e.replyTo, e.hidden] : []))).toEqual([
      ['Ship the fix today', undefined, undefined],
      ['Yes', 't0s0', undefined],
      [
        '[Answering your question old8s0: "Token"]\n[SAND_HIDDEN_PROMPT]The user saved the secret.',
        't1s0',
        true,
      ],
    ]);
  });

  it('gives ids that are unique, the boot turn before the first user message', () => {
    const { entries, lastActivityAt } = commonToLedger(
      doc([
        msg('assistant', [{ type: 'text', text: 'boot text' }]),
        msg('user', [{ type: 'text', text: 'a' }]),
        msg('user', [
          { type: 'text', text: 'b' },
          {
            type: 'artifact',
            artifact: { id: 'f', name: 'x.pdf', source: { type: 'path', path: '/tmp/x.pdf' } },
          },
        ]),
      ]),
    );
    expect(entries.map((e) => e.id)).toEqual(['tba0', 't0u', 't1u', 't1ua0']);
    expect(lastActivityAt).toBe(Date.parse(ts));
  });
});
