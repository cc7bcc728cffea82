/**
 * Where `web_search` searches, chosen by configuration (docs/runtime.md, "Web"):
 * - SearXNG's JSON API at `SENDBOX_SEARXNG_URL` (self-hosted; wins when set);
 * - Brave Search with `BRAVE_SEARCH_API_KEY` (at `SENDBOX_BRAVE_SEARCH_URL` when the operator
 *   relays it; Brave's own API otherwise);
 * - xAI's server-side `web_search` tool through its Responses API, when the model's provider is
 *   xAI and neither of the others is set.
 * With none, the tool is not offered. A backend URL is the operator's, not the model's: it is
 * fetched directly (a SearXNG on loopback is the usual case).
 */
import { z } from 'zod';

export interface Reference {
  title: string;
  url: string;
  chunk: string;
}

export interface SearchBackend {
  /** `searxng`, `brave`, `xai`: named in errors and in the settings panel. */
  readonly name: string;
  search(term: string, signal: AbortSignal): Promise<Reference[]>;
}

/** A backend's refusal, with its HTTP status, for the model (`error{error}`). */
export class SearchFailed extends Error {}

export const MAX_REFERENCES = 8;
const CHUNK_CHARS = 600;

export interface SearchConfig {
  searxngUrl?: string | undefined;
  braveKey?: string | undefined;
  /** Base URL of Brave's API (tests point it at a loopback stand-in). */
  braveUrl?: string | undefined;
  /** The xAI key and model when the model's provider is xAI. */
  xai?: { apiKey: string; model: string; baseURL?: string | undefined } | undefined;
}

export function searchConfigFromEnv(env: NodeJS.ProcessEnv, xai?: SearchConfig['xai']): SearchConfig {
  return {
    searxngUrl: env.SENDBOX_SEARXNG_URL?.trim() || undefined,
    braveKey: env.BRAVE_SEARCH_API_KEY?.trim() || undefined,
    // An operator's relay in front of Brave's API (a caching proxy, an egress gateway).
    braveUrl: env.SENDBOX_BRAVE_SEARCH_URL?.trim() || undefined,
    xai,
  };
}

export function chooseSearchBackend(config: SearchConfig): SearchBackend | null {
  if (config.searxngUrl) return searxng(config.searxngUrl);
  if (config.braveKey) return brave(config.braveKey, config.braveUrl ?? 'https://api.search.brave.com');
  if (config.xai) return xaiSearch(config.xai);
  return null;
}

/** What the settings panel says about search: which backend, or how to turn it on. */
export function searchStatus(backend: SearchBackend | null): { backend: string | null; howToEnable: string } {
  return {
    backend: backend?.name ?? null,
    howToEnable: backend
      ? ''
      : 'Web search is off: set SENDBOX_SEARXNG_URL to a SearXNG instance with its JSON format enabled ' +
        '(e.g. http://127.0.0.1:8888), or BRAVE_SEARCH_API_KEY to a Brave Search API key, and restart sendbox. ' +
        'With xAI as the model provider, xAI’s own web search is used when neither is set.',
  };
}

function clip(text: string): string {
  const clean = text.replace(/\s+/g, ' ').trim();
  return clean.length > CHUNK_CHARS ? `${clean.slice(0, CHUNK_CHARS - 1)}…` : clean;
}

async function getJson(what: string, url: string, init: RequestInit): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: 'error' });
  } catch (error) {
    if (init.signal?.aborted) throw error; // the caller's timeout or stop, reported as such
    const cause =
      (error as Error).cause instanceof Error ? `: ${((error as Error).cause as Error).message}` : '';
    throw new SearchFailed(`${what} could not be reached (${(error as Error).message}${cause}).`);
  }
  const body = await response.text();
  if (!response.ok) {
    const detail = body.replace(/\s+/g, ' ').trim().slice(0, 300);
    throw new SearchFailed(
      `${what} answered HTTP ${response.status} ${response.statusText}${detail ? `: ${detail}` : ''}.`,
    );
  }
  try {
    return JSON.parse(body) as unknown;
  } catch {
    throw new SearchFailed(`${what} answered HTTP ${response.status} with a body that is not JSON.`);
  }
}

// --- SearXNG: GET /search?q=…&format=json → {results: [{title, url, content}]}

const searxngAnswer = z.object({
  results: z.array(
    z.object({ title: z.string().default(''), url: z.string(), content: z.string().default('') }),
  ),
});

function searxng(base: string): SearchBackend {
  return {
    name: 'searxng',
    async search(term, signal) {
      const url = new URL('search', base.endsWith('/') ? base : `${base}/`);
      url.searchParams.set('q', term);
      url.searchParams.set('format', 'json');
      const json = await getJson('SearXNG', url.href, { signal, headers: { accept: 'application/json' } });
      const parsed = searxngAnswer.safeParse(json);
      if (!parsed.success)
        throw new SearchFailed('SearXNG answered JSON without a results list (is its JSON format enabled?).');
      return parsed.data.results
        .slice(0, MAX_REFERENCES)
        .map((r) => ({ title: r.title || r.url, url: r.url, chunk: clip(r.content) }));
    },
  };
}

// --- Brave Search: GET /res/v1/web/search?q=… with X-Subscription-Token → {web: {results: [{title, url, description}]}}

const braveAnswer = z.object({
  web: z
    .object({
      results: z.array(
        z.object({ title: z.string().default(''), url: z.string(), description: z.string().default('') }),
      ),
    })
    .optional(),
});

function brave(key: string, base: string): SearchBackend {
  return {
    name: 'brave',
    async search(term, signal) {
      const url = new URL('/res/v1/web/search', base);
      url.searchParams.set('q', term);
      url.searchParams.set('count', String(MAX_REFERENCES));
      const json = await getJson('Brave Search', url.href, {
        signal,
        headers: { accept: 'application/json', 'x-subscription-token': key },
      });
      const parsed = braveAnswer.safeParse(json);
      if (!parsed.success)
        throw new SearchFailed('Brave Search answered JSON in a shape sendbox does not know.');
      return (parsed.data.web?.results ?? []).slice(0, MAX_REFERENCES).map((r) => ({
        title: r.title || r.url,
        url: r.url,
        // Brave marks query words with <strong>; the chunk is plain text.
        chunk: clip(r.description.replace(/<\/?strong>/g, '')),
      }));
    },
  };
}

// --- xAI: POST /v1/responses with tools [{type: "web_search"}] (docs.x.ai, Tools → Search Tools and
// Citations): the answer's output_text carries url_citation annotations; `citations` lists every URL.

const xaiAnswer = z.object({
  output: z
    .array(
      z.object({
        type: z.string(),
        content: z
          .array(
            z.object({
              type: z.string(),
              text: z.string().optional(),
              annotations: z
                .array(
                  z.object({
                    type: z.string(),
                    url: z.string().optional(),
                    title: z.string().optional(),
                    start_index: z.number().optional(),
                    end_index: z.number().optional(),
                  }),
                )
                .optional(),
            }),
          )
          .optional(),
      }),
    )
    .default([]),
  citations: z.array(z.string()).optional(),
});

function xaiSearch(config: { apiKey: string; model: string; baseURL?: string | undefined }): SearchBackend {
  return {
    name: 'xai',
    async search(term, signal) {
      const base = (config.baseURL ?? 'https://api.x.ai/v1').replace(/\/$/, '');
      const json = await getJson('xAI web search', `${base}/responses`, {
        method: 'POST',
        signal,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${config.apiKey}` },
        body: JSON.stringify({
          model: config.model,
          input: [
            {
              role: 'user',
              content: `Search the web for: ${term}\nAnswer briefly, citing the sources you found.`,
            },
          ],
          tools: [{ type: 'web_search' }],
          store: false,
        }),
      });
      const parsed = xaiAnswer.safeParse(json);
      if (!parsed.success)
        throw new SearchFailed('xAI web search answered in a shape sendbox does not know.');
      const references: Reference[] = [];
      const seen = new Set<string>();
      for (const item of parsed.data.output) {
        for (const part of item.content ?? []) {
          const text = part.text ?? '';
          for (const note of part.annotations ?? []) {
            if (note.type !== 'url_citation' || !note.url || seen.has(note.url)) continue;
            seen.add(note.url);
            references.push({
              title: note.title || note.url,
              url: note.url,
              chunk: clip(sentenceAround(text, note)),
            });
          }
        }
      }
      for (const url of parsed.data.citations ?? []) {
        if (seen.has(url)) continue;
        seen.add(url);
        references.push({ title: url, url, chunk: '' });
      }
      return references.slice(0, MAX_REFERENCES);
    },
  };
}

/** The sentence of the answer that a citation marks (its text before the link). */
function sentenceAround(text: string, note: { start_index?: number | undefined }): string {
  if (note.start_index === undefined) return '';
  const before = text.slice(0, note.start_index);
  const start = Math.max(before.lastIndexOf('. '), before.lastIndexOf('\n')) + 1;
  return before
    .slice(start)
    .replace(/\[\[\d+\]\]\([^)]*\)/g, '')
    .trim();
}
