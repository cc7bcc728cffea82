import { describe, expect, it } from 'vitest';
import { sendMessageReply, splitHiddenText } from './grok-view.ts';

describe('splitHiddenText', () => {
  it('leaves ordinary text alone', () => {
    expect(splitHiddenText('hello there')).toEqual([{ hidden: false, text: 'hello there' }]);
  });
  it('hides from a hidden-prompt marker to the end, naming the wake', () => {
    expect(splitHiddenText('[SAND_HIDDEN_PROMPT][first run] boot')).toEqual([
      { hidden: true, kind: 'first run', text: '[SAND_HIDDEN_PROMPT][first run] boot' },
    ]);
    expect(splitHiddenText('room says hi [SAND_HIDDEN_PROMPT]tail')).toEqual([
      { hidden: false, text: 'room says hi' },
      { hidden: true, kind: 'hidden prompt', text: '[SAND_HIDDEN_PROMPT]tail' },
    ]);
    expect(splitHiddenText('[SAND_HIDDEN_PROMPT]<<SAND_AGENT_PROFILE_UPDATE {}>>')[0]).toMatchObject({
      kind: 'profile update',
    });
  });
  it('hides whole wakes and only the bracket of prefix wakes', () => {
    expect(splitHiddenText('[event]\nsomething happened')).toEqual([
      { hidden: true, kind: 'event', text: '[event]\nsomething happened' },
    ]);
    expect(splitHiddenText('[Group chat: "ops" - with bot]\nParticipants: a')[0]).toMatchObject({
      hidden: true,
      kind: 'group chat',
    });
    expect(splitHiddenText('[inbound] deploy please')).toEqual([
      { hidden: true, kind: 'inbound', text: '[inbound]' },
      { hidden: false, text: 'deploy please' },
    ]);
  });
  it('hides injected tags anywhere, including an unclosed one', () => {
    expect(splitHiddenText('a <instructions_update>x</instructions_update> b')).toEqual([
      { hidden: false, text: 'a' },
      { hidden: true, kind: 'instructions_update', text: '<instructions_update>x</instructions_update>' },
      { hidden: false, text: 'b' },
    ]);
    expect(splitHiddenText('<system_reminder>never closed')).toEqual([
      { hidden: true, kind: 'system_reminder', text: '<system_reminder>never closed' },
    ]);
  });
});

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
