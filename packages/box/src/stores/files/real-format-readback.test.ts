/**
 * A box-written JSONL read back as a real-format reader reads a Grok Bot file: user records are
 * what the user typed (after the `[tNu]` tag), hidden prompts and wakes are not the user's words,
 * and nothing else is a user message. It must hold for every bubble type, both reminders, a widget
 * answer and a saved secret. The reader is the project's own (grok_bot codec + splitHiddenText).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { grokBot, splitHiddenText } from '@sendbox/txcript';
import { afterEach, describe, expect, it } from 'vitest';
import { hostFixture, type HostFixture } from '../../testing/host-fixture.ts';

let fx: HostFixture | undefined;
afterEach(async () => {
  await fx?.dispose();
  fx = undefined;
});

const send = (input: Record<string, unknown>) => ({ name: 'send_message', input });
const shell = { name: 'shell', input: { command: 'true' } };

async function everyBubble(): Promise<HostFixture> {
  const f = await hostFixture([], { sendReminderEvery: 2 });
  await writeFile(path.join(f.sandbox, 'chart.png'), 'png-bytes');
  f.model.push(
    { text: 'let me think' }, // text only: the text-only reminder
    { toolCalls: [shell] },
    { toolCalls: [shell] }, // two calls without a send: the non-send reminder
    {
      toolCalls: [
        send({
          type: 'text',
          content: 'Chart:',
          images: [{ url: `file://${f.sandbox}/chart.png`, alt: 'c' }],
        }),
        send({ type: 'attachment', url: `file://${f.sandbox}/chart.png` }),
        send({ type: 'cursor-agent', bcId: 'bc-7', title: 'Refactor' }),
        send({
          type: 'widget',
          widget: { prompt: 'Ship it?', options: [{ label: 'Yes', value: 'y' }, { label: 'No' }] },
        }),
      ],
    },
    {
      toolCalls: [send({ type: 'secret-request', secret: { label: 'Deploy token', name: 'DEPLOY_TOKEN' } })],
    },
    { toolCalls: [send({ type: 'text', content: 'Deployed.' })] },
    {},
    { toolCalls: [send({ type: 'text', content: 'Sure.' })] },
    {},
  );
  await f.prompt('make me a chart');
  await f.host.answerWidget({ agentId: f.agentId, messageId: 't0s3', answer: 'Yes' });
  await f.host.idle(f.agentId);
  await f.host.submitSecret({ agentId: f.agentId, messageId: 't1s0', value: 'tok-123-secret' });
  await f.host.idle(f.agentId);
  await f.host.uploadFile({
    agentId: f.agentId,
    fileName: 'notes.txt',
    bytes: new TextEncoder().encode('n'),
  });
  await f.prompt('and  a  second\nline  exactly');
  return f;
}

describe('a box JSONL read as a real Grok Bot file', () => {
  it('holds the user text exactly as typed and no extra user messages', async () => {
    fx = await everyBubble();
    const text = await fx.jsonlText();
    const records = grokBot.text.parse(text, 'x.jsonl').records;
    const userRecords = records.filter((r) => r.kind === 'record' && r.json.role === 'user');
    // One user record per turn: two prompts, the widget answer, the saved secret. No reminder records.
    expect(userRecords).toHaveLength(4);
    const transcript = grokBot.codec.toCommon(records, { sessionId: fx.agentId });
    const visible = transcript.messages
      .filter((m) => m.role === 'user')
      .flatMap((m) => m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])))
      .map((t) =>
        splitHiddenText(t)
          .filter((s) => !s.hidden)
          .map((s) => s.text),
      );
    expect(visible).toEqual([
      ['make me a chart'],
      ['Yes'], // the label the user clicked, after the answer's bracket
      [], // the saved secret: only the host's words, all hidden
      ['and  a  second\nline  exactly'],
    ]);
    // Nothing the host injects is written: no guidance, no reminders, no secret.
    expect(text).not.toContain('system_reminder');
    expect(text).not.toContain('Talking to the user');
    expect(text).not.toContain('tool calls in a row');
    expect(text).not.toContain('plain text only');
    expect(text).not.toContain('tok-123-secret');
    expect(text).toContain('[SAND_HIDDEN_PROMPT]The user saved the secret.');
    // The upload note after the last prompt is the host's too.
    expect(text).toContain('[SAND_HIDDEN_PROMPT][The user attached a file: ');
  });

  it('the model still read the guidance and both reminders', async () => {
    fx = await everyBubble();
    const seen = JSON.stringify(fx.model.requests.map((r) => r.messages));
    expect(seen).toContain('Talking to the user');
    expect(seen).toContain('2 tool calls in a row');
    expect(seen).toContain('plain text only');
    expect(seen).toContain(
      'The user saved the secret. Your tools receive it as the environment variable DEPLOY_TOKEN',
    );
  });
});
