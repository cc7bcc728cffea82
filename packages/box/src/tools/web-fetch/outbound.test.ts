import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { successOf, useToolSandbox } from '../test-context.ts';
import type { ToolEnvelope } from '../types.ts';
import { webFetchTool } from './index.ts';
import { pageFetcher, type PageFetcher } from './outbound.ts';

const box = useToolSandbox();
const servers: Server[] = [];
const fetchers: PageFetcher[] = [];
afterEach(async () => {
  await Promise.all(fetchers.splice(0).map((f) => f.close()));
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A page server on a loopback address of its own (127.0.0.x), answering `handle`. */
async function serveOn(
  host: string,
  handle: (path: string) => { status: number; headers: Record<string, string>; body: string },
) {
  const server = createServer((req, res) => {
    const answer = handle(req.url ?? '/');
    res.writeHead(answer.status, answer.headers);
    res.end(answer.body);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return `http://${host}:${(server.address() as AddressInfo).port}`;
}

function tool(allow: string | undefined) {
  const fetcher = pageFetcher(allow);
  fetchers.push(fetcher);
  return webFetchTool({ fetch: fetcher.fetch });
}

const page = {
  status: 200,
  headers: { 'content-type': 'text/html' },
  body: '<html><head><title>Wiki</title></head><body><p>Intranet page.</p></body></html>',
};
const errorOf = (envelope: ToolEnvelope) => (envelope as { error: { error: string; url: string } }).error;

it('refuses a loopback page unless the operator allowed its host', async () => {
  const wiki = await serveOn('127.0.0.2', () => page);
  const refused = await tool(undefined).run({ url: `${wiki}/home` }, box.ctx);
  expect(errorOf(refused.envelope).error).toMatch(/refused 127\.0\.0\.2.*this machine|refused 127\.0\.0\.2/);
  expect(errorOf(refused.envelope).url).toBe(`${wiki}/home`);

  const allowed = await tool('wiki.invalid, 127.0.0.2').run({ url: `${wiki}/home` }, box.ctx);
  expect(successOf(allowed.envelope)).toMatchObject({
    url: `${wiki}/home`,
    title: 'Wiki',
    content: 'Intranet page.',
  });
});

it('checks every redirect hop: an allowed host redirecting to a private address is refused there', async () => {
  const other = await serveOn('127.0.0.3', () => ({ ...page, body: '<p>secret admin page</p>' }));
  const wiki = await serveOn('127.0.0.2', () => ({
    status: 302,
    headers: { location: `${other}/admin` },
    body: '',
  }));
  const out = await tool('127.0.0.2').run({ url: `${wiki}/go` }, box.ctx);
  expect(errorOf(out.envelope).error).toContain('refused 127.0.0.3');
  expect(JSON.stringify(out)).not.toContain('secret admin page');
});

it('says which entry of a malformed allow-list is wrong', () => {
  expect(() => pageFetcher('http://wiki.lan/')).toThrow(
    /SENDBOX_WEB_ALLOW_PRIVATE_HOSTS: "http:\/\/wiki.lan\/" is not a host name/,
  );
});
