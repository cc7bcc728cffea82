import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { scrubberFor } from '../../secrets/scrub.ts';
import { errorText, successOf, useToolSandbox } from '../test-context.ts';
import { chooseSearchBackend, searchStatus } from './backends.ts';
import { webSearchTool } from './index.ts';

const box = useToolSandbox();
let server: Server | null = null;
const requests: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }> =
  [];

beforeEach(() => {
  requests.length = 0;
});
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = null;
});

/** A stand-in on loopback answering with `answer(request)`; returns its base URL. */
async function standIn(
  answer: (req: IncomingMessage, body: string, res: ServerResponse) => void,
): Promise<string> {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      answer(req, body, res);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const json = (res: ServerResponse, status: number, value: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
};

describe('web_search against SearXNG', () => {
  it('asks the JSON API and returns {title, url, chunk} references', async () => {
    const base = await standIn((_req, _body, res) =>
      json(res, 200, {
        query: 'sendbox agents',
        results: [
          { title: 'Sendbox', url: 'https://example.org/sendbox', content: 'An agent box.\n  Open source.' },
          { title: '', url: 'https://example.org/untitled', content: '' },
        ],
      }),
    );
    const backend = chooseSearchBackend({ searxngUrl: base, braveKey: 'also-set' })!;
    expect(backend.name).toBe('searxng');
    const tool = webSearchTool(backend);
    const out = await tool.run({ searchTerm: 'sendbox agents' }, box.ctx);
    expect(requests[0]!.url).toBe('/search?q=sendbox+agents&format=json');
    expect(successOf(out.envelope)).toEqual({
      references: [
        { title: 'Sendbox', url: 'https://example.org/sendbox', chunk: 'An agent box. Open source.' },
        { title: 'https://example.org/untitled', url: 'https://example.org/untitled', chunk: '' },
      ],
    });
    expect(tool.modelOutput!(out.envelope)).toEqual({
      type: 'text',
      value:
        '1. Sendbox\n   https://example.org/sendbox\n   An agent box. Open source.\n' +
        '2. https://example.org/untitled\n   https://example.org/untitled',
    });
  });

  it('fails as error{error} with the backend status, and scrubs secrets', async () => {
    const base = await standIn((_req, _body, res) => {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end('upstream down tok-0123456789');
    });
    const ctx = { ...box.ctx, scrub: scrubberFor(new Map([['API_TOKEN', 'tok-0123456789']])) };
    const out = await webSearchTool(chooseSearchBackend({ searxngUrl: base })!).run({ searchTerm: 'x' }, ctx);
    expect(errorText(out.envelope)).toMatch(
      /^SearXNG answered HTTP 502 Bad Gateway: upstream down \[secret API_TOKEN redacted\]/,
    );
  });

  it('gives up at its timeout', async () => {
    const base = await standIn(() => undefined); // never answers
    const out = await webSearchTool(chooseSearchBackend({ searxngUrl: base })!, 200).run(
      { searchTerm: 'x' },
      box.ctx,
    );
    expect(errorText(out.envelope)).toContain('took longer than 0.2 s');
  });
});

describe('web_search against Brave and xAI', () => {
  it('sends the Brave key as its header and reads web.results', async () => {
    const base = await standIn((req, _body, res) =>
      req.headers['x-subscription-token'] === 'brave-key'
        ? json(res, 200, {
            web: {
              results: [
                { title: 'B', url: 'https://b.example/', description: 'the <strong>b</strong> page' },
              ],
            },
          })
        : json(res, 401, { error: 'bad token' }),
    );
    const out = await webSearchTool(chooseSearchBackend({ braveKey: 'brave-key', braveUrl: base })!).run(
      { searchTerm: 'b' },
      box.ctx,
    );
    expect(requests[0]!.url).toBe('/res/v1/web/search?q=b&count=8');
    expect(successOf(out.envelope)).toEqual({
      references: [{ title: 'B', url: 'https://b.example/', chunk: 'the b page' }],
    });
  });

  it("uses xAI's server-side web_search tool (Responses API) and reads its citations", async () => {
    const text =
      'xAI makes Grok [[1]](https://x.ai/news). Its docs live elsewhere [[2]](https://docs.x.ai/).';
    const base = await standIn((req, body, res) => {
      const request = JSON.parse(body) as { tools: unknown; model: string };
      if (req.url !== '/v1/responses' || req.headers.authorization !== 'Bearer xai-key')
        return json(res, 404, { error: 'wrong endpoint' });
      expect(request.tools).toEqual([{ type: 'web_search' }]);
      json(res, 200, {
        id: 'resp_1',
        object: 'response',
        model: request.model,
        output: [
          { type: 'web_search_call', id: 'ws_1', status: 'completed' },
          {
            type: 'message',
            role: 'assistant',
            content: [
              {
                type: 'output_text',
                text,
                annotations: [
                  {
                    type: 'url_citation',
                    url: 'https://x.ai/news',
                    title: 'xAI News',
                    start_index: 15,
                    end_index: 41,
                  },
                  {
                    type: 'url_citation',
                    url: 'https://docs.x.ai/',
                    title: 'Docs',
                    start_index: 65,
                    end_index: 91,
                  },
                ],
              },
            ],
          },
        ],
        citations: ['https://x.ai/news', 'https://docs.x.ai/', 'https://x.com/xai'],
      });
    });
    const backend = chooseSearchBackend({
      xai: { apiKey: 'xai-key', model: 'grok-4.7', baseURL: `${base}/v1` },
    })!;
    expect(backend.name).toBe('xai');
    const out = await webSearchTool(backend).run({ searchTerm: 'what is xAI' }, box.ctx);
    expect(requests[0]!.method).toBe('POST');
    expect(successOf(out.envelope)).toEqual({
      references: [
        { title: 'xAI News', url: 'https://x.ai/news', chunk: 'xAI makes Grok' },
        { title: 'Docs', url: 'https://docs.x.ai/', chunk: 'Its docs live elsewhere' },
        { title: 'https://x.com/xai', url: 'https://x.com/xai', chunk: '' },
      ],
    });
    expect(JSON.stringify(out)).not.toContain('xai-key');
  });

  it('is not offered without a backend, and the status says how to enable it', () => {
    expect(chooseSearchBackend({})).toBeNull();
    expect(searchStatus(null).howToEnable).toContain('SENDBOX_SEARXNG_URL');
    expect(searchStatus(null).howToEnable).toContain('BRAVE_SEARCH_API_KEY');
  });
});
