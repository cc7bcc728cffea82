import { describe, expect, it } from 'vitest';
import { partialSendText } from './partial-send.ts';

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
