/**
 * A fetched page as text a model reads. HTML goes through Mozilla's Readability (the main content,
 * without navigation and boilerplate) on a linkedom document, then turndown to Markdown; where
 * Readability finds no article, the whole body is converted. Plain text and JSON pass through;
 * other types are refused by name. No script runs: linkedom only parses.
 *
 * Speed: Readability and turndown cost grows with the page (a dense 1 MB page took 1.6 s whole).
 * The model gets at most 100 KB of text, so a first pass with htmlparser2's tokenizer (no tree)
 * finds where the page's visible text passes `textBudget` characters (script, style, SVG and
 * template content not counted) and only the HTML up to there is built into a document; script,
 * style and other non-text elements are pruned before Readability reads it. The cost in fidelity:
 * text beyond the budget is never read (the model is told the page went on), and an article that
 * only starts after that much other text is missed.
 */
import { Readability } from '@mozilla/readability';
import { Parser } from 'htmlparser2';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';

export interface PageText {
  title: string;
  text: string;
  /** The page's text went on past what was read (`textBudget`). */
  cut: boolean;
}

/** Characters of a page's visible text read by default: 1.5× the 100 KB the model is given. */
export const HTML_TEXT_BUDGET = 150_000;

/** The refusal of a type web_fetch does not read. */
export class UnreadableType extends Error {}

const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);

export function mediaTypeOf(contentType: string | null): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

export function isHtmlType(mediaType: string): boolean {
  return HTML_TYPES.has(mediaType);
}

export function isReadableType(mediaType: string): boolean {
  return (
    HTML_TYPES.has(mediaType) ||
    mediaType === '' ||
    mediaType.startsWith('text/') ||
    mediaType === 'application/json' ||
    mediaType.endsWith('+json')
  );
}

/** Decodes `bytes` by the header's charset, else an HTML meta charset, else UTF-8. */
export function decodeBody(bytes: Uint8Array, contentType: string | null, html: boolean): string {
  const label =
    /charset\s*=\s*"?([\w-]+)/i.exec(contentType ?? '')?.[1] ??
    (html
      ? /<meta[^>]+charset\s*=\s*["']?([\w-]+)/i.exec(
          Buffer.from(bytes.subarray(0, 2048)).toString('latin1'),
        )?.[1]
      : undefined);
  try {
    return new TextDecoder(label ?? 'utf-8').decode(bytes);
  } catch {
    return new TextDecoder('utf-8').decode(bytes);
  }
}

export function pageText(
  body: string,
  mediaType: string,
  url: string,
  textBudget = HTML_TEXT_BUDGET,
): PageText {
  if (HTML_TYPES.has(mediaType) || (mediaType === '' && /^\s*<(!doctype html|html)/i.test(body))) {
    return htmlText(body, url, textBudget);
  }
  if (!isReadableType(mediaType)) {
    throw new UnreadableType(`web_fetch reads HTML, plain text and JSON pages, and ${url} is ${mediaType}.`);
  }
  if (mediaType === 'application/json' || mediaType.endsWith('+json')) {
    try {
      return { title: '', text: JSON.stringify(JSON.parse(body), null, 2), cut: false };
    } catch {
      return { title: '', text: body, cut: false };
    }
  }
  return { title: '', text: body, cut: false };
}

const turndown = new TurndownService({
  headingStyle: 'atx',
  codeBlockStyle: 'fenced',
  bulletListMarker: '-',
});
turndown.remove(['script', 'style', 'noscript', 'iframe', 'template', 'canvas', 'form']);
// Inline SVG is drawing markup, not text.
turndown.remove((node) => node.nodeName.toLowerCase() === 'svg');

/** Elements whose content is not text a reader sees. */
const NOT_TEXT = ['script', 'style', 'noscript', 'template', 'svg', 'iframe', 'canvas', 'object'];
const NOT_TEXT_SET = new Set(NOT_TEXT);

/** The HTML up to where its visible text passes `budget` characters (the parser closes what is left open). */
export function htmlWithinBudget(html: string, budget: number): { html: string; cut: boolean } {
  let text = 0;
  let hidden = 0;
  let end = html.length;
  const parser: Parser = new Parser(
    {
      onopentagname(name) {
        if (NOT_TEXT_SET.has(name)) hidden += 1;
      },
      onclosetag(name) {
        if (NOT_TEXT_SET.has(name) && hidden > 0) hidden -= 1;
      },
      ontext(chunk) {
        if (hidden > 0 || end < html.length) return;
        text += chunk.length;
        if (text > budget) {
          end = parser.endIndex + 1;
          parser.pause();
        }
      },
    },
    { decodeEntities: false },
  );
  parser.end(html);
  return end < html.length ? { html: html.slice(0, end), cut: true } : { html, cut: false };
}

function htmlText(whole: string, url: string, budget: number): PageText {
  const { html, cut } = htmlWithinBudget(whole, budget);
  const document = textDocument(html);
  const pageTitle = (document.title ?? '').trim();
  // The article comes back as its element (no HTML text to parse a second time for turndown).
  const article = new Readability<HTMLElement>(document, {
    charThreshold: 200,
    serializer: (element) => element as HTMLElement,
  }).parse();
  // No article found: the whole body, from a fresh parse (Readability took apart the one it read).
  const root = article?.content ?? textDocument(html).body;
  const markdown = root ? turndown.turndown(root) : '';
  return {
    title: (article?.title ?? '').trim() || pageTitle,
    text: absoluteLinks(markdown.replace(/\n{3,}/g, '\n\n').trim(), url),
    cut,
  };
}

/** The page as a document, without the elements that hold no text a reader sees. */
function textDocument(html: string): Document {
  const { document } = parseHTML(html);
  for (const element of document.querySelectorAll(NOT_TEXT.join(','))) element.remove();
  return document;
}

/** Relative Markdown link and image targets made absolute against the page's URL, so the model can follow them. */
function absoluteLinks(markdown: string, base: string): string {
  return markdown.replace(/(\]\()([^)\s]+)/g, (whole, open: string, target: string) => {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) return whole;
    try {
      return open + new URL(target, base).href;
    } catch {
      return whole;
    }
  });
}
