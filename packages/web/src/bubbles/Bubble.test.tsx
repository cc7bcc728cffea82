import { SEND_MESSAGE_TYPES } from '@sendbox/protocol';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { createApiClient } from '../api/client.ts';
import { parseEntry, type TranscriptEntry } from '../api/types.ts';
import { ConversationContext } from '../conversation-context.ts';
import { Bubble } from './Bubble.tsx';

const context = {
  client: createApiClient({
    baseUrl: 'http://127.0.0.1:9',
    fetch: () => Promise.reject(new Error('offline')),
  }),
  agentId: 'a1',
  readOnly: false,
  openLightbox: () => undefined,
  cursorAgentUrl: 'https://cursor.example/agents/{bcId}',
  focusComposer: () => undefined,
  secretRequestsNotHeld: new Set<string>(),
};

function entry(raw: Record<string, unknown>): TranscriptEntry {
  const parsed = parseEntry({ timestampMs: 0, seq: 1, ...raw });
  if (!parsed) throw new Error('bad fixture');
  return parsed;
}

function render(e: TranscriptEntry, answer?: string, readOnly = false, skipped = false): string {
  return renderToStaticMarkup(
    <ConversationContext.Provider value={{ ...context, readOnly }}>
      <Bubble entry={e} answer={answer} skipped={skipped} />
    </ConversationContext.Provider>,
  );
}

const text = (content: string, extra: Record<string, unknown> = {}) =>
  entry({ id: 't1s0', kind: 'send-message', message: { type: 'text', content, ...extra } });

const widget = (multiSelect = false) =>
  entry({
    id: 't1s1',
    kind: 'send-message',
    message: {
      type: 'widget',
      widget: {
        prompt: 'Pick',
        options: [{ label: 'Yes', value: 'y' }, { label: 'No' }],
        allowCustom: true,
        multiSelect,
      },
    },
  });

const secret = entry({
  id: 't1s2',
  kind: 'send-message',
  message: {
    type: 'secret-request',
    secretRequest: { label: 'API key', target: { kind: 'env', name: 'API_KEY' } },
  },
});

describe('Bubble', () => {
  it('tags every bubble with its entry id, kind and send type', () => {
    const samples: Record<string, Record<string, unknown>> = {
      text: { type: 'text', content: 'hi' },
      attachment: { type: 'attachment', url: 'https://example.com/a.pdf', file_name: 'a.pdf', size: 2048 },
      widget: { type: 'widget', widget: { prompt: 'q', options: [{ label: 'a' }] } },
      'cursor-agent': { type: 'cursor-agent', bcId: 'bc-9', title: 'Fix it' },
      'secret-request': secret.kind === 'send-message' ? secret.message : {},
    };
    for (const type of SEND_MESSAGE_TYPES) {
      const html = render(entry({ id: `s-${type}`, kind: 'send-message', message: samples[type] }));
      expect(html).toContain(`data-entry-id="s-${type}"`);
      expect(html).toContain('data-kind="send-message"');
      expect(html).toContain(`data-type="${type}"`);
    }
  });

  it('renders nothing for hidden user messages and turn ends', () => {
    expect(
      render(entry({ id: 'h', kind: 'message', role: 'user', content: 'secret guidance', hidden: true })),
    ).toBe('');
    expect(render(entry({ id: 'e', kind: 'turn-ended' }))).toBe('');
  });

  it('renders Markdown without raw HTML and with safe links only', () => {
    const html = render(
      text(
        '**bold** <img src=x onerror=alert(1)> [ok](https://example.com) [bad](javascript:alert(1)) [back](sand-msg:t0u)',
      ),
    );
    expect(html).toContain('<strong>bold</strong>');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).not.toContain('<img src="x"');
    expect(html).toContain('<a href="https://example.com/" target="_blank" rel="noopener noreferrer">ok</a>');
    expect(html).not.toContain('javascript:');
    expect(html).toContain('<span class="link-blocked">bad</span>');
    expect(html).toContain('href="#msg-t0u"');
  });

  it('shows text images as a grid with the alt text as hover text', () => {
    const pixel = 'data:image/png;base64,iVBORw0KGgo=';
    const html = render(text('see', { images: [{ url: pixel, alt: 'A chart' }] }));
    expect(html).toContain('data-testid="image-grid"');
    expect(html).toMatch(/<img[^>]*alt="A chart"[^>]*title="A chart"/);
  });

  it('shows a remote image (images[], Markdown, attachment) as a placeholder naming its host, never as <img>', () => {
    const messages = [
      text('see', { images: [{ url: 'https://beacon.example/a.png?leak=1', alt: 'A chart' }] }),
      text('look ![A chart](https://beacon.example/a.png?leak=1) here'),
      entry({
        id: 'att',
        kind: 'send-message',
        message: {
          type: 'attachment',
          url: 'https://beacon.example/a.png?leak=1',
          file_name: 'a.png',
          media_type: 'image/png',
        },
      }),
    ];
    for (const message of messages) {
      const html = render(message);
      expect(html).not.toMatch(/<img[^>]*beacon\.example/);
      expect(html).toMatch(/data-testid="remote-image"[^>]*data-host="beacon.example"/);
      expect(html).toContain('Image from <strong>beacon.example</strong>');
      expect(html).toContain('data-testid="remote-image-load"');
      expect(html).toContain('Always load from beacon.example');
    }
  });

  it('shows a file card with name, size and media type', () => {
    const html = render(
      entry({
        id: 'att',
        kind: 'send-message',
        message: {
          type: 'attachment',
          url: 'file:///x/attachments/' + 'a'.repeat(64) + '.xlsx',
          file_name: 'budget.xlsx',
          size: 10_240,
          sha256: 'a'.repeat(64),
          media_type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
        },
      }),
    );
    expect(html).toContain('budget.xlsx');
    expect(html).toContain('10 KB');
    expect(html).toContain('data-testid="file-preview-toggle"');
    expect(html).toContain('data-testid="file-download"');
  });

  it('offers widget options until answered, then disables them and marks the choice', () => {
    const open = render(widget());
    expect(open.match(/data-testid="widget-option"/g)).toHaveLength(2);
    expect(open).not.toMatch(/data-testid="widget-option"[^>]*disabled/);
    expect(open).toContain('data-testid="widget-custom-input"');

    const answered = render(widget(), 'y');
    expect(answered.match(/<button[^>]*data-testid="widget-option"[^>]*disabled=""/g)).toHaveLength(2);
    expect(answered).toMatch(/aria-pressed="true"[^>]*disabled=""[^>]*>.*Yes/);
    expect(answered).toContain('Answered: Yes');
    // Grok Bot's shape stores the label: the same option is marked.
    expect(render(widget(), 'Yes')).toMatch(/class="[^"]*chosen[^"]*"[^>]*aria-pressed="true"[^>]*>.*Yes/);
    expect(answered).not.toContain('widget-custom-input');
  });

  it('shows a skipped widget disabled, without the free-text answer; an answer still wins', () => {
    const html = render(widget(), undefined, false, true);
    expect(html).toContain('data-skipped="true"');
    expect(html.match(/<button[^>]*data-testid="widget-option"[^>]*disabled=""/g)).toHaveLength(2);
    expect(html).toContain('data-testid="widget-skipped"');
    expect(html).not.toContain('widget-custom-input');
    const answered = render(widget(), 'y', false, true);
    expect(answered).toContain('Answered: Yes');
    expect(answered).not.toContain('widget-skipped');
    expect(render(widget())).toContain('data-skipped="false"');
  });

  it('styles a primary option without marking it chosen', () => {
    const primary = entry({
      id: 't1s3',
      kind: 'send-message',
      message: {
        type: 'widget',
        widget: { prompt: 'Go?', options: [{ label: 'Go', style: 'primary' }, { label: 'Wait' }] },
      },
    });
    const html = render(primary);
    expect(html).toContain('style-primary');
    expect(html).not.toContain('aria-pressed="true"');
    expect(html).not.toMatch(/class="[^"]*chosen/);
  });

  it('renders multi-select widgets as checkboxes with a submit', () => {
    const html = render(widget(true));
    expect(html.match(/type="checkbox"/g)).toHaveLength(2);
    expect(html).toContain('data-testid="widget-submit"');
    const answered = render(widget(true), 'y\nNo');
    expect(answered.match(/checked=""/g)).toHaveLength(2);
  });

  it('asks for a secret in a masked field with autocomplete off, and only says "Saved" after', () => {
    const html = render(secret);
    expect(html).toMatch(/<input[^>]*type="password"[^>]*autoComplete="off"[^>]*data-testid="secret-input"/i);
    expect(html).not.toContain('value=');
    expect(html).toContain('environment variable API_KEY');
    const saved = render(secret, 'Secret saved');
    expect(saved).toContain('Saved: API key');
    expect(saved).not.toContain('secret-input');
  });

  it('disables answering in a read-only agent', () => {
    expect(render(widget(), undefined, true)).toMatch(/data-testid="widget-option"[^>]*disabled=""/);
    expect(render(secret, undefined, true)).toMatch(/data-testid="secret-input"[^>]*disabled=""/);
  });

  it('renders tool calls, notices, thinking and cursor-agent cards compactly', () => {
    expect(
      render(entry({ id: 'c', kind: 'tool-call', name: 'shell', status: 'success', summary: 'ls' })),
    ).toContain('<code class="tool-name">shell</code>');
    expect(render(entry({ id: 'n', kind: 'notice', text: 'Model switched' }))).toContain('Model switched');
    expect(render(entry({ id: 'k', kind: 'thinking', text: 'hmm' }))).toContain('hmm');
    // Where the model's memory was summarised: a thin separator, not a notice line.
    const marker = render(
      entry({ id: 'm', kind: 'notice', text: 'The model\u2019s memory…', reason: 'context-summarized' }),
    );
    expect(marker).toContain('data-testid="context-marker"');
    expect(marker).toContain('role="separator"');
    expect(render(entry({ id: 'n2', kind: 'notice', text: 'x' }))).not.toContain('context-marker');
    const card = render(
      entry({ id: 'ca', kind: 'send-message', message: { type: 'cursor-agent', bcId: 'bc-7', title: 'T' } }),
    );
    expect(card).toContain('bc-7');
    expect(card).toContain('>T<');
  });

  it('shows user text as typed, never as Markdown', () => {
    const html = render(entry({ id: 'u', kind: 'message', role: 'user', content: '**not bold** <b>x</b>' }));
    expect(html).toContain('**not bold** &lt;b&gt;x&lt;/b&gt;');
    expect(html).toContain('data-role="user"');
  });

  it('makes the cursor-agent card a link from its bcId and the configured template', () => {
    const card = render(
      entry({
        id: 'ca',
        kind: 'send-message',
        message: { type: 'cursor-agent', bcId: 'bc 7/x', title: 'T' },
      }),
    );
    expect(card).toMatch(/<a class="cursor-agent-card" href="https:\/\/cursor\.example\/agents\/bc%207%2Fx"/);
    expect(card).toContain('rel="noopener noreferrer"');
  });

  it("shows an image's alt as its caption, and an attachment's alt under its file card", () => {
    const html = render(
      text('see', { images: [{ url: 'data:image/png;base64,iVBORw0KGgo=', alt: 'A chart' }] }),
    );
    expect(html).toMatch(/<figcaption[^>]*>A chart<\/figcaption>/);
    const file = render(
      entry({
        id: 'at',
        kind: 'send-message',
        message: { type: 'attachment', url: 'https://example.com/r.pdf', alt: 'The Q3 report' },
      }),
    );
    expect(file).toMatch(/data-testid="file-caption"[^>]*>The Q3 report</);
  });

  it('labels code blocks with their language and offers Copy', () => {
    const html = render(text('```ts\nconst a = 1;\n```'));
    expect(html).toMatch(/data-testid="code-language"[^>]*>ts</);
    expect(html).toContain('>Copy<');
    expect(render(text('```\nplain\n```'))).toMatch(/data-testid="code-language"[^>]*>text</);
  });

  it('shows huge text as capped plain text, never parsing it as Markdown', () => {
    const huge = `**${'x'.repeat(1_000_000)}**`;
    const started = performance.now();
    const html = render(text(huge));
    expect(performance.now() - started).toBeLessThan(500);
    expect(html).toContain('data-testid="long-text"');
    expect(html).not.toContain('<strong>');
    expect(html.length).toBeLessThan(50_000);
    const user = render(entry({ id: 'u', kind: 'message', role: 'user', content: huge }));
    expect(user.length).toBeLessThan(50_000);
  });

  it("opens a tool row to its input and output, and leads with the model's description", () => {
    const html = render(
      entry({
        id: 'c2',
        kind: 'tool-call',
        name: 'shell',
        status: 'success',
        summary: 'echo aGVsbG8=',
        description: 'Decode the greeting',
        input: '{"command":"echo aGVsbG8="}',
        output: '{"success":{"output":"hello"}}',
        durationMs: 1500,
      }),
    );
    expect(html).toMatch(/<details[^>]*><summary/);
    expect(html).toMatch(/class="tool-summary"[^>]*>Decode the greeting</);
    expect(html).toContain('1.5 s');
    expect(html).toContain('data-testid="tool-input"');
    expect(html).toContain('hello');
  });
});
