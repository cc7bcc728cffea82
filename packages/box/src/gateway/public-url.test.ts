/**
 * `--public-url`: the gateway served beyond loopback behind a TLS proxy. The rules, then the real
 * gateway over HTTP on a wildcard bind, with the proxy played by requests that carry its `Host`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readGatewayDescriptor } from './descriptor.ts';
import { gatewayAddress } from './guards.ts';
import { authorityHost, bindAddress, loopbackHost, parsePublicUrl, PublicUrlError } from './public-url.ts';
import { GatewayStartError, type RunningGateway } from './server.ts';
import { makeTempDir, rawRequest, startGatewayOn, startTestBox, type TestBox } from './test-support.ts';
import { testModel } from './test-model.ts';

describe('parsePublicUrl', () => {
  it('takes an https origin, with the Host values a proxy forwards for it', () => {
    expect(parsePublicUrl('https://Box.Example.com')).toEqual({
      origin: 'https://box.example.com',
      hosts: ['box.example.com', 'box.example.com:443'],
    });
    expect(parsePublicUrl('https://box.example.com:8443/')).toEqual({
      origin: 'https://box.example.com:8443',
      hosts: ['box.example.com:8443'],
    });
  });

  it('refuses plain http, paths, queries, credentials and non-URLs, saying what to pass', () => {
    expect(() => parsePublicUrl('http://box.example.com')).toThrow(/must be an https URL.*reverse proxy/);
    expect(() => parsePublicUrl('https://box.example.com/sendbox')).toThrow(/origin only/);
    expect(() => parsePublicUrl('https://box.example.com/?a=1')).toThrow(/origin only/);
    expect(() => parsePublicUrl('https://me:pw@box.example.com')).toThrow(/origin only/);
    expect(() => parsePublicUrl('box.example.com')).toThrow(/not a URL.*https:\/\/box\.example\.com/);
  });
});

describe('bindAddress', () => {
  const publicUrl = parsePublicUrl('https://box.example.com');

  it('binds loopback always, and other addresses only with a public URL', () => {
    expect(bindAddress('localhost')).toBe('127.0.0.1');
    expect(bindAddress('[::1]')).toBe('::1');
    expect(bindAddress('127.0.0.2')).toBe('127.0.0.2');
    for (const address of ['0.0.0.0', '::', '10.1.2.3']) {
      expect(() => bindAddress(address), address).toThrow(/without --public-url.*ssh -L/s);
      expect(bindAddress(address, publicUrl)).toBe(address);
    }
  });

  it('refuses a host name even with a public URL (a name can resolve anywhere)', () => {
    expect(() => bindAddress('box.example.com', publicUrl)).toThrow(PublicUrlError);
  });
});

describe('loopbackHost', () => {
  it('reaches a wildcard bind on loopback, of its own family; gateway.json and the guard agree', () => {
    expect(loopbackHost('0.0.0.0')).toBe('127.0.0.1');
    expect(loopbackHost('::')).toBe('::1');
    expect(loopbackHost('127.0.0.2')).toBe('127.0.0.2');
    expect(authorityHost(loopbackHost('::'))).toBe('[::1]');
    const publicUrl = parsePublicUrl('https://box.example.com');
    expect(gatewayAddress('::', 1340, publicUrl).home).toBe('https://box.example.com');
    expect(gatewayAddress('::', 1340).home).toBe('http://[::1]:1340');
    expect(gatewayAddress('0.0.0.0', 1340).home).toBe('http://127.0.0.1:1340');
  });
});

describe('a gateway behind a TLS proxy', () => {
  let box: TestBox;
  let dataDir: string;
  let gateway: RunningGateway;
  const PUBLIC = 'box.example.com';

  beforeAll(async () => {
    box = await startTestBox(testModel());
    dataDir = await makeTempDir('sendbox-public-');
    gateway = await startGatewayOn(box.host, dataDir, {
      webRoot: box.webRoot,
      bindHost: '0.0.0.0',
      publicUrl: parsePublicUrl(`https://${PUBLIC}`),
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await box.close();
    await fs.promises.rm(dataDir, { recursive: true, force: true });
  });

  const local = () => `http://127.0.0.1:${gateway.port}/`;
  async function signIn(host: string) {
    const link = new URL(gateway.loginUrl());
    const response = await rawRequest(local(), {
      path: link.pathname + link.search,
      headers: { Host: host },
    });
    const setCookie = String(response.headers['set-cookie'] ?? '');
    return {
      status: response.status,
      setCookie,
      cookie: setCookie.split(';')[0] ?? '',
      tabProof: /#session=([\w-]+)$/.exec(String(response.headers.location ?? ''))?.[1] ?? '',
    };
  }
  function listAgents(host: string, origin: string, session: { cookie: string; tabProof: string }) {
    return rawRequest(local(), {
      method: 'POST',
      path: '/api/listAgents',
      headers: {
        Host: host,
        Origin: origin,
        Cookie: session.cookie,
        'X-Sendbox-Session': session.tabProof,
        'Content-Type': 'application/json',
      },
      body: '{}',
    });
  }

  it('listens on the wildcard address, prints the public login link, and tells local clients loopback', async () => {
    expect(gateway.bindHost).toBe('0.0.0.0');
    expect(gateway.userUrl).toBe(`https://${PUBLIC}/`);
    expect(gateway.loginUrl()).toMatch(new RegExp(`^https://${PUBLIC}/login\\?code=`));
    expect((await readGatewayDescriptor(dataDir))?.host).toBe('127.0.0.1');
  });

  it('signs a browser in through the public host with a Secure cookie, and serves its API calls', async () => {
    const session = await signIn(PUBLIC);
    expect(session.status).toBe(303);
    expect(session.setCookie).toMatch(/; Secure;/);
    expect(session.setCookie).toMatch(/HttpOnly; SameSite=Strict/);
    const listed = await listAgents(PUBLIC, `https://${PUBLIC}`, session);
    expect(listed.status, listed.body).toBe(200);
  });

  it('keeps loopback working, without Secure (plain http there)', async () => {
    const session = await signIn(`127.0.0.1:${gateway.port}`);
    expect(session.status).toBe(303);
    expect(session.setCookie).not.toMatch(/Secure/);
    const listed = await listAgents(`127.0.0.1:${gateway.port}`, `http://127.0.0.1:${gateway.port}`, session);
    expect(listed.status, listed.body).toBe(200);
  });

  it('refuses another Host, the public host over plain http, and a foreign Origin', async () => {
    const session = await signIn(PUBLIC);
    const otherHost = await listAgents('evil.example.com', `https://${PUBLIC}`, session);
    expect(otherHost.status).toBe(403);
    expect(otherHost.body).toMatch(/is not this gateway; use https:\/\/box\.example\.com\//);
    // The bind address of a wildcard listen is no name of the gateway's: plain HTTP from afar is refused.
    expect((await listAgents(`0.0.0.0:${gateway.port}`, `https://${PUBLIC}`, session)).status).toBe(403);
    expect((await listAgents(PUBLIC, `http://${PUBLIC}`, session)).status).toBe(403);
    expect((await listAgents(PUBLIC, 'https://evil.example.com', session)).status).toBe(403);
  });

  it('without a public URL, a wildcard bind is refused with the fix, and no gateway.json is written', async () => {
    const other = await makeTempDir('sendbox-public-refused-');
    try {
      const started = startGatewayOn(box.host, other, { webRoot: box.webRoot, bindHost: '0.0.0.0' });
      await expect(started).rejects.toThrow(GatewayStartError);
      await expect(started).rejects.toThrow(/--public-url https:\/\/<its name>/);
      expect(fs.existsSync(path.join(other, 'gateway.json'))).toBe(false);
    } finally {
      await fs.promises.rm(other, { recursive: true, force: true });
    }
  });
});
