/**
 * The image proxy over real HTTP, without the internet: an "outside host" is a loopback
 * server on 127.0.0.2 that an injected resolver names `outside.test` and an injected
 * address policy lets through; everything else goes through the real policy, which
 * refuses loopback, private and reserved targets. A second server on 127.0.0.1 plays
 * something on the user's machine that must never be reached.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from './errors.ts';
import { ImageHosts, imageHostsPath } from './image-hosts.ts';
import { addressKind } from '../net/addresses.ts';
import { SYSTEM_NETWORK } from '../net/reach.ts';
import type { ResolvedAddress } from '../net/reach.ts';
import { fetchRemoteImage } from './image-proxy.ts';
import type { ImageFetchPolicy } from './image-proxy.ts';
import { makeTempDir, openLoginLink, pageHeaders, startTestBox, type SignIn } from './test-support.ts';
import type { TestBox } from './test-support.ts';
import { testModel } from './test-model.ts';

/** A string matching `pattern`, inside toMatchObject (a bare RegExp there matches anything). */
const matching = (pattern: RegExp): string => expect.stringMatching(pattern) as string;

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
const MAX_BYTES = 4096;

interface Upstream {
  server: http.Server;
  port: number;
  requests: http.IncomingHttpHeaders[];
  paths: string[];
}

async function listen(host: string, handler: http.RequestListener): Promise<Upstream> {
  const requests: http.IncomingHttpHeaders[] = [];
  const paths: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.headers);
    paths.push(req.url ?? '');
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { server, port: (server.address() as AddressInfo).port, requests, paths };
}

let outside: Upstream;
let inside: Upstream;
let box: TestBox;
let signIn: SignIn;

const NAMES: Record<string, ResolvedAddress[]> = {
  'outside.test': [{ address: '127.0.0.2', family: 4 }],
  'intranet.test': [{ address: '10.0.0.5', family: 4 }],
  'localhost.test': [{ address: '127.0.0.1', family: 4 }],
  'mixed.test': [
    { address: '127.0.0.2', family: 4 },
    { address: '192.168.1.20', family: 4 },
  ],
};

/** The real policy, except that 127.0.0.2 plays a public address. */
const policy: ImageFetchPolicy = {
  resolve: (hostname) => {
    const found = NAMES[hostname];
    return found ? Promise.resolve(found) : Promise.reject(new Error(`ENOTFOUND ${hostname}`));
  },
  kindOf: (address) => (address === '127.0.0.2' ? 'public' : addressKind(address)),
};

beforeAll(async () => {
  inside = await listen('127.0.0.1', (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'image/png' }).end(PNG);
  });
  outside = await listen('127.0.0.2', (req, res) => {
    const at = new URL(req.url ?? '/', 'http://outside.test');
    switch (at.pathname) {
      case '/pixel.png':
        return res.writeHead(200, { 'Content-Type': 'image/png', 'Set-Cookie': 'tracker=1' }).end(PNG);
      case '/page.html':
        return res.writeHead(200, { 'Content-Type': 'text/html' }).end('<h1>not an image</h1>');
      case '/untyped':
        return res.writeHead(200).end(PNG);
      case '/declared-big.png':
        return res
          .writeHead(200, { 'Content-Type': 'image/png', 'Content-Length': String(MAX_BYTES + 1) })
          .end(Buffer.alloc(MAX_BYTES + 1));
      case '/streamed-big.png':
        res.writeHead(200, { 'Content-Type': 'image/png' });
        res.write(Buffer.alloc(MAX_BYTES));
        return res.end(Buffer.alloc(10));
      case '/to-pixel':
        return res.writeHead(302, { Location: '/pixel.png' }).end();
      case '/to-loopback':
        return res.writeHead(302, { Location: `http://127.0.0.1:${inside.port}/secret.png` }).end();
      case '/to-private-name':
        return res.writeHead(301, { Location: `http://intranet.test:${outside.port}/pixel.png` }).end();
      case '/to-file':
        return res.writeHead(302, { Location: 'file:///etc/passwd' }).end();
      case '/loop':
        return res.writeHead(302, { Location: `/loop?n=${Number(at.searchParams.get('n') ?? 0) + 1}` }).end();
      case '/slow':
        return; // never answers
      default:
        return res.writeHead(404).end();
    }
  });
  box = await startTestBox(testModel(), {
    imagePolicy: policy,
    imageLimits: { maxBytes: MAX_BYTES, timeoutMs: 400, maxRedirects: 3 },
  });
  signIn = await openLoginLink(box.gateway.loginUrl());
});

afterAll(async () => {
  await box.close();
  for (const upstream of [outside, inside]) {
    upstream.server.closeAllConnections();
    await new Promise((resolve) => upstream.server.close(resolve));
  }
});

const outsideUrl = (pathname: string): string => `http://outside.test:${outside.port}${pathname}`;

async function proxy(url: string, headers = pageHeaders(box.gateway, signIn)) {
  const { Origin: _sameOriginGet, ...get } = headers;
  const response = await fetch(
    new URL(`api/remoteImage?${new URLSearchParams({ url }).toString()}`, box.gateway.url),
    {
      headers: { ...get, Authorization: `Bearer ${box.gateway.token}` },
    },
  );
  const body = Buffer.from(await response.arrayBuffer());
  return { status: response.status, headers: response.headers, body };
}

async function proxyError(url: string): Promise<{ status: number; error: string }> {
  const { status, body } = await proxy(url);
  return { status, error: (JSON.parse(body.toString()) as { error: string }).error };
}

describe('fetching a remote image for the page', () => {
  it('serves an outside image from the box origin, sending the outside host no cookie or credential', async () => {
    const before = outside.requests.length;
    const { status, headers, body } = await proxy(outsideUrl('/pixel.png'));
    expect(status).toBe(200);
    expect(body.equals(PNG)).toBe(true);
    expect(headers.get('content-type')).toBe('image/png');
    expect(headers.get('content-security-policy')).toMatch(/sandbox/);
    expect(headers.get('set-cookie')).toBeNull(); // the outside host's cookie stays outside
    const seen = outside.requests.slice(before);
    expect(seen).toHaveLength(1); // fetched once
    expect(seen[0]!.cookie).toBeUndefined();
    expect(seen[0]!.authorization).toBeUndefined();
    expect(seen[0]!.referer).toBeUndefined();
    expect(seen[0]!['x-sendbox-session']).toBeUndefined();
  });

  it('works with the browser session (cookie + tab proof) and refuses a request without it', async () => {
    const url = `api/remoteImage?url=${encodeURIComponent(outsideUrl('/pixel.png'))}`;
    const { Origin: _origin, ...headers } = pageHeaders(box.gateway, signIn);
    expect((await fetch(new URL(url, box.gateway.url), { headers })).status).toBe(200);
    expect((await fetch(new URL(url, box.gateway.url), { headers: { Cookie: signIn.cookie } })).status).toBe(
      401,
    );
    expect((await fetch(new URL(url, box.gateway.url))).status).toBe(401);
  });

  it('follows a redirect to another outside address', async () => {
    const { status, body } = await proxy(outsideUrl('/to-pixel'));
    expect(status).toBe(200);
    expect(body.equals(PNG)).toBe(true);
  });
});

describe('what the proxy refuses', () => {
  it('loopback, private and reserved targets, by address literal or by the name’s resolved address', async () => {
    const before = inside.requests.length;
    const targets = [
      `http://127.0.0.1:${inside.port}/secret.png`,
      `http://localhost.test:${inside.port}/secret.png`,
      `http://[::1]:${inside.port}/secret.png`,
      `http://[::ffff:127.0.0.1]:${inside.port}/secret.png`,
      `http://0.0.0.0:${inside.port}/secret.png`,
      'http://10.0.0.5/x.png',
      'http://169.254.169.254/latest/meta-data/',
      'http://[fe80::1]/x.png',
      'http://[fd00::1]/x.png',
      `http://intranet.test:${outside.port}/pixel.png`,
      `http://mixed.test:${outside.port}/pixel.png`,
    ];
    for (const target of targets) {
      const { status, error } = await proxyError(target);
      expect(status, target).toBe(403);
      expect(error, target).toMatch(/refused .*the image proxy fetches from public addresses only/);
    }
    expect(inside.requests.length).toBe(before);
  });

  it('the real policy refuses loopback, so 127.0.0.2 is reached only because the test allows it', async () => {
    await expect(
      fetchRemoteImage(new URL(`http://127.0.0.2:${outside.port}/pixel.png`)),
    ).rejects.toMatchObject({
      status: 403,
    });
    await expect(
      fetchRemoteImage(new URL(`http://localhost:${outside.port}/pixel.png`), SYSTEM_NETWORK),
    ).rejects.toBeInstanceOf(GatewayError);
  });

  it('a redirect to loopback or to a name that resolves to a private address', async () => {
    const before = inside.requests.length;
    expect((await proxyError(outsideUrl('/to-loopback'))).status).toBe(403);
    expect((await proxyError(outsideUrl('/to-private-name'))).status).toBe(403);
    expect(inside.requests.length).toBe(before);
  });

  it('a redirect to another scheme, and more than three redirects', async () => {
    expect(await proxyError(outsideUrl('/to-file'))).toMatchObject({
      status: 400,
      error: matching(/only http and https/),
    });
    expect(await proxyError(outsideUrl('/loop'))).toMatchObject({
      status: 502,
      error: matching(/more than 3 redirects/),
    });
    expect(outside.paths.filter((at) => at.startsWith('/loop')).length).toBe(4);
  });

  it('a body that is not an image', async () => {
    expect(await proxyError(outsideUrl('/page.html'))).toMatchObject({
      status: 415,
      error: matching(/text\/html/),
    });
    expect((await proxyError(outsideUrl('/untyped'))).status).toBe(415);
  });

  it('an image over the size cap, declared or streamed', async () => {
    expect((await proxyError(outsideUrl('/declared-big.png'))).status).toBe(413);
    expect((await proxyError(outsideUrl('/streamed-big.png'))).status).toBe(413);
  });

  it('a name that does not resolve in time', async () => {
    const stalled: ImageFetchPolicy = { ...policy, resolve: () => new Promise(() => undefined) };
    await expect(
      fetchRemoteImage(new URL('http://stalled.test/x.png'), stalled, {
        maxBytes: MAX_BYTES,
        timeoutMs: 200,
        maxRedirects: 3,
      }),
    ).rejects.toMatchObject({ status: 504 });
  });

  it('a host that does not answer in time', async () => {
    const started = Date.now();
    expect(await proxyError(outsideUrl('/slow'))).toMatchObject({
      status: 504,
      error: matching(/within 400 ms/),
    });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('addresses that are not http(s) URLs or carry credentials', async () => {
    for (const target of [
      '',
      'not a url',
      'file:///etc/passwd',
      'data:image/png;base64,AAAA',
      'ftp://outside.test/x.png',
    ]) {
      expect((await proxyError(target)).status, target).toBe(400);
    }
    expect((await proxyError(`http://user:pass@outside.test:${outside.port}/pixel.png`)).status).toBe(400);
  });
});

describe('allowed image domains', () => {
  it('are kept per box in the data dir (0600) and survive a restart', async () => {
    const allowed = await box.call('allowImageHost', { host: 'Images.Example.COM' });
    expect(allowed).toEqual({ status: 200, body: { hosts: ['images.example.com'] } });
    await box.call('allowImageHost', { host: 'cdn.example.org' });
    const file = imageHostsPath(box.dataDir);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect((await ImageHosts.open(box.dataDir)).list()).toEqual(['cdn.example.org', 'images.example.com']);
    expect((await box.call('forgetImageHost', { host: 'cdn.example.org' })).body).toEqual({
      hosts: ['images.example.com'],
    });
    expect((await box.call('listImageHosts')).body).toEqual({ hosts: ['images.example.com'] });
  });

  it('must be plain domain names', async () => {
    for (const host of [
      'https://example.com',
      'example.com/x',
      'example.com:443',
      '',
      '-bad.example',
      'a b',
    ]) {
      const { status, body } = await box.call('allowImageHost', { host });
      expect(status, host).toBe(400);
      expect((body as { error: string }).error, host).toMatch(/allowImageHost/);
    }
  });

  it('a damaged list stops the start and is left as it was', async () => {
    const dataDir = await makeTempDir('sendbox-image-hosts-');
    try {
      await fs.promises.writeFile(path.join(dataDir, 'image-hosts.json'), '{"hosts": [42]}');
      await expect(ImageHosts.open(dataDir)).rejects.toThrow(
        /image-hosts\.json is not a list of image domains/,
      );
      expect(await fs.promises.readFile(path.join(dataDir, 'image-hosts.json'), 'utf8')).toBe(
        '{"hosts": [42]}',
      );
    } finally {
      await fs.promises.rm(dataDir, { recursive: true, force: true });
    }
  });
});
