import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { scrubberFor } from '../../secrets/scrub.ts';
import { successOf, useToolSandbox } from '../test-context.ts';
import type { ToolEnvelope } from '../types.ts';
import { webFetchTool, type PageFetch } from './index.ts';

const box = useToolSandbox();
let server: Server | null = null;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = null;
});

async function serve(routes: Record<string, (res: ServerResponse) => void>): Promise<string> {
  server = createServer((req, res) => {
    const route = routes[req.url ?? ''];
    if (route) route(res);
    else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('no such page');
    }
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

// The reduction, caps and shapes, fetched with Node's own fetch (the address rules are net/'s; see outbound.test.ts).
const plainFetch: PageFetch = (url, init) => fetch(url, init);
const tool = (options: Partial<Parameters<typeof webFetchTool>[0]> = {}) =>
  webFetchTool({ fetch: plainFetch, ...options });

function errorOf(envelope: ToolEnvelope): { error: string; url: string } {
  return (envelope as { error: { error: string; url: string } }).error;
}

const ARTICLE = `<!doctype html><html><head><title>Plant care | Example site</title>
<script>window.tracking = true</script><style>body{color:red}</style></head>
<body><nav><a href="/">Home</a> <a href="/shop">Shop</a> <a href="/about">About</a></nav>
<article><h1>Watering ferns</h1>
<p>Ferns like their soil moist but never soggy. Water them when the top centimetre of soil feels dry,
usually twice a week in summer and once a week in winter. Use water at room temperature.</p>
<p>Mist the fronds in dry rooms, or stand the pot on a tray of wet pebbles so the air around it stays humid.
See the <a href="/guides/humidity">humidity guide</a> for more.</p>
<ul><li>Bright, indirect light</li><li>No cold draughts</li></ul></article>
<footer>Copyright Example site. Cookie settings. Newsletter.</footer></body></html>`;

describe('web_fetch', () => {
  it('reduces an HTML page to its main text in Markdown, links made absolute', async () => {
    const base = await serve({
      '/ferns': (res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(ARTICLE);
      },
    });
    const t = tool();
    const out = await t.run({ url: `${base}/ferns` }, box.ctx);
    const success = successOf(out.envelope) as { url: string; title: string; content: string };
    expect(success.url).toBe(`${base}/ferns`);
    expect(success.title).toBe('Plant care | Example site');
    expect(success.content).toContain('Ferns like their soil moist but never soggy.');
    expect(success.content).toContain(`[humidity guide](${base}/guides/humidity)`);
    expect(success.content).toContain('-   Bright, indirect light');
    for (const noise of ['window.tracking', 'color:red', 'Cookie settings', 'Shop'])
      expect(success.content).not.toContain(noise);
    const model = t.modelOutput!(out.envelope);
    expect(model?.type === 'text' ? model.value : '').toMatch(
      /^# Plant care \| Example site\nURL: http:\/\/127\.0\.0\.1:\d+\/ferns\n\n/,
    );
  });

  it('passes plain text and JSON through and refuses other types by name', async () => {
    const base = await serve({
      '/a.txt': (res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('just text\n');
      },
      '/data': (res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"a":[1,2]}');
      },
      '/file.pdf': (res) => {
        res.writeHead(200, { 'content-type': 'application/pdf' });
        res.end('%PDF-1.4');
      },
    });
    expect(successOf((await tool().run({ url: `${base}/a.txt` }, box.ctx)).envelope)).toEqual({
      url: `${base}/a.txt`,
      title: '',
      content: 'just text\n',
    });
    expect(successOf((await tool().run({ url: `${base}/data` }, box.ctx)).envelope).content).toBe(
      '{\n  "a": [\n    1,\n    2\n  ]\n}',
    );
    expect(errorOf((await tool().run({ url: `${base}/file.pdf` }, box.ctx)).envelope)).toEqual({
      error: `web_fetch reads HTML, plain text and JSON pages, and ${base}/file.pdf is application/pdf.`,
      url: `${base}/file.pdf`,
    });
  });

  it('answers a bad URL, another scheme and an HTTP error as error{error, url}', async () => {
    const base = await serve({});
    expect(errorOf((await tool().run({ url: 'not a url' }, box.ctx)).envelope).error).toContain(
      'is not a URL',
    );
    expect(errorOf((await tool().run({ url: 'file:///etc/passwd' }, box.ctx)).envelope).error).toContain(
      'not file: URLs',
    );
    expect(errorOf((await tool().run({ url: `${base}/missing` }, box.ctx)).envelope)).toEqual({
      error: `${base}/missing answered HTTP 404 Not Found.`,
      url: `${base}/missing`,
    });
  });

  it('scrubs a secret on the page from the title and the text', async () => {
    const base = await serve({
      '/leak': (res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(
          `<html><head><title>key tok-0123456789</title></head><body><p>The key is tok-0123456789.</p></body></html>`,
        );
      },
    });
    const ctx = { ...box.ctx, scrub: scrubberFor(new Map([['API_TOKEN', 'tok-0123456789']])) };
    const out = await tool().run({ url: `${base}/leak` }, ctx);
    expect(JSON.stringify(out)).not.toContain('tok-0123456789');
    expect(successOf(out.envelope).content).toContain('The key is [secret API_TOKEN redacted].');
  });

  it('cuts a 20 MB response at the 5 MB download cap and the text at 100 KB, saying where', async () => {
    const line = 'All work and no play makes Jack a dull boy. '.repeat(20) + '\n';
    let sent = 0;
    const base = await serve({
      '/huge': (res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const total = 20 * 1024 * 1024;
        const chunk = Buffer.from(line.repeat(200));
        const pump = () => {
          while (sent < total) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('close', () => undefined);
        pump();
      },
    });
    const out = await tool().run({ url: `${base}/huge` }, box.ctx);
    const content = successOf(out.envelope).content as string;
    expect(Buffer.byteLength(content)).toBeLessThan(100 * 1024 + 400);
    expect(content).toMatch(
      /\[web_fetch: the page is larger than 5242880 bytes and only its first 5242880 were downloaded; the text is 5242880 bytes and was cut after 102400 bytes, at “…[^”]+”\.\]$/,
    );
    // The download stopped near the cap, not at 20 MB.
    expect(sent).toBeLessThan(12 * 1024 * 1024);
  });

  it('reads a long HTML page within its text budget and tells the model the page went on', async () => {
    const para = '<p>Ferns like their soil moist but never soggy, and their fronds misted.</p>\n';
    const html = `<!doctype html><html><head><title>Long</title></head><body><article>${para.repeat(4_000)}</article></body></html>`;
    const base = await serve({
      '/long': (res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(html);
      },
    });
    const content = successOf((await tool().run({ url: `${base}/long` }, box.ctx)).envelope)
      .content as string;
    expect(content).toMatch(
      /\[web_fetch: the page's text goes on past the 150,000 characters web_fetch reads of a page; the text is \d+ bytes and was cut after 102400 bytes, at “…[^”]+”\.\]$/,
    );
  });

  it('gives up after its time limit', async () => {
    const base = await serve({ '/slow': () => undefined });
    const out = await tool({ timeoutMs: 200 }).run({ url: `${base}/slow` }, box.ctx);
    expect(errorOf(out.envelope).error).toBe(`${base}/slow did not load within 0.2 s.`);
  });
});
