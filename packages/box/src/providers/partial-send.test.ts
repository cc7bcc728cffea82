import { describe, expect, it } from 'vitest';
import { SendDraft } from './partial-send.ts';

/** A whole prefix read at once. */
const partialSendText = (json: string) => new SendDraft().push(json);

describe('partialSendText', () => {
  it('reads the content string of a prefix, unescaped, cut anywhere', () => {
    const full = JSON.stringify({ type: 'text', content: 'Hi "you"\nline é ✓' });
    expect(partialSendText(full)).toBe('Hi "you"\nline é ✓');
    const texts = Array.from({ length: full.length + 1 }, (_, n) => partialSendText(full.slice(0, n)));
    expect(texts[5]).toBeNull();
    // Every prefix reads as a prefix of the final text.
    for (const text of texts) if (text !== null) expect('Hi "you"\nline é ✓'.startsWith(text)).toBe(true);
  });
  it('finds the nested shape too', () => {
    expect(partialSendText('{"type":"text","text":{"content":"Hel')).toBe('Hel');
  });
});

describe('SendDraft', () => {
  it('reads a stream cut anywhere, escapes split across pieces included, as the whole prefix reads', () => {
    const content = 'Tab\there, "quoted", back\\slash, \u00e9 \u2713 \ud83d\ude00 and a\nnew line';
    const full = JSON.stringify({ type: 'text', content }).replace('\u00e9', '\\u00e9');
    expect(JSON.parse(full)).toEqual({ type: 'text', content });
    for (const size of [1, 2, 3, 5, 7]) {
      const draft = new SendDraft();
      let shown: string | null = null;
      for (let at = 0; at < full.length; at += size) {
        const text = draft.push(full.slice(at, at + size));
        if (text !== null) {
          expect(content.startsWith(text), `piece size ${size}, at ${at}: ${JSON.stringify(text)}`).toBe(
            true,
          );
          // It never takes back what it showed.
          if (shown !== null) expect(text.startsWith(shown)).toBe(true);
          shown = text;
        }
      }
      expect(shown).toBe(content);
    }
  });

  it('stops at the closing quote: what follows the string is not text', () => {
    const draft = new SendDraft();
    expect(draft.push('{"content":"done')).toBe('done');
    expect(draft.push('", "extra": "not this"}')).toBe('done');
  });
});
