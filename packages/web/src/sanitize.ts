/**
 * Sanitizing untrusted HTML (mammoth's rendering of a Word file) and untrusted link targets.
 *
 * The HTML is tokenized here and turned into a tree of allow-listed elements that the page
 * renders with React elements, never through `innerHTML`: text stays text, an attribute is
 * kept only if listed for its tag, and URLs pass `safeHref` / `safeImageSrc`. Anything
 * unknown is unwrapped (its text kept), and scripting or embedding elements are dropped with
 * their content. No styles, event handlers, ids or classes survive.
 */

export type SafeNode =
  | { type: 'text'; text: string }
  | { type: 'element'; tag: AllowedTag; attrs: Readonly<Record<string, string>>; children: SafeNode[] };

const ALLOWED_TAGS = [
  'p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'strong', 'b', 'em', 'i', 'u', 's', 'del', 'ins', 'sup', 'sub',
  'br', 'hr', 'ul', 'ol', 'li', 'table', 'caption', 'thead', 'tbody', 'tfoot', 'tr', 'th', 'td', 'a', 'img',
  'blockquote', 'pre', 'code', 'span', 'div', 'dl', 'dt', 'dd',
] as const; // prettier-ignore
export type AllowedTag = (typeof ALLOWED_TAGS)[number];
const allowedTags: ReadonlySet<string> = new Set(ALLOWED_TAGS);

/** Attributes kept per tag; each value is re-checked by `cleanAttribute`. */
const ALLOWED_ATTRS: Partial<Record<AllowedTag, readonly string[]>> = {
  a: ['href', 'title'],
  img: ['src', 'alt', 'title', 'width', 'height'],
  td: ['colspan', 'rowspan'],
  th: ['colspan', 'rowspan'],
  ol: ['start'],
};

/** Elements removed together with everything inside them. */
const DROP_WITH_CONTENT: ReadonlySet<string> = new Set([
  'script', 'style', 'template', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'noscript',
  'noembed', 'noframes', 'textarea', 'title', 'xmp', 'svg', 'math', 'select', 'head', 'video', 'audio',
  'canvas', 'form', 'button', 'input', 'link', 'meta', 'base',
]); // prettier-ignore

/** Elements whose content the tokenizer reads as raw text up to the matching end tag. */
const RAW_TEXT: ReadonlySet<string> = new Set([
  'script', 'style', 'textarea', 'title', 'xmp', 'iframe', 'noembed', 'noframes', 'noscript', 'plaintext',
]); // prettier-ignore

const VOID: ReadonlySet<string> = new Set([
  'area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr',
]); // prettier-ignore

const SAFE_LINK_PROTOCOLS: ReadonlySet<string> = new Set(['http:', 'https:', 'mailto:']);

/**
 * A link target that is safe to open: an absolute http, https or mailto URL. Returns the
 * normalized URL, or null. Whitespace and control characters are removed first, as browsers
 * do, so `java\tscript:` cannot slip through.
 */
export function safeHref(raw: string): string | null {
  // eslint-disable-next-line no-control-regex
  const cleaned = raw.replace(/[\u0000-\u0020\u007f-\u009f]/g, '');
  if (cleaned === '') return null;
  let url: URL;
  try {
    url = new URL(cleaned);
  } catch {
    return null;
  }
  return SAFE_LINK_PROTOCOLS.has(url.protocol) ? url.href : null;
}

/** Image sources a document may embed: inline raster data only (no remote fetches, no SVG). */
export function safeImageSrc(raw: string): string | null {
  const value = raw.trim();
  return /^data:image\/(png|jpeg|gif|webp|bmp);base64,[a-z0-9+/=\s]*$/i.test(value) ? value : null;
}

/** Parses `html` and returns only the allow-listed tree. */
export function sanitizeHtml(html: string): SafeNode[] {
  const root: SafeNode[] = [];
  // Each open element: the tag as written, and where its children go (null while dropping).
  const stack: { tag: string; children: SafeNode[] | null }[] = [];
  const sink = (): SafeNode[] | null => (stack.length === 0 ? root : stack[stack.length - 1]!.children);

  for (const token of tokenize(html)) {
    if (token.type === 'text') {
      const children = sink();
      if (children && token.text !== '') pushText(children, token.text);
      continue;
    }
    if (token.type === 'end') {
      const at = findLastIndex(stack, (open) => open.tag === token.tag);
      if (at !== -1) stack.length = at;
      continue;
    }
    const parent = sink();
    const dropped = parent === null || DROP_WITH_CONTENT.has(token.tag);
    const keep = !dropped && allowedTags.has(token.tag);
    let element: SafeNode | null = null;
    if (keep) {
      const tag = token.tag as AllowedTag;
      element = { type: 'element', tag, attrs: cleanAttributes(tag, token.attrs), children: [] };
      if (tag === 'img' && !element.attrs.src) element = null; // an image with nothing safe to show
      if (element) parent.push(element);
    }
    if (VOID.has(token.tag) || token.selfClosing || token.rawText !== undefined) continue;
    // Unknown-but-harmless elements are unwrapped: their children go to the parent.
    const children = dropped ? null : element && element.type === 'element' ? element.children : parent;
    stack.push({ tag: token.tag, children });
  }
  return root;
}

function pushText(children: SafeNode[], text: string): void {
  const last = children[children.length - 1];
  if (last?.type === 'text') last.text += text;
  else children.push({ type: 'text', text });
}

function cleanAttributes(tag: AllowedTag, attrs: readonly [string, string][]): Record<string, string> {
  const allowed = ALLOWED_ATTRS[tag] ?? [];
  const out: Record<string, string> = {};
  for (const [name, value] of attrs) {
    if (!allowed.includes(name) || name in out) continue;
    const clean = cleanAttribute(name, value);
    if (clean !== null) out[name] = clean;
  }
  return out;
}

function cleanAttribute(name: string, value: string): string | null {
  switch (name) {
    case 'href':
      return safeHref(value);
    case 'src':
      return safeImageSrc(value);
    case 'colspan':
    case 'rowspan':
    case 'start':
    case 'width':
    case 'height':
      return /^\d{1,4}$/.test(value.trim()) ? value.trim() : null;
    default:
      return value.slice(0, 500);
  }
}

type Token =
  | { type: 'text'; text: string }
  | { type: 'end'; tag: string }
  | { type: 'start'; tag: string; attrs: [string, string][]; selfClosing: boolean; rawText?: string };

/** A forgiving HTML tokenizer: never throws, treats anything it cannot read as text or skips it. */
function* tokenize(html: string): Generator<Token> {
  let i = 0;
  const n = html.length;
  while (i < n) {
    const lt = html.indexOf('<', i);
    if (lt === -1) {
      yield { type: 'text', text: decodeEntities(html.slice(i)) };
      return;
    }
    if (lt > i) yield { type: 'text', text: decodeEntities(html.slice(i, lt)) };
    i = lt;
    if (html.startsWith('<!--', i)) {
      const end = html.indexOf('-->', i + 4);
      i = end === -1 ? n : end + 3;
      continue;
    }
    const next = html[i + 1] ?? '';
    if (next === '!' || next === '?') {
      const end = html.indexOf('>', i);
      i = end === -1 ? n : end + 1;
      continue;
    }
    if (next === '/') {
      const match = /^<\/([a-zA-Z][^\s/>]*)[^>]*>?/.exec(html.slice(i, i + 200));
      if (match) {
        const end = html.indexOf('>', i);
        yield { type: 'end', tag: match[1]!.toLowerCase() };
        i = end === -1 ? n : end + 1;
      } else {
        // `</` not followed by a name: a bogus comment up to `>`.
        const end = html.indexOf('>', i);
        i = end === -1 ? n : end + 1;
      }
      continue;
    }
    if (!/[a-zA-Z]/.test(next)) {
      yield { type: 'text', text: '<' };
      i++;
      continue;
    }
    const start = readStartTag(html, i);
    i = start.end;
    const token: Token = {
      type: 'start',
      tag: start.tag,
      attrs: start.attrs,
      selfClosing: start.selfClosing,
    };
    if (RAW_TEXT.has(start.tag) && !start.selfClosing) {
      const close = html.toLowerCase().indexOf(`</${start.tag}`, i);
      token.rawText = html.slice(i, close === -1 ? n : close);
      i = close === -1 ? n : close;
    }
    yield token;
  }
}

function readStartTag(
  html: string,
  from: number,
): { tag: string; attrs: [string, string][]; selfClosing: boolean; end: number } {
  let i = from + 1;
  const n = html.length;
  let tag = '';
  while (i < n && !/[\s/>]/.test(html[i]!)) tag += html[i++];
  const attrs: [string, string][] = [];
  let selfClosing = false;
  while (i < n) {
    while (i < n && /[\s/]/.test(html[i]!)) {
      if (html[i] === '/' && html[i + 1] === '>') selfClosing = true;
      i++;
    }
    if (i >= n) break;
    if (html[i] === '>') {
      i++;
      break;
    }
    let name = '';
    while (i < n && !/[\s/>=]/.test(html[i]!)) name += html[i++];
    while (i < n && /\s/.test(html[i]!)) i++;
    let value = '';
    if (html[i] === '=') {
      i++;
      while (i < n && /\s/.test(html[i]!)) i++;
      const quote = html[i];
      if (quote === '"' || quote === "'") {
        const end = html.indexOf(quote, i + 1);
        value = html.slice(i + 1, end === -1 ? n : end);
        i = end === -1 ? n : end + 1;
      } else {
        while (i < n && !/[\s>]/.test(html[i]!)) value += html[i++];
      }
    }
    if (name !== '') attrs.push([name.toLowerCase(), decodeEntities(value)]);
  }
  return { tag: tag.toLowerCase(), attrs, selfClosing, end: i };
}

const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', colon: ':', tab: '\t', newline: '\n',
  ndash: '\u2013', mdash: '\u2014', hellip: '\u2026', lsquo: '\u2018', rsquo: '\u2019', ldquo: '\u201c',
  rdquo: '\u201d', copy: '\u00a9', reg: '\u00ae', trade: '\u2122', bull: '\u2022',
}; // prettier-ignore

export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);?/gi, (whole, body: string) => {
    if (body.startsWith('#')) {
      const hex = body[1] === 'x' || body[1] === 'X';
      const code = parseInt(body.slice(hex ? 2 : 1), hex ? 16 : 10);
      if (!Number.isFinite(code) || code <= 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) {
        return '\ufffd';
      }
      return String.fromCodePoint(code);
    }
    const named = NAMED_ENTITIES[body.toLowerCase()];
    return named !== undefined && (whole.endsWith(';') || body.length <= 4) ? named : whole;
  });
}

function findLastIndex<T>(items: readonly T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i]!)) return i;
  return -1;
}
