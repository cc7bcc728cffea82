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
  it('shows every card a record holds: attachments beside text.content, images, both slots at once', () => {
    expect(
      sendMessageReply({
        text: { content: 'two files', images: [{ url: 'file:///p.png', alt: 'p' }] },
        attachments: [{ url: 'file:///a.csv' }, { url: 'https://example.test/b.pdf' }],
      }),
    ).toEqual([
      { text: 'two files' },
      { text: '[image: file:///p.png "p"]', card: true },
      { text: '[attachment: file:///a.csv]', card: true },
      { text: '[attachment: https://example.test/b.pdf]', card: true },
    ]);
    expect(sendMessageReply({ type: 'attachment', url: 'file:///x/cat.png', file_name: 'cat.png' })).toEqual([
      { text: '[attachment: file:///x/cat.png "cat.png"]', card: true },
    ]);
  });
  it('shows a stored type it does not model as a card naming the type and its gist', () => {
    expect(sendMessageReply({ type: 'connector', connector: 'tracker', variant: 'connect' })).toEqual([
      { text: '[connector: tracker]', card: true },
    ]);
    expect(
      sendMessageReply({ type: 'auto-review-approval', approval: { requestId: 'r', summary: 'Run make' } }),
    ).toEqual([{ text: '[auto-review-approval: Run make]', card: true }]);
    expect(sendMessageReply({ type: 'team-access' })).toEqual([{ text: '[team-access]', card: true }]);
  });
  it('shows an unknown shape as JSON rather than dropping it', () => {
    expect(sendMessageReply({ mystery: 1, toolCallId: 'c' })).toEqual([
      { text: '[send_message: {"mystery":1}]', card: true },
    ]);
  });
});
