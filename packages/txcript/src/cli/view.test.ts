import pc from 'picocolors';
import { describe, expect, it } from 'vitest';
import type { Message, Transcript } from '../model/common.ts';
import { resultText, renderView } from './view.ts';

const plain = pc.createColors(false);
const T = '2026-09-10T12:00:00Z';

function transcript(messages: Array<Omit<Message, 'timestamp'>>, title = 'Demo'): Transcript {
  return {
    meta: { id: 'sess-1', timestamp: T, title },
    messages: messages.map((m, i) => ({ ...m, timestamp: `2026-09-10T12:00:0${i}Z` })),
  };
}

const codingSession = transcript([
  { role: 'user', content: [{ type: 'text', text: 'list files' }] },
  {
    role: 'assistant',
    content: [
      { type: 'text', text: 'Looking.' },
      { type: 'tool_use', id: 'c1', tool: { name: 'Bash', command: 'ls -la' } },
      {
        type: 'tool_use',
        id: 'c2',
        tool: { name: 'Raw', tool_name: 'web_fetch', input: { url: 'https://x.test' } },
      },
    ],
  },
  {
    role: 'user',
    content: [
      { type: 'tool_result', tool_use_id: 'c1', content: 'a\nb\nc\nd\ne\nf\ng\n' },
      { type: 'tool_result', tool_use_id: 'c2', content: { error: { error: 'offline' } }, is_error: true },
    ],
  },
  { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
]);

describe('renderView', () => {
  it('prints a header and every message under a numbered rule with role and time', () => {
    const out = renderView(codingSession, { harness: 'simple', colors: plain });
    expect(out.split('\n').slice(0, 4)).toEqual([
      'Demo',
      `sess-1 · simple · 4 messages · started ${T}`,
      '',
      '── #1 · user · 2026-09-10T12:00:00Z ──',
    ]);
    expect(out).toContain('── #3 · tool · 2026-09-10T12:00:02Z ──');
    expect(out).toContain('── #4 · assistant · 2026-09-10T12:00:03Z ──\nDone.\n');
  });

  it('prints no time for a message whose source gives none, and no start for an epoch session', () => {
    const out = renderView(codingSession, { harness: 'simple', colors: plain, untimed: new Set([1, 2]) });
    expect(out).toContain('── #1 · user · 2026-09-10T12:00:00Z ──');
    expect(out).toContain('── #2 · assistant ──');
    expect(out).toContain('── #3 · tool ──');
    const epoch = {
      ...codingSession,
      meta: { ...codingSession.meta, timestamp: '1970-01-01T00:00:00.000Z' },
    };
    expect(renderView(epoch, { harness: 'simple', colors: plain }).split('\n')[1]).toBe(
      'sess-1 · simple · 4 messages',
    );
  });

  it('shows tool calls on one line and cuts long results', () => {
    const out = renderView(codingSession, { harness: 'simple', colors: plain });
    expect(out).toContain('Looking.\n→ Bash: ls -la\n→ web_fetch: https://x.test\n');
    expect(out).toContain('← a\n  b\n  c\n  d\n  e\n  … 2 more lines\n');
    expect(out).toContain('✗ error: offline\n');
  });

  it('keeps the session numbering for a range and says what is shown', () => {
    const out = renderView(codingSession, {
      harness: 'simple',
      colors: plain,
      selection: { start: 3, end: 4 },
    });
    expect(out).toContain('showing #4 of 4');
    expect(out).toContain('── #4 · assistant');
    expect(out).not.toContain('── #1');
  });

  it('colours only when asked', () => {
    const coloured = renderView(codingSession, { harness: 'simple', colors: pc.createColors(true) });
    expect(coloured).toContain('\u001b[');
    expect(renderView(codingSession, { harness: 'simple', colors: plain })).not.toContain('\u001b[');
  });
});

describe('renderView for Grok Bot sessions (C1, C5)', () => {
  const grok = transcript([
    {
      role: 'user',
      content: [
        { type: 'text', text: 'What is up?\n\n<system_reminder>\nUse SendMessage.\n</system_reminder>' },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'User asks. I will answer.' },
        {
          type: 'tool_use',
          id: 's1',
          tool: { name: 'Raw', tool_name: 'send_message', input: { text: { content: 'All good!' } } },
        },
        {
          type: 'tool_use',
          id: 's2',
          tool: {
            name: 'Raw',
            tool_name: 'send_message',
            input: { type: 'text', content: 'Look:', images: [{ url: 'file:///a.png', alt: 'chart' }] },
          },
        },
        {
          type: 'tool_use',
          id: 's3',
          tool: { name: 'Raw', tool_name: 'send_message', input: { attachment: { url: 'file:///r.pdf' } } },
        },
        {
          type: 'tool_use',
          id: 's4',
          tool: {
            name: 'Raw',
            tool_name: 'send_message',
            input: {
              type: 'widget',
              widget: { prompt: 'Pick one', options: [{ label: 'Red' }, { label: 'Blue' }] },
            },
          },
        },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 's1', content: { success: { messageId: 't0s0' } } },
        {
          type: 'tool_result',
          tool_use_id: 's2',
          content: { error: { error: 'waiting on the user' } },
          is_error: true,
        },
      ],
    },
    {
      role: 'user',
      content: [{ type: 'text', text: '[SAND_HIDDEN_PROMPT][routine] check the inbox\nstep 2' }],
    },
    { role: 'user', content: [{ type: 'text', text: '[Answering your question t0s3: "Pick one"] Blue' }] },
  ]);
  const out = renderView(grok, { harness: 'grok_bot', colors: plain });

  it('shows send_message content as the reply and assistant text as thinking', () => {
    expect(out).toContain(
      [
        'thinking: User asks. I will answer.',
        'All good!',
        'Look:',
        '[image: file:///a.png "chart"]',
        '[attachment: file:///r.pdf]',
        'Pick one',
        '[choices: [Red] [Blue]]',
      ].join('\n'),
    );
    expect(out).not.toContain('→ send_message');
  });

  it('echoes no delivered reply but marks a refused one', () => {
    expect(out).toContain('← delivered\n✗ not delivered: waiting on the user\n');
  });

  it('marks hidden prompts, reminders and wakes', () => {
    expect(out).toContain('What is up?\n(hidden: system_reminder) <system_reminder> … 2 more lines\n');
    expect(out).toContain('(hidden: routine) [SAND_HIDDEN_PROMPT][routine] check the inbox … 1 more line\n');
    expect(out).toContain(
      '(hidden: answering a question) [Answering your question t0s3: "Pick one"]\nBlue\n',
    );
  });

  it('reads other harnesses literally: text is text, send_message a tool call', () => {
    const literal = renderView(grok, { harness: 'simple', colors: plain });
    expect(literal).toContain('User asks. I will answer.\n→ send_message:');
    expect(literal).not.toContain('(hidden');
  });
});

describe('resultText', () => {
  it('opens result envelopes and joins known text fields', () => {
    expect(resultText({ success: { stdout: 'out', exitCode: 0 } })).toBe('out');
    expect(resultText({ failure: { stdout: '', stderr: 'boom' }, isBackground: false })).toBe('boom');
    expect(resultText({ success: { content: [{ text: 'one' }, { text: 'two' }] } })).toBe('one\ntwo');
    expect(resultText({ success: { messageId: 'x' } })).toBe('{"messageId":"x"}');
    expect(resultText(null)).toBe('');
  });
});
