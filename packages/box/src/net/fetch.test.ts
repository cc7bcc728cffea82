/**
 * The outbound client over real HTTP on loopback. 127.0.0.2 plays a public host (the test's
 * network view says so); 127.0.0.1 plays a service on this machine that must never be reached
 * unless the operator names it; everything else keeps the real address rules.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addressKind } from './addresses.ts';
import { OutboundError } from './errors.ts';
import { OutboundClient } from './fetch.ts';
import type { OutboundOptions } from './fetch.ts';
import { parseHostList } from './reach.ts';
import type { NetworkView, ResolvedAddress } from './reach.ts';

/** A string matching `pattern`, inside toMatchObject (a bare RegExp there matches anything). */
const matching = (pattern: RegExp): string => expect.stringMatching(pattern) as string;

interface Seen {
  url: string;
  method: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface Server {
  server: http.Server;
  port: number;
  seen: Seen[];
}

async function listen(host: string, handler: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      seen.push({ url: req.url ?? '', method: req.method ?? '', headers: req.headers, body });
      handler(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, port: (server.address() as AddressInfo).port, seen } satisfies Server;
}

let outside: Server;
let inside: Server;
const lookups: string[] = [];
let rebind: ResolvedAddress[] | null = null;

const v4 = (address: string): ResolvedAddress[] => [{ address, family: 4 }];
const names: Record<string, () => ResolvedAddress[]> = {
  'outside.test': () => v4('127.0.0.2'),
  'inside.test': () => v4('127.0.0.1'),
  'intranet.test': () => v4('10.0.0.5'),
  'lan.test': () => v4('127.0.0.3'),
  // First the outside host, then this machine: a rebinding DNS server.
  'rebind.test': () => {
    const answer = rebind ?? v4('127.0.0.2');
    rebind = v4('127.0.0.1');
    return answer;
  },
};

const network: NetworkView = {
  resolve: (hostname) => {
    lookups.push(hostname);
    const found = names[hostname];
    if (hostname === 'stalled.test') return new Promise(() => undefined);
    return found ? Promise.resolve(found()) : Promise.reject(new Error(`ENOTFOUND ${hostname}`));
  },
  kindOf: (address) =>
    address === '127.0.0.2' ? 'public' : address === '127.0.0.3' ? 'private' : addressKind(address),
};

const clients: OutboundClient[] = [];
function client(options: Omit<OutboundOptions, 'network'> = {}): OutboundClient {
  const made = new OutboundClient({ network, limits: { timeoutMs: 5_000 }, ...options });
  clients.push(made);
  return made;
}

async function failure(promise: Promise<unknown>): Promise<OutboundError> {
  const error = await promise.then(
    () => new Error('expected a failure'),
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OutboundError);
  return error as OutboundError;
}

const at = (server: Server, path: string, host = 'outside.test'): string =>
  `http://${host}:${server.port}${path}`;

beforeAll(async () => {
  inside = await listen('127.0.0.1', (_req, res) => res.end('inside'));
  outside = await listen('127.0.0.2', (req, res) => {
    const url = new URL(req.url ?? '/', 'http://outside.test');
    const to = url.searchParams.get('to');
    switch (url.pathname) {
      case '/hello':
        return res.end(`hello ${req.method}`);
      case '/echo':
        return res.end(
          JSON.stringify({ method: req.method, authorization: req.headers.authorization ?? null }),
        );
      case '/redirect':
        return res
          .writeHead(Number(url.searchParams.get('status') ?? 302), { Location: to ?? '/hello' })
          .end();
      case '/loop':
        return res.writeHead(302, { Location: '/loop' }).end();
      case '/big':
        res.writeHead(200);
        res.write(Buffer.alloc(1000));
        return res.end(Buffer.alloc(1000));
      case '/declared-big':
        return res.writeHead(200, { 'Content-Length': '5000' }).end(Buffer.alloc(5000));
      case '/silent':
        return; // never answers
      case '/slow-body':
        res.writeHead(200);
        res.write('first ');
        setTimeout(() => res.end('second'), 400);
        return;
      default:
        return res.writeHead(404).end();
    }
  });
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((made) => made.close()));
});

afterAll(async () => {
  for (const server of [outside, inside]) {
    server.server.closeAllConnections();
    await new Promise((resolve) => server.server.close(resolve));
  }
});

describe('the outbound client', () => {
  it('fetches from a public host, by name or literal, and says where the response came from', async () => {
    const response = await client().fetch(at(outside, '/hello'));
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('hello GET');
    expect(response.url).toBe(at(outside, '/hello'));
    expect(await (await client().fetch(at(outside, '/hello', '127.0.0.2'))).text()).toBe('hello GET');
  });

  it('refuses this machine and private networks, by name or literal, before connecting', async () => {
    const before = inside.seen.length;
    for (const target of [
      at(inside, '/', '127.0.0.1'),
      at(inside, '/', 'inside.test'),
      at(inside, '/', '[::1]'),
      at(inside, '/', '[::ffff:127.0.0.1]'),
      at(inside, '/', '[::127.0.0.1]'),
      at(inside, '/', 'intranet.test'),
      at(inside, '/', 'lan.test'),
    ]) {
      const error = await failure(client().fetch(target));
      expect(error.failure, target).toBe('refused');
      expect(error.message, target).toMatch(/^refused \S+: /);
    }
    expect(inside.seen.length).toBe(before);
  });

  it('checks every redirect hop: a redirect to this machine or a private network is refused at that hop', async () => {
    const before = inside.seen.length;
    for (const to of [
      at(inside, '/secret', '127.0.0.1'),
      at(inside, '/secret', 'inside.test'),
      'http://intranet.test/',
    ]) {
      const error = await failure(client().fetch(`${at(outside, '/redirect')}?to=${encodeURIComponent(to)}`));
      expect(error.failure, to).toBe('refused');
      expect(error.host, to).toBe(new URL(to).hostname);
    }
    expect(inside.seen.length).toBe(before);
  });

  it('reaches hosts the operator named (SENDBOX_WEB_ALLOW_PRIVATE_HOSTS), loopback ones included, directly or through a redirect', async () => {
    const trustedHosts = parseHostList(' inside.test, 127.0.0.1 ,', 'SENDBOX_WEB_ALLOW_PRIVATE_HOSTS');
    expect(trustedHosts).toEqual(['inside.test', '127.0.0.1']);
    const operator = client({ policy: { trustedHosts } });
    expect(await (await operator.fetch(at(inside, '/', 'inside.test'))).text()).toBe('inside');
    expect(await (await operator.fetch(at(inside, '/', '127.0.0.1'))).text()).toBe('inside');
    const via = `${at(outside, '/redirect')}?to=${encodeURIComponent(at(inside, '/named', 'INSIDE.test.'))}`;
    expect(await (await operator.fetch(via)).text()).toBe('inside');
    // Only the names listed: another name for the same address, or a private network, stays out.
    expect((await failure(operator.fetch(at(inside, '/', 'localhost')))).failure).not.toBe(undefined);
    expect((await failure(operator.fetch('http://intranet.test/'))).failure).toBe('refused');
  });

  it('reaches private networks (never this machine) with reach: private', async () => {
    const lan = client({ policy: { reach: 'private' } });
    // lan.test is 127.0.0.3, which the test's view calls private and where nothing listens:
    // the connect is tried, and refused by the OS.
    expect((await failure(lan.fetch(at(inside, '/', 'lan.test')))).failure).toBe('unreachable');
    expect((await failure(client().fetch(at(inside, '/', 'lan.test')))).failure).toBe('refused');
    expect((await failure(lan.fetch(at(inside, '/', 'inside.test')))).failure).toBe('refused');
  });

  it('resolves a name once per connection and connects to the address it checked (no rebinding)', async () => {
    rebind = null;
    const before = lookups.length;
    const pinned = client();
    expect(await (await pinned.fetch(at(outside, '/hello', 'rebind.test'))).text()).toBe('hello GET');
    expect(lookups.slice(before)).toEqual(['rebind.test']);
    // A fresh connection looks the name up again, and now it points to this machine.
    expect((await failure(client().fetch(at(outside, '/hello', 'rebind.test')))).failure).toBe('refused');
  });

  it('sends credentials to the same origin only, and turns a POST into a GET on 303', async () => {
    const headers = { Authorization: 'Bearer secret' };
    const same = await client().fetch(`${at(outside, '/redirect')}?to=/echo`, { headers });
    expect(await same.json()).toEqual({ method: 'GET', authorization: 'Bearer secret' });
    const other = at(outside, '/echo', '127.0.0.2');
    const cross = await client().fetch(`${at(outside, '/redirect')}?to=${encodeURIComponent(other)}`, {
      headers,
    });
    expect(await cross.json()).toEqual({ method: 'GET', authorization: null });
    expect(cross.redirected).toBe(true);
    const post = { method: 'POST', body: '{"x":1}', headers: { 'Content-Type': 'application/json' } };
    expect(
      await (await client().fetch(`${at(outside, '/redirect')}?status=303&to=/hello`, post)).text(),
    ).toBe('hello GET');
    const before = outside.seen.length;
    expect(
      await (await client().fetch(`${at(outside, '/redirect')}?status=307&to=/hello`, post)).text(),
    ).toBe('hello POST');
    expect(outside.seen.slice(before).map(({ method, body }) => `${method} ${body}`)).toEqual([
      'POST {"x":1}',
      'POST {"x":1}',
    ]);
  });

  it('follows at most maxRedirects, and leaves redirects to the caller with redirect: manual', async () => {
    const error = await failure(client({ limits: { maxRedirects: 2 } }).fetch(at(outside, '/loop')));
    expect(error).toMatchObject({
      failure: 'too-many-redirects',
      message: matching(/more than 2 redirects/),
    });
    const manual = await client().fetch(at(outside, '/loop'), { redirect: 'manual' });
    expect(manual.status).toBe(302);
    expect(manual.headers.get('location')).toBe('/loop');
    expect((await failure(client().fetch(at(outside, '/loop'), { redirect: 'error' }))).failure).toBe(
      'too-many-redirects',
    );
  });

  it('caps the body, declared or streamed', async () => {
    const capped = client({ limits: { maxBytes: 1500 } });
    expect((await failure(capped.fetch(at(outside, '/declared-big')))).failure).toBe('too-large');
    const response = await capped.fetch(at(outside, '/big'));
    const error = await failure(response.arrayBuffer());
    expect(error).toMatchObject({
      failure: 'too-large',
      message: matching(/more than 1500 bytes/),
    });
  });

  it('one deadline covers the name lookup, the wait for an answer and the body', async () => {
    const quick = client({ limits: { timeoutMs: 300 } });
    expect(await failure(quick.fetch('http://stalled.test/'))).toMatchObject({
      failure: 'timeout',
      message: matching(/within 300 ms/),
    });
    expect((await failure(quick.fetch(at(outside, '/silent')))).failure).toBe('timeout');
    const response = await quick.fetch(at(outside, '/slow-body'));
    expect((await failure(response.text())).failure).toBe('timeout');
  });

  it('without a whole-exchange deadline, a body may take longer than the wait for its head (a stream)', async () => {
    const streaming = new OutboundClient({ network, limits: { responseTimeoutMs: 200 } });
    clients.push(streaming);
    expect((await failure(streaming.fetch(at(outside, '/silent')))).failure).toBe('timeout');
    expect(await (await streaming.fetch(at(outside, '/slow-body'))).text()).toBe('first second');
  });

  it('stops when the caller aborts, and reports a refused connection as a value', async () => {
    const controller = new AbortController();
    const response = await client().fetch(at(outside, '/slow-body'), { signal: controller.signal });
    controller.abort();
    expect((await failure(response.text())).failure).toBe('aborted');
    const closed = await failure(client().fetch(at(inside, '/')));
    expect(closed).toMatchObject({
      failure: 'unreachable',
      host: `outside.test:${inside.port}`,
      message: matching(/ECONNREFUSED/),
    });
  });

  it('refuses URLs it does not fetch', async () => {
    for (const url of [
      'ftp://outside.test/',
      'file:///etc/passwd',
      'http://user:pw@outside.test/',
      'not a url',
    ]) {
      expect((await failure(client().fetch(url))).failure, url).toBe('bad-url');
    }
    const error = await failure(
      client().fetch(`${at(outside, '/redirect')}?to=${encodeURIComponent('file:///etc/passwd')}`),
    );
    expect(error).toMatchObject({
      failure: 'bad-url',
      message: matching(/only http and https/),
    });
  });
});

describe('operator host lists', () => {
  it('takes names and IP literals, and names a bad entry', () => {
    expect(parseHostList(undefined, 'X')).toEqual([]);
    expect(parseHostList('NAS.lan., [::1], 10.0.0.7, ::ffff:127.0.0.1', 'X')).toEqual([
      'nas.lan',
      '::1',
      '10.0.0.7',
      '::ffff:127.0.0.1',
    ]);
    expect(() => parseHostList('nas.lan, http://x.example/', 'SENDBOX_WEB_ALLOW_PRIVATE_HOSTS')).toThrow(
      /SENDBOX_WEB_ALLOW_PRIVATE_HOSTS: "http:\/\/x.example\/" is not a host name or IP address/,
    );
  });
});
