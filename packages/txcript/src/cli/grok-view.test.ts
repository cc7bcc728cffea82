import { describe, expect, it } from 'vitest';
import { sendMessageReply } from './grok-view.ts';

describe('sendMessageReply', () => {
  it('reads encoder shapes and flat typed payloads', () => {
    expect(sendMessageReply({ text: { content: 'hi' }, toolCallId: 'x' })).toEqual([{ text: 'hi' }]);
    expect(sendMessageReply({ attachment: { url: 'https://x/y.pdf', alt: 'Y' } })).toEqual([
      { text: '[attachment: https://x/y.pdf "Y"]', card: true },
    ]);
    expect(sendMessageReply({ type: 'attachment', url: 'file:///f' })).toEqual([
      { text: '[attachment: file:///f]', card: true },
    ]);
    expect(sendMessageReply({ type: 'cursor-agent', bcId: 'bc-1', title: 'Fix' })).toEqual([
      { text: '[cursor agent: bc-1 (Fix)]', card: true },
    ]);
    expect(sendMessageReply({ type: 'secret-request', secret: { label: 'API key', name: 'KEY' } })).toEqual([
      { text: '[secret request: API key]', card: true },
    ]);
    expect(sendMessageReply({ to: 'dm', content: 'see', attachments: [{ url: 'file:///z' }] })).toEqual([
      { text: 'see' },
      { text: '[attachment: file:///z]', card: true },
    ]);
    expect(
      sendMessageReply({
        type: 'widget',
        widget: { prompt: 'Go?', options: [{ label: 'Yes' }], multiSelect: true },
      }),
    ).toEqual([{ text: 'Go?' }, { text: '[choices (pick any): [Yes]]', card: true }]);
  });
  it('shows an unknown shape as JSON rather than dropping it', () => {
    expect(sendMessageReply({ mystery: 1, toolCallId: 'c' })).toEqual([
      { text: '[send_message: {"mystery":1}]', card: true },
    ]);
  });
});
