/**
 * A fetched page as text a model reads. HTML goes through Mozilla's Readability (the main content,
 * without navigation and boilerplate) on a linkedom document, then turndown to Markdown; where
 * Readability finds no article, the whole body is converted. Plain text and JSON pass through;
 * other types are refused by name. No script runs: linkedom only parses.
 */
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';

export interface PageText {
  title: string;
  text: string;
}

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

export function pageText(body: string, mediaType: string, url: string): PageText {
  if (HTML_TYPES.has(mediaType) || (mediaType === '' && /^\s*<(!doctype html|html)/i.test(body))) {
    return htmlText(body, url);
  }
  if (!isReadableType(mediaType)) {
    throw new UnreadableType(`web_fetch reads HTML, plain text and JSON pages, and ${url} is ${mediaType}.`);
  }
  if (mediaType === 'application/json' || mediaType.endsWith('+json')) {
    try {
      return { title: '', text: JSON.stringify(JSON.parse(body), null, 2) };
    } catch {
      return { title: '', text: body };
    }
  }
  return { title: '', text: body };
}

const turndown = new TurndownService({
  headingStyle: 'atx',
  codeBlockStyle: 'fenced',
  bulletListMarker: '-',
});
turndown.remove(['script', 'style', 'noscript', 'iframe', 'template', 'canvas', 'form']);
// Inline SVG is drawing markup, not text.
turndown.remove((node) => node.nodeName.toLowerCase() === 'svg');

function htmlText(html: string, url: string): PageText {
  const { document } = parseHTML(html);
  const pageTitle = (document.title ?? '').trim();
  // The article comes back as its element (no HTML text to parse a second time for turndown).
  const article = new Readability<HTMLElement>(document, {
    charThreshold: 200,
    serializer: (element) => element as HTMLElement,
  }).parse();
  // No article found: the whole body, from a fresh parse (Readability took apart the one it read).
  const root = article?.content ?? parseHTML(html).document.body;
  const markdown = root ? turndown.turndown(root) : '';
  return {
    title: (article?.title ?? '').trim() || pageTitle,
    text: absoluteLinks(markdown.replace(/\n{3,}/g, '\n\n').trim(), url),
  };
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
