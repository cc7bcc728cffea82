import { describe, expect, test } from 'vitest';
import { validateSendMessage } from './errors.ts';
import {
  FIELD_OWNER,
  fieldsOf,
  sendMessageInputSchema,
  toSendMessageRequest,
  type SendMessageInput,
} from './send-message-input.ts';
import { SEND_MESSAGE_TYPES } from './stored.ts';

function issuePaths(input: unknown): (string | number)[][] {
  const result = sendMessageInputSchema.safeParse(input);
  if (result.success) return [];
  return result.error.issues.map((issue) =>
    issue.path.map((key) => (typeof key === 'symbol' ? String(key) : key)),
  );
}

describe('sendMessageInputSchema', () => {
  test('cross-field issues carry the precise path of the field to fix', () => {
    expect(issuePaths({ type: 'attachment', url: 'ftp://x' })).toEqual([['url']]);
    expect(issuePaths({ type: 'text', images: [{ url: 'https://a.test/x.png' }, { url: 'x.png' }] })).toEqual(
      [['images', 1, 'url']],
    );
    expect(issuePaths({ type: 'secret-request', secret: { label: 'k', connector: 'slack' } })).toEqual([
      ['secret', 'field'],
    ]);
    expect(
      issuePaths({ type: 'widget', widget: { prompt: 'Q', options: [{ label: 'a' }, { label: 'A' }] } }),
    ).toEqual([['widget', 'options', 1, 'label']]);
    expect(
      issuePaths({ type: 'text', content: 'x', widget: { prompt: 'Q', options: [{ label: 'a' }] } }),
    ).toEqual([['widget']]);
  });

  test('strings are trimmed', () => {
    const parsed = sendMessageInputSchema.parse({ type: 'text', content: '  hello \n', reply_to: ' t1u ' });
    expect(parsed).toEqual({ type: 'text', content: 'hello', reply_to: 't1u' });
  });

  test('every type is accepted in its minimal valid form', () => {
    const minimal: Record<(typeof SEND_MESSAGE_TYPES)[number], unknown> = {
      text: { type: 'text', content: 'hi' },
      attachment: { type: 'attachment', url: 'file:///tmp/a.pdf' },
      widget: { type: 'widget', widget: { prompt: 'Q', options: [{ label: 'a' }] } },
      'cursor-agent': { type: 'cursor-agent', bcId: 'bc-1' },
      'secret-request': { type: 'secret-request', secret: { label: 'k', name: 'K' } },
    };
    for (const type of SEND_MESSAGE_TYPES)
      expect(sendMessageInputSchema.safeParse(minimal[type]).success).toBe(true);
  });

  test('each field belongs to exactly one type, and every type owns at least one field', () => {
    const owned = SEND_MESSAGE_TYPES.flatMap((type) => fieldsOf(type));
    expect(owned.sort()).toEqual(Object.keys(FIELD_OWNER).sort());
    for (const type of SEND_MESSAGE_TYPES) expect(fieldsOf(type).length).toBeGreaterThan(0);
  });
});

describe('toSendMessageRequest', () => {
  function request(input: unknown) {
    const result = validateSendMessage(input);
    if (!result.ok) throw new Error(result.message);
    return result.value;
  }

  test('text keeps content, images and reply_to; empty optionals and empty fields of other types are dropped', () => {
    expect(
      request({
        type: 'text',
        content: 'Look',
        images: [
          { url: 'https://a.test/x.png', alt: '' },
          { url: 'file:///tmp/y.png', alt: ' chart ' },
        ],
        reply_to: 't2u',
        url: '',
      }),
    ).toEqual({
      type: 'text',
      content: 'Look',
      images: [{ url: 'https://a.test/x.png' }, { url: 'file:///tmp/y.png', alt: 'chart' }],
      reply_to: 't2u',
    });
  });

  test('text with images only has empty content', () => {
    expect(request({ type: 'text', images: [{ url: 'https://a.test/x.png' }] })).toEqual({
      type: 'text',
      content: '',
      images: [{ url: 'https://a.test/x.png' }],
    });
  });

  test('attachment', () => {
    expect(request({ type: 'attachment', url: 'file:///tmp/a.pdf', alt: 'Q3 report' })).toEqual({
      type: 'attachment',
      url: 'file:///tmp/a.pdf',
      alt: 'Q3 report',
    });
  });

  test('widget keeps its options and flags', () => {
    const widget = {
      prompt: 'Deploy?',
      helpText: 'Staging is green.',
      options: [
        { label: 'Yes', value: 'deploy', style: 'primary' },
        { label: 'No', description: 'wait a day' },
      ],
      allowCustom: true,
      multiSelect: false,
    };
    expect(request({ type: 'widget', widget })).toEqual({ type: 'widget', widget });
  });

  test('cursor-agent', () => {
    expect(request({ type: 'cursor-agent', bcId: 'bc-42', title: 'Fix CI' })).toEqual({
      type: 'cursor-agent',
      bcId: 'bc-42',
      title: 'Fix CI',
    });
  });

  test('secret-request resolves its target: env name, or connector + field', () => {
    expect(
      request({ type: 'secret-request', secret: { label: 'GitHub token', name: 'GITHUB_TOKEN' } }),
    ).toEqual({
      type: 'secret-request',
      secret: { label: 'GitHub token', target: { kind: 'env', name: 'GITHUB_TOKEN' } },
    });
    expect(
      request({
        type: 'secret-request',
        secret: { label: 'Slack bot token', description: 'to post', connector: 'slack', field: 'bot_token' },
      }),
    ).toEqual({
      type: 'secret-request',
      secret: {
        label: 'Slack bot token',
        description: 'to post',
        target: { kind: 'channel-credential', platform: 'slack', field: 'bot_token' },
      },
    });
  });

  test('an input that skipped validation is a programming error, thrown', () => {
    const unvalidated = { type: 'attachment' } as SendMessageInput;
    expect(() => toSendMessageRequest(unvalidated)).toThrow(/without `url`: validate it first/);
  });
});
