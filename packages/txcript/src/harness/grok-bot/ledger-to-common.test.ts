import { describe, expect, it } from 'vitest';
import { grokBotFromCommon, grokBotToCommon } from './codec.ts';
import { parseLedgerEntries } from './ledger-entry.ts';
import { ledgerToCommon } from './ledger-to-common.ts';

const T = 1_788_485_400_000;
const at = (ms: number): string => new Date(ms).toISOString();

function convert(values: unknown[]) {
  const { entries, warnings } = parseLedgerEntries(values, 'gw');
  const out = ledgerToCommon(entries, { sessionId: 'a1', source: 'gw' });
  return { ...out, warnings: [...warnings, ...out.warnings] };
}

describe('ledger -> Common', () => {
  it('turns user and assistant messages into text with their timestamps', () => {
    const { transcript } = convert([
      { id: 't0u', kind: 'message', role: 'user', content: 'hi', timestampMs: T },
      { id: 't0a0', kind: 'message', role: 'assistant', content: 'hello', timestampMs: T + 5 },
    ]);
    expect(transcript.meta).toEqual({ id: 'a1', timestamp: at(T) });
    expect(transcript.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'hi' }], timestamp: at(T) },
      { role: 'assistant', content: [{ type: 'text', text: 'hello' }], timestamp: at(T + 5) },
    ]);
  });

  it('accepts the C12 kind names', () => {
    const { transcript } = convert([
      { id: 'a', kind: 'user-message', prompt: 'from prompt' },
      { id: 'b', kind: 'receive-message', content: 'received' },
      { id: 'c', kind: 'assistant', text: 'reply' },
      { id: 'd', kind: 'user', content: 'plain user' },
    ]);
    expect(transcript.messages.map((m) => [m.role, m.content[0]])).toEqual([
      ['user', { type: 'text', text: 'from prompt' }],
      ['user', { type: 'text', text: 'received' }],
      ['assistant', { type: 'text', text: 'reply' }],
      ['user', { type: 'text', text: 'plain user' }],
    ]);
  });

  it('keeps every send-message type as a send_message call with the stored form, and its result', () => {
    const widget = {
      type: 'widget',
      widget: {
        prompt: 'Pick',
        options: [{ label: 'A' }, { label: 'B', style: 'primary' }],
        multiSelect: true,
      },
    };
    const text = {
      type: 'text',
      content: 'see',
      images: [{ url: 'file:///a.png', alt: 'a' }],
      reply_to: 't0u',
    };
    const { transcript } = convert([
      { id: 't0s0', kind: 'send-message', message: text, timestampMs: T },
      { id: 't0s1', kind: 'send-message', message: widget, timestampMs: T + 1 },
    ]);
    expect(transcript.messages).toHaveLength(4);
    expect(transcript.messages[0]).toEqual({
      role: 'assistant',
      timestamp: at(T),
      content: [
        { type: 'tool_use', id: 't0s0', tool: { name: 'Raw', tool_name: 'send_message', input: text } },
      ],
    });
    expect(transcript.messages[1]!.content[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 't0s0',
      content: { success: { messageId: 't0s0', timestamp: String(T) } },
    });
    expect(transcript.messages[2]!.content[0]).toMatchObject({ tool: { input: widget } });
  });

  it('turns a user attachment into an artifact with a path source', () => {
    const { transcript } = convert([
      {
        id: 't0ua0',
        kind: 'user-attachment',
        file_name: 'a.pdf',
        file_path: '/att/ab.pdf',
        media_type: 'application/pdf',
        timestampMs: T,
      },
    ]);
    expect(transcript.messages[0]).toEqual({
      role: 'user',
      timestamp: at(T),
      content: [
        {
          type: 'artifact',
          artifact: {
            id: 't0ua0',
            name: 'a.pdf',
            source: { type: 'path', path: '/att/ab.pdf', media_type: 'application/pdf' },
          },
        },
      ],
    });
  });

  it('turns tool-call entries into a Raw call and a result by status; a running call has no result', () => {
    const { transcript } = convert([
      { id: 'x1', kind: 'tool-call', name: 'shell', status: 'success', summary: 'ran ls', timestampMs: T },
      { id: 'x2', kind: 'tool-call', name: 'web_fetch', status: 'failure', timestampMs: T },
      { id: 'x3', kind: 'tool-call', name: 'mcp', status: 'error', summary: 'boom', timestampMs: T },
      { id: 'x4', kind: 'tool-call', name: 'shell', status: 'running', timestampMs: T },
    ]);
    const blocks = transcript.messages.flatMap((m) => m.content);
    expect(blocks).toEqual([
      { type: 'tool_use', id: 'x1', tool: { name: 'Raw', tool_name: 'shell', input: {} } },
      {
        type: 'tool_result',
        tool_use_id: 'x1',
        content: { success: { status: 'success', summary: 'ran ls' } },
      },
      { type: 'tool_use', id: 'x2', tool: { name: 'Raw', tool_name: 'web_fetch', input: {} } },
      { type: 'tool_result', tool_use_id: 'x2', content: { failure: { status: 'failure' } }, is_error: true },
      { type: 'tool_use', id: 'x3', tool: { name: 'Raw', tool_name: 'mcp', input: {} } },
      {
        type: 'tool_result',
        tool_use_id: 'x3',
        content: { error: { status: 'error', summary: 'boom' } },
        is_error: true,
      },
      { type: 'tool_use', id: 'x4', tool: { name: 'Raw', tool_name: 'shell', input: {} } },
    ]);
  });

  it('keeps thinking; skips notices, turn ends, events and branched entries; warns on unknown kinds', () => {
    const { transcript, warnings } = convert([
      { id: 'k', kind: 'thinking', text: 'private', timestampMs: T },
      { id: 'n', kind: 'notice', text: 'boot', timestampMs: T },
      { id: 'e', kind: 'turn-ended', timestampMs: T },
      { id: 'v', kind: 'event', event: { type: 'name-changed', from: 'a', to: 'b' } },
      { id: 'b', kind: 'message', role: 'user', content: 'old branch', branched: true, timestampMs: T },
      { id: 'u', kind: 'hologram', timestampMs: T },
    ]);
    expect(transcript.messages).toEqual([
      { role: 'assistant', content: [{ type: 'thinking', text: 'private' }], timestamp: at(T) },
    ]);
    expect(warnings.map((w) => w.message)).toEqual([
      '1 "hologram" entry (u) left out of Common, which has no place for them; the ledger keeps them',
      '1 entry of an abandoned branch skipped',
    ]);
  });

  it('leaves out the turn a later prompt superseded (regenerate, edit and resend), without a warning', () => {
    const { transcript, warnings } = convert([
      { id: 't0u', kind: 'message', role: 'user', content: 'first try', clientNonce: 'a', timestampMs: T },
      {
        id: 't0s0',
        kind: 'send-message',
        message: { type: 'text', content: 'old reply' },
        timestampMs: T + 1,
      },
      { id: 't0e', kind: 'turn-ended', timestampMs: T + 2 },
      {
        id: 't1u',
        kind: 'message',
        role: 'user',
        content: 'second try',
        supersedes: 't0u',
        timestampMs: T + 3,
      },
    ]);
    expect(transcript.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'second try' }], timestamp: at(T + 3) },
    ]);
    expect(warnings).toEqual([]);
  });

  it('gives a transcript that survives the JSONL codec', () => {
    const { transcript } = convert([
      { id: 't0u', kind: 'message', role: 'user', content: 'hi', timestampMs: T },
      {
        id: 't0s0',
        kind: 'send-message',
        message: { type: 'attachment', url: 'file:///x.pdf' },
        timestampMs: T + 1,
      },
    ]);
    expect(grokBotToCommon(grokBotFromCommon(transcript), { sessionId: 'a1' })).toEqual(transcript);
  });
});
