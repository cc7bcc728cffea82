import { toJsonlSendInput, toStoredMessage, validateSendMessage } from '@sendbox/protocol';
import type { JsonObject } from '@sendbox/txcript';
import { describe, expect, it } from 'vitest';
import { sendInputAsRead } from './send-input.ts';

/** The JSONL input and the ledger's stored form of what the model sent, as the box writes them. */
function written(input: unknown): { jsonl: JsonObject; stored: unknown } {
  const checked = validateSendMessage(input);
  if (!checked.ok) throw new Error(checked.message);
  const stored = toStoredMessage(checked.value);
  return { jsonl: { ...(toJsonlSendInput(stored) as unknown as JsonObject), toolCallId: 'c1' }, stored };
}

describe('sendInputAsRead', () => {
  it('gives a text send back as the model sent it, images and reply_to included', () => {
    const sent = {
      type: 'text',
      content: 'Here it is.',
      images: [{ url: 'file:///sandbox/chart.png', alt: 'chart' }],
      reply_to: 't2u',
    };
    const { jsonl, stored } = written(sent);
    expect(jsonl).toEqual({
      text: { content: 'Here it is.\n\n![chart](file:///sandbox/chart.png)' },
      toolCallId: 'c1',
    });
    expect(sendInputAsRead(jsonl, stored)).toEqual(sent);
    // Without its ledger entry (a refused send) the reply_to is gone; the rest is still the model's form.
    expect(sendInputAsRead(jsonl)).toEqual({ type: 'text', content: 'Here it is.', images: sent.images });
  });

  it('takes a widget whole from the ledger (the JSONL keeps only its summary)', () => {
    const sent = {
      type: 'widget',
      widget: { prompt: 'Which colour?', options: [{ label: 'Red', value: 'red' }, { label: 'Blue' }] },
    };
    const { jsonl, stored } = written(sent);
    expect(sendInputAsRead(jsonl, stored)).toEqual(sent);
    expect(sendInputAsRead(jsonl)).toEqual({ type: 'text', content: 'Which colour? — Red / Blue' });
  });

  it('reads an attachment and a secret request in the model form, and keeps input it cannot decode', () => {
    const attachment = written({ type: 'attachment', url: 'file:///sandbox/report.pdf', alt: 'Report' });
    expect(sendInputAsRead(attachment.jsonl, attachment.stored)).toEqual({
      type: 'attachment',
      url: 'file:///sandbox/report.pdf',
      alt: 'Report',
    });
    for (const secret of [
      { label: 'GitHub token', name: 'GITHUB_TOKEN' },
      { label: 'Slack bot token', description: 'For the daily post', connector: 'slack', field: 'botToken' },
    ]) {
      const sent = { type: 'secret-request', secret };
      const { jsonl, stored } = written(sent);
      expect(sendInputAsRead(jsonl, stored)).toEqual(sent);
    }
    expect(sendInputAsRead({ nonsense: 1, toolCallId: 'c9' })).toEqual({ nonsense: 1 });
  });
});
