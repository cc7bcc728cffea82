import { describe, expect, it } from 'vitest';
import { htmlWithinBudget, pageText } from './page-text.ts';

const para = (n: number) => `<p>Paragraph ${n} about ferns, their fronds and their spores.</p>\n`;
const page = (count: number, head = '') =>
  `<!doctype html><html><head><title>Ferns</title>${head}</head><body><nav><a href="/">Home</a></nav>` +
  `<article><h1>Ferns</h1>${Array.from({ length: count }, (_, i) => para(i)).join('')}</article></body></html>`;

describe('a page read within its text budget', () => {
  it('reads a page whose text fits whole, and says nothing was cut', () => {
    const out = pageText(page(50), 'text/html', 'https://example.org/');
    expect(out.cut).toBe(false);
    expect(out.text).toContain('Paragraph 0 about ferns');
    expect(out.text).toContain('Paragraph 49 about ferns');
  });

  it('stops building the page where its visible text passes the budget, and says the page went on', () => {
    const out = pageText(page(2_000), 'text/html', 'https://example.org/', 5_000);
    expect(out.cut).toBe(true);
    expect(out.text).toContain('Paragraph 0 about ferns');
    expect(out.text).not.toContain('Paragraph 1999');
    // Roughly the budget's worth of text, not the page's 100 KB.
    expect(out.text.length).toBeGreaterThan(4_000);
    expect(out.text.length).toBeLessThan(8_000);
  });

  it('does not count script, style or SVG content toward the budget, nor show it', () => {
    const script = `<script>${'var tracking = 1;\n'.repeat(2_000)}</script><style>${'p{color:red}'.repeat(2_000)}</style>`;
    const { cut } = htmlWithinBudget(page(10, script), 5_000);
    expect(cut).toBe(false);
    const out = pageText(page(10, script), 'text/html', 'https://example.org/', 5_000);
    expect(out.text).toContain('Paragraph 9 about ferns');
    expect(out.text).not.toContain('tracking');
    expect(out.title).toBe('Ferns');
  });
});
