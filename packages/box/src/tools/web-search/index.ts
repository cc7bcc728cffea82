/**
 * `web_search {searchTerm}`: references from the configured backend (backends.ts), recorded as
 * Grok Bot records them, `success{references:[{title, url, chunk}]}` (grok-bot-format.md §5, VR
 * parity 05, which shows `title` and `chunk`; `url` is sendbox's, for citing), or
 * `error{error}` naming the backend's status.
 */
import { z } from 'zod';
import {
  defineTool,
  errorOutcome,
  isJsonObject,
  jsonArray,
  successFields,
  type ToolOutcome,
} from '../types.ts';
import { SearchFailed, type SearchBackend } from './backends.ts';

export const SEARCH_TIMEOUT_MS = 20_000;

export const webSearchInput = z.strictObject({
  searchTerm: z
    .string()
    .trim()
    .min(1, 'searchTerm must not be empty')
    .max(400)
    .describe('What to search the web for.'),
});

export function webSearchTool(backend: SearchBackend, timeoutMs = SEARCH_TIMEOUT_MS) {
  return defineTool({
    name: 'web_search',
    description:
      'Search the web. Returns references (title, URL, a snippet). Fetch a page with web_fetch to read it in full.',
    input: webSearchInput,
    async run(input, ctx): Promise<ToolOutcome> {
      const signal = ctx.signal
        ? AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)])
        : AbortSignal.timeout(timeoutMs);
      try {
        const references = await backend.search(input.searchTerm, signal);
        return {
          envelope: {
            success: {
              references: references.map((r) => ({
                title: ctx.scrub.text(r.title),
                url: ctx.scrub.text(r.url),
                chunk: ctx.scrub.text(r.chunk),
              })),
            },
          },
          summary: `${input.searchTerm}: ${references.length} result${references.length === 1 ? '' : 's'}`,
        };
      } catch (error) {
        const message =
          error instanceof SearchFailed
            ? error.message
            : signal.aborted
              ? `The search (${backend.name}) took longer than ${timeoutMs / 1000} s and was given up.`
              : `The search (${backend.name}) failed: ${(error as Error).message}`;
        return errorOutcome(ctx.scrub.text(`${message} Try again later, or do without a web search.`));
      }
    },
    modelOutput(result) {
      const success = successFields(result);
      if (!success) return undefined;
      const refs = jsonArray(success.references).filter(isJsonObject);
      if (refs.length === 0) return { type: 'text', value: 'The search found nothing.' };
      const str = (v: unknown) => (typeof v === 'string' ? v : '');
      return {
        type: 'text',
        value: refs
          .map(
            (r, i) =>
              `${i + 1}. ${str(r.title)}\n   ${str(r.url)}${str(r.chunk) ? `\n   ${str(r.chunk)}` : ''}`,
          )
          .join('\n'),
      };
    },
  });
}
