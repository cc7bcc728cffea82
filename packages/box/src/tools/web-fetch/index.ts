/**
 * `web_fetch {url}`: the box fetches a page itself (never the sandbox), through the outbound
 * module's client (net/): its address rules on every redirect hop, an operator's named private
 * hosts let through. The page becomes readable text (page-text.ts). Caps: 5 MB downloaded (a larger
 * page is cut there and read as far as it came), 100 KB of text to the model (it is told where the
 * text was cut), 15 s in all. Recorded as `success{url, title, content}` or `error{error, url}`
 * (grok-bot-format.md §5, VR parity 05).
 */
import { z } from 'zod';
import { defineTool, oneLine, successFields, type ToolOutcome } from '../types.ts';
import {
  decodeBody,
  isHtmlType,
  isReadableType,
  mediaTypeOf,
  pageText,
  HTML_TEXT_BUDGET,
  UnreadableType,
} from './page-text.ts';

export const WEB_FETCH_MAX_BYTES = 5 * 1024 * 1024;
export const WEB_FETCH_MAX_TEXT_BYTES = 100 * 1024;
export const WEB_FETCH_TIMEOUT_MS = 15_000;

/** `fetch` as the outbound module's client gives it. */
export type PageFetch = (url: string, init: RequestInit) => Promise<Response>;

export interface WebFetchOptions {
  fetch: PageFetch;
  maxBytes?: number;
  maxTextBytes?: number;
  timeoutMs?: number;
}

export const webFetchInput = z.strictObject({
  url: z.string().trim().min(1, 'url must not be empty').describe('The http(s) URL of the page.'),
});

export function webFetchTool(options: WebFetchOptions) {
  const maxBytes = options.maxBytes ?? WEB_FETCH_MAX_BYTES;
  const maxText = options.maxTextBytes ?? WEB_FETCH_MAX_TEXT_BYTES;
  const timeoutMs = options.timeoutMs ?? WEB_FETCH_TIMEOUT_MS;
  return defineTool({
    name: 'web_fetch',
    description:
      'Fetch a web page (http or https) and read it as text: HTML is reduced to its main content in Markdown; ' +
      'plain text and JSON come as they are. Public addresses only, unless the operator allowed a host.',
    input: webFetchInput,
    async run(input, ctx): Promise<ToolOutcome> {
      const fail = (message: string): ToolOutcome => {
        const error = ctx.scrub.text(message);
        return { envelope: { error: { error, url: ctx.scrub.text(input.url) } }, summary: oneLine(error) };
      };
      let url: URL;
      try {
        url = new URL(input.url);
      } catch {
        return fail(`${input.url} is not a URL: give a full address such as https://example.com/page.`);
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:')
        return fail(`web_fetch fetches http and https pages only, not ${url.protocol} URLs.`);
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = ctx.signal ? AbortSignal.any([ctx.signal, timeout]) : timeout;
      try {
        const request = () =>
          options.fetch(url.href, {
            signal,
            redirect: 'follow',
            headers: {
              accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.1',
              'user-agent': 'sendbox-web-fetch (+https://github.com/sendbox)',
            },
          });
        // A pooled connection the server closed meanwhile resets at once: a GET is tried once more.
        const response = await request().catch((error: unknown) => {
          if (signal.aborted || !/ECONNRESET|socket hang up|other side closed/i.test(causeText(error)))
            throw error;
          return request();
        });
        const finalUrl = response.url || url.href;
        if (!response.ok) {
          await response.body?.cancel().catch(() => undefined);
          return fail(
            `${finalUrl} answered HTTP ${response.status} ${response.statusText}.`.replace(' .', '.'),
          );
        }
        const contentType = response.headers.get('content-type');
        const mediaType = mediaTypeOf(contentType);
        if (!isReadableType(mediaType)) {
          await response.body?.cancel().catch(() => undefined);
          throw new UnreadableType(
            `web_fetch reads HTML, plain text and JSON pages, and ${finalUrl} is ${mediaType}.`,
          );
        }
        const body = await readCapped(response, maxBytes);
        const page = pageText(
          decodeBody(body.bytes, contentType, isHtmlType(mediaType)),
          mediaType,
          finalUrl,
        );
        let content = page.text;
        const notes: string[] = [];
        if (page.cut)
          notes.push(
            `the page's text goes on past the ${HTML_TEXT_BUDGET.toLocaleString('en')} characters web_fetch reads of a page`,
          );
        if (body.cut)
          notes.push(
            `the page is larger than ${maxBytes} bytes and only its first ${maxBytes} were downloaded`,
          );
        const capped = capUtf8(content, maxText);
        if (capped.length < content.length) {
          notes.push(
            `the text is ${Buffer.byteLength(content)} bytes and was cut after ${maxText} bytes, ` +
              `at “…${capped.slice(-60).replace(/\s+/g, ' ')}”`,
          );
          content = capped;
        }
        if (notes.length) content += `\n\n[web_fetch: ${notes.join('; ')}.]`;
        return {
          envelope: {
            success: {
              url: ctx.scrub.text(finalUrl),
              title: ctx.scrub.text(page.title),
              content: ctx.scrub.text(content),
            },
          },
          summary: oneLine(ctx.scrub.text(`${finalUrl}${page.title ? ` (${page.title})` : ''}`)),
        };
      } catch (error) {
        if (error instanceof UnreadableType) return fail(error.message);
        if (timeout.aborted) return fail(`${url.href} did not load within ${timeoutMs / 1000} s.`);
        if (ctx.signal?.aborted) return fail('The fetch was stopped.');
        const cause =
          (error as Error).cause instanceof Error ? ` (${((error as Error).cause as Error).message})` : '';
        return fail(`Could not fetch ${url.href}: ${(error as Error).message}${cause}`);
      }
    },
    modelOutput(result) {
      const success = successFields(result);
      if (!success || typeof success.content !== 'string') return undefined;
      const title = typeof success.title === 'string' && success.title ? `# ${success.title}\n` : '';
      return {
        type: 'text',
        value: `${title}URL: ${typeof success.url === 'string' ? success.url : ''}\n\n${success.content}`,
      };
    },
  });
}

function causeText(error: unknown): string {
  const parts: string[] = [];
  for (let at = error, depth = 0; at instanceof Error && depth < 6; at = at.cause, depth++) {
    parts.push(at.message, (at as NodeJS.ErrnoException).code ?? '');
  }
  return parts.join(' ');
}

/** The body's first `maxBytes` bytes; the rest is not downloaded. */
async function readCapped(
  response: Response,
  maxBytes: number,
): Promise<{ bytes: Uint8Array; cut: boolean }> {
  if (!response.body) return { bytes: new Uint8Array(), cut: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { bytes: Buffer.concat(chunks, size), cut: false };
    if (size + value.byteLength > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - size));
      await reader.cancel().catch(() => undefined);
      return { bytes: Buffer.concat(chunks, maxBytes), cut: true };
    }
    chunks.push(value);
    size += value.byteLength;
  }
}

/** At most `maxBytes` of UTF-8, cut at a character boundary. */
function capUtf8(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  return Buffer.from(text)
    .subarray(0, maxBytes)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
}
