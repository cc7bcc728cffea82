import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  decodeJsonlSendInput,
  decodeSendResult,
  fileNameFromUrl,
  markdownImage,
  parseMarkdownImage,
  sendResultError,
  sendResultSuccess,
  sendSuccessText,
  splitTrailingImages,
  summarizeSend,
  toJsonlSendInput,
  toStoredMessage,
} from './encoding.ts';
import { validateSendMessage } from './errors.ts';
import type { StoredAttachment, StoredMessage, StoredText } from './stored.ts';

function stored(input: unknown): StoredMessage {
  const result = validateSendMessage(input);
  if (!result.ok) throw new Error(result.message);
  return toStoredMessage(result.value);
}

/** input → stored → JSONL → decoded */
function hops(input: unknown) {
  const message = stored(input);
  const jsonl = toJsonlSendInput(message);
  // The transcript line is JSON: go through text as the file does.
  const decoded = decodeJsonlSendInput(JSON.parse(JSON.stringify(jsonl)));
  return { message, jsonl, decoded };
}

describe('toStoredMessage', () => {
  test('text', () => {
    expect(stored({ type: 'text', content: 'Hi', reply_to: 't0u' })).toEqual({
      type: 'text',
      content: 'Hi',
      reply_to: 't0u',
    });
  });

  test('attachment takes its file name from the URL, percent-decoded', () => {
    expect(stored({ type: 'attachment', url: 'file:///home/box/Q3%20report.pdf', alt: 'Q3' })).toEqual({
      type: 'attachment',
      url: 'file:///home/box/Q3%20report.pdf',
      file_name: 'Q3 report.pdf',
      alt: 'Q3',
    });
  });

  test('widget, cursor-agent and secret-request', () => {
    const widget = { prompt: 'Ship?', options: [{ label: 'Yes' }, { label: 'No', style: 'danger' }] };
    expect(stored({ type: 'widget', widget })).toEqual({ type: 'widget', widget });
    expect(stored({ type: 'cursor-agent', bcId: 'bc-9' })).toEqual({ type: 'cursor-agent', bcId: 'bc-9' });
    expect(
      stored({ type: 'secret-request', secret: { label: 'Slack', connector: 'slack', field: 'token' } }),
    ).toEqual({
      type: 'secret-request',
      secretRequest: {
        label: 'Slack',
        target: { kind: 'channel-credential', platform: 'slack', field: 'token' },
      },
    });
  });
});

describe('round trips: input → stored → JSONL → decoded', () => {
  test('text is lossless', () => {
    const { message, jsonl, decoded } = hops({ type: 'text', content: 'Research done.' });
    expect(jsonl).toEqual({ text: { content: 'Research done.' } });
    expect(decoded).toEqual(message);
  });

  test('text with images is lossless; images become markdown lines after a blank line', () => {
    const { message, jsonl, decoded } = hops({
      type: 'text',
      content: 'Two charts:',
      images: [{ url: 'file:///tmp/a.png', alt: 'revenue' }, { url: 'https://x.test/b.png' }],
    });
    expect(jsonl).toEqual({
      text: { content: 'Two charts:\n\n![revenue](file:///tmp/a.png)\n![](https://x.test/b.png)' },
    });
    expect(decoded).toEqual(message);
  });

  test('images without words are lossless', () => {
    const { message, jsonl, decoded } = hops({
      type: 'text',
      images: [{ url: 'https://x.test/b.png', alt: 'b' }],
    });
    expect(jsonl).toEqual({ text: { content: '\n\n![b](https://x.test/b.png)' } });
    expect(decoded).toEqual(message);
  });

  test('attachment is lossless', () => {
    const { message, jsonl, decoded } = hops({
      type: 'attachment',
      url: 'https://x.test/files/report.pdf',
      alt: 'Report',
    });
    expect(jsonl).toEqual({ attachment: { url: 'https://x.test/files/report.pdf', alt: 'Report' } });
    expect(decoded).toEqual(message);
  });

  test('attachment without alt writes no alt key', () => {
    expect(hops({ type: 'attachment', url: 'file:///tmp/x.csv' }).jsonl).toEqual({
      attachment: { url: 'file:///tmp/x.csv' },
    });
  });

  test('widget becomes its summary', () => {
    const { jsonl, decoded } = hops({
      type: 'widget',
      widget: { prompt: 'Which region?', options: [{ label: 'EU' }, { label: 'US' }, { label: 'Asia' }] },
    });
    expect(jsonl).toEqual({ text: { content: 'Which region? — EU / US / Asia' } });
    expect(decoded).toEqual({ type: 'text', content: 'Which region? — EU / US / Asia' });
  });

  test('cursor-agent becomes its summary, with and without a title', () => {
    expect(hops({ type: 'cursor-agent', bcId: 'bc-7', title: 'Fix flaky test' }).decoded).toEqual({
      type: 'text',
      content: 'Referenced Cursor cloud agent bc-7 (Fix flaky test)',
    });
    expect(hops({ type: 'cursor-agent', bcId: 'bc-7' }).jsonl).toEqual({
      text: { content: 'Referenced Cursor cloud agent bc-7' },
    });
  });

  test('secret-request becomes its summary', () => {
    const { jsonl, decoded } = hops({
      type: 'secret-request',
      secret: { label: 'OpenAI key', name: 'OPENAI_API_KEY' },
    });
    expect(jsonl).toEqual({ text: { content: 'Requested a secret from the user securely: OpenAI key' } });
    expect(decoded).toEqual({
      type: 'text',
      content: 'Requested a secret from the user securely: OpenAI key',
    });
  });
});

describe('summarizeSend', () => {
  test('a widget with an empty prompt is summarised as Question', () => {
    expect(
      summarizeSend({ type: 'widget', widget: { prompt: ' ', options: [{ label: 'A' }, { label: 'B' }] } }),
    ).toBe('Question — A / B');
  });

  test('a widget without options is its prompt', () => {
    expect(summarizeSend({ type: 'widget', widget: { prompt: 'Ready?', options: [] } })).toBe('Ready?');
  });
});

describe('markdown image lines', () => {
  test('alt brackets and backslashes are escaped and read back', () => {
    const line = markdownImage('https://x.test/a.png', 'see [1] \\ here');
    expect(line).toBe('![see \\[1\\] \\\\ here](https://x.test/a.png)');
    expect(parseMarkdownImage(line)).toEqual({ url: 'https://x.test/a.png', alt: 'see [1] \\ here' });
  });

  test('a URL with parentheses uses the angle form and reads back', () => {
    const url = 'https://en.wikipedia.org/wiki/Fish_(food)';
    expect(markdownImage(url)).toBe(`![](<${url}>)`);
    expect(parseMarkdownImage(markdownImage(url))).toEqual({ url });
  });

  test('a line break in an alt becomes a space (lossy, documented)', () => {
    expect(markdownImage('https://x.test/a.png', 'two\nlines')).toBe('![two lines](https://x.test/a.png)');
  });

  test('trailing image lines count only after a blank line', () => {
    expect(splitTrailingImages('see:\n![a](https://x.test/a.png)')).toEqual({
      content: 'see:\n![a](https://x.test/a.png)',
      images: [],
    });
    expect(splitTrailingImages('![a](https://x.test/a.png)')).toEqual({
      content: '![a](https://x.test/a.png)',
      images: [],
    });
    expect(splitTrailingImages('see:\n\n![a](https://x.test/a.png)')).toEqual({
      content: 'see:',
      images: [{ url: 'https://x.test/a.png', alt: 'a' }],
    });
  });
});

describe('decodeJsonlSendInput (C9: readers accept every known shape)', () => {
  test('encoder text shape, ignoring a toolCallId beside it (C2)', () => {
    expect(decodeJsonlSendInput({ text: { content: 'Hi.' }, toolCallId: 'call_1' })).toEqual({
      type: 'text',
      content: 'Hi.',
    });
  });

  test('encoder attachment shape', () => {
    expect(decodeJsonlSendInput({ attachment: { url: 'file:///home/box/out/plot.png' } })).toEqual({
      type: 'attachment',
      url: 'file:///home/box/out/plot.png',
      file_name: 'plot.png',
    });
  });

  test('flat typed stored payloads', () => {
    const widget = { prompt: 'Pick', options: [{ label: 'A' }] };
    expect(decodeJsonlSendInput({ type: 'widget', widget, toolCallId: 'c' })).toEqual({
      type: 'widget',
      widget,
    });
    expect(decodeJsonlSendInput({ type: 'cursor-agent', bcId: 'bc-1', title: 'T' })).toEqual({
      type: 'cursor-agent',
      bcId: 'bc-1',
      title: 'T',
    });
    const secretRequest = { label: 'k', target: { kind: 'env', name: 'K' } };
    expect(decodeJsonlSendInput({ type: 'secret-request', secretRequest })).toEqual({
      type: 'secret-request',
      secretRequest,
    });
  });

  test('flat model-input payloads', () => {
    expect(decodeJsonlSendInput({ type: 'secret-request', secret: { label: 'k', name: 'K' } })).toEqual({
      type: 'secret-request',
      secretRequest: { label: 'k', target: { kind: 'env', name: 'K' } },
    });
  });

  test('the early {content, to, attachments} shape', () => {
    expect(decodeJsonlSendInput({ content: 'Here you go', to: 'dm' })).toEqual({
      type: 'text',
      content: 'Here you go',
    });
    expect(
      decodeJsonlSendInput({
        content: 'Files',
        to: 'dm',
        attachments: [{ url: 'https://x.test/a.png' }, { url: 'https://x.test/b.pdf' }],
      }),
    ).toEqual({
      type: 'text',
      content: 'Files\n\n[b.pdf](https://x.test/b.pdf)',
      images: [{ url: 'https://x.test/a.png' }],
    });
    expect(decodeJsonlSendInput({ to: 'dm', attachments: [{ url: 'https://x.test/b.pdf' }] })).toEqual({
      type: 'attachment',
      url: 'https://x.test/b.pdf',
      file_name: 'b.pdf',
    });
  });

  test('anything else is undefined, never a throw', () => {
    for (const input of [
      null,
      'text',
      3,
      [],
      {},
      { type: 'poll' },
      { text: { content: 5 } },
      { attachment: { url: '' } },
    ]) {
      expect(decodeJsonlSendInput(input)).toBeUndefined();
    }
  });
});

describe('property: stored text and attachment survive stored → JSONL → decoded', () => {
  const url = fc.oneof(
    fc.webUrl({ withQueryParameters: true, withFragments: true }).map((u) => u.replace(/^http:/, 'https:')),
    fc
      .array(fc.stringMatching(/^[A-Za-z0-9._()%\\-]{1,12}$/), { minLength: 1, maxLength: 4 })
      .map((parts) => `file:///${parts.join('/')}`),
  );
  const alt = fc.option(
    fc.string({ minLength: 1, maxLength: 30 }).filter((s) => !/[\r\n]/.test(s)),
    { nil: undefined },
  );
  const image = fc
    .record({ url, alt })
    .map(({ url: u, alt: a }) => (a === undefined ? { url: u } : { url: u, alt: a }));

  test('text (the only ambiguity: a message without images whose tail is already image lines)', () => {
    const text = fc
      .record({ content: fc.string({ maxLength: 80 }), images: fc.array(image, { maxLength: 4 }) })
      .filter(({ content, images }) => images.length > 0 || splitTrailingImages(content).images.length === 0)
      .map(({ content, images }): StoredText =>
        images.length > 0 ? { type: 'text', content, images } : { type: 'text', content },
      );
    fc.assert(
      fc.property(text, (message) => {
        const line = JSON.parse(JSON.stringify(toJsonlSendInput(message))) as unknown;
        expect(decodeJsonlSendInput(line)).toEqual(message);
      }),
      { numRuns: 500 },
    );
  });

  test('attachment (file_name as the reader derives it from the URL)', () => {
    const attachment = fc.record({ url, alt }).map(({ url: u, alt: a }): StoredAttachment => {
      const fileName = fileNameFromUrl(u);
      return {
        type: 'attachment',
        url: u,
        ...(fileName === undefined ? {} : { file_name: fileName }),
        ...(a === undefined ? {} : { alt: a }),
      };
    });
    fc.assert(
      fc.property(attachment, (message) => {
        const line = JSON.parse(JSON.stringify(toJsonlSendInput(message))) as unknown;
        expect(decodeJsonlSendInput(line)).toEqual(message);
      }),
      { numRuns: 300 },
    );
  });
});

describe('results', () => {
  test('success carries the timestamp as an epoch-ms string (C10)', () => {
    expect(sendResultSuccess('t0s0', 1788485400095)).toEqual({
      success: { timestamp: '1788485400095', messageId: 't0s0' },
    });
    expect(() => sendResultSuccess('t0s0', 1.5)).toThrow(RangeError);
  });

  test('error and the model-facing success text', () => {
    expect(sendResultError('blocked')).toEqual({ error: { error: 'blocked' } });
    expect(sendSuccessText('t3s1')).toBe('Message sent to user. (id: t3s1)');
  });

  test('decodeSendResult reads string, number and ISO timestamps (C10)', () => {
    expect(decodeSendResult({ success: { timestamp: '1788485400095', messageId: 'tbs0' } })).toEqual({
      ok: true,
      messageId: 'tbs0',
      timestampMs: 1788485400095,
    });
    expect(decodeSendResult({ success: { timestamp: 1788485400095 } })).toEqual({
      ok: true,
      messageId: undefined,
      timestampMs: 1788485400095,
    });
    expect(decodeSendResult({ success: { timestamp: '2026-09-10T12:00:00Z', messageId: 't0s0' } })).toEqual({
      ok: true,
      messageId: 't0s0',
      timestampMs: Date.parse('2026-09-10T12:00:00Z'),
    });
    expect(decodeSendResult({ success: { messageId: 't0s0' } })).toEqual({
      ok: true,
      messageId: 't0s0',
      timestampMs: undefined,
    });
    expect(decodeSendResult({ error: { error: 'nope' } })).toEqual({ ok: false, error: 'nope' });
    expect(decodeSendResult({ error: 'nope' })).toEqual({ ok: false, error: 'nope' });
    expect(decodeSendResult('x')).toBeUndefined();
  });
});
