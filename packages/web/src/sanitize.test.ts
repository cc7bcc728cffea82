import { describe, expect, it } from 'vitest';
import { decodeEntities, safeHref, safeImageSrc, sanitizeHtml, type SafeNode } from './sanitize.ts';

/** Serializes the safe tree back to a string, only to make expectations readable. */
function show(nodes: readonly SafeNode[]): string {
  return nodes
    .map((node) => {
      if (node.type === 'text') return node.text;
      const attrs = Object.entries(node.attrs)
        .map(([k, v]) => ` ${k}="${v}"`)
        .join('');
      return `<${node.tag}${attrs}>${show(node.children)}</${node.tag}>`;
    })
    .join('');
}

const clean = (html: string) => show(sanitizeHtml(html));

describe('sanitizeHtml', () => {
  it('keeps what mammoth produces for ordinary documents', () => {
    expect(clean('<h1>Title</h1><p>Some <strong>bold</strong> and <em>em</em>.</p><ul><li>a</li></ul>')).toBe(
      '<h1>Title</h1><p>Some <strong>bold</strong> and <em>em</em>.</p><ul><li>a</li></ul>',
    );
    expect(clean('<table><tr><td colspan="2">x</td></tr></table>')).toBe(
      '<table><tr><td colspan="2">x</td></tr></table>',
    );
  });

  it('drops scripts, styles and embedding elements with their content', () => {
    expect(clean('<p>a<script>alert(1)</script>b</p>')).toBe('<p>ab</p>');
    expect(clean('<style>p{color:red}</style><p>x</p>')).toBe('<p>x</p>');
    expect(clean('<iframe src="https://evil"></iframe><object data=x>t</object><p>ok</p>')).toBe('<p>ok</p>');
    expect(clean('<svg><script>alert(1)</script><text>t</text></svg>z')).toBe('z');
    expect(clean('<SCRIPT>alert(1)</SCRIPT >y')).toBe('y');
    expect(clean('<script>unterminated')).toBe('');
  });

  it('removes event handlers, styles, classes and ids', () => {
    expect(
      clean('<p onclick="alert(1)" style="background:url(x)" class="c" id="i" ONMOUSEOVER=alert(2)>t</p>'),
    ).toBe('<p>t</p>');
    expect(clean('<img src=x onerror=alert(1)>')).toBe('');
  });

  it('keeps only safe link targets, in any spelling', () => {
    expect(clean('<a href="https://example.com/a?b=1">l</a>')).toBe(
      '<a href="https://example.com/a?b=1">l</a>',
    );
    expect(clean('<a href="mailto:me@example.com">m</a>')).toBe('<a href="mailto:me@example.com">m</a>');
    for (const href of [
      'javascript:alert(1)',
      'JaVaScRiPt:alert(1)',
      ' java\tscript:alert(1)',
      '&#106;avascript:alert(1)',
      '&#x6A;avascript&colon;alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'vbscript:msgbox',
      '#footnote-1',
      '/relative',
    ]) {
      expect(clean(`<a href="${href}">x</a>`), href).toBe('<a>x</a>');
    }
  });

  it('keeps only inline raster images', () => {
    expect(clean('<img src="data:image/png;base64,AAAA" alt="pic">')).toBe(
      '<img src="data:image/png;base64,AAAA" alt="pic"></img>',
    );
    expect(clean('<img src="https://tracker.example/p.gif">')).toBe('');
    expect(clean('<img src="data:image/svg+xml;base64,PHN2Zz4=">')).toBe('');
  });

  it('unwraps unknown elements but keeps their text, and text stays text', () => {
    expect(clean('<font color=red><blink>hi</blink></font>')).toBe('hi');
    expect(clean('<p>1 &lt; 2 &amp;&amp; &lt;b&gt;</p>')).toBe('<p>1 < 2 && <b></p>');
    expect(sanitizeHtml('&lt;script&gt;')).toEqual([{ type: 'text', text: '<script>' }]);
  });

  it('survives comments, doctypes and broken markup without letting anything through', () => {
    expect(clean('<!DOCTYPE html><!-- <script>x</script> --><p>a</p>')).toBe('<p>a</p>');
    expect(clean('<p>a</b></p>c</div>')).toBe('<p>a</p>c');
    expect(clean('a < b <3 <')).toBe('a < b <3 <');
    expect(clean('<p title="x>y">t</p><a href=https://e.com>u')).toBe(
      '<p>t</p><a href="https://e.com/">u</a>',
    );
  });
});

describe('safeHref', () => {
  it('accepts http, https and mailto only', () => {
    expect(safeHref('http://a.example/')).toBe('http://a.example/');
    expect(safeHref('HTTPS://A.example')).toBe('https://a.example/');
    expect(safeHref('mailto:x@y.z')).toBe('mailto:x@y.z');
    expect(safeHref('ftp://a')).toBeNull();
    expect(safeHref('sand-msg:t1s0')).toBeNull();
    expect(safeHref('')).toBeNull();
  });
});

describe('safeImageSrc', () => {
  it('accepts base64 raster data URLs only', () => {
    expect(safeImageSrc('data:image/jpeg;base64,/9j/')).toBe('data:image/jpeg;base64,/9j/');
    expect(safeImageSrc('data:image/png,raw')).toBeNull();
    expect(safeImageSrc('blob:x')).toBeNull();
  });
});

describe('decodeEntities', () => {
  it('decodes numeric and common named entities and leaves unknown ones', () => {
    expect(decodeEntities('&#65;&#x42;&amp;&unknown;&#0;')).toBe('AB&&unknown;\ufffd');
  });
});
