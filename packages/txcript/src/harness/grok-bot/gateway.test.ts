import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startServer } from '../../../test/fixtures/grok-bot/http-server.ts';
import { GatewayClient, GatewayError, readGatewayConfig } from './gateway.ts';

async function caught(p: Promise<unknown>): Promise<GatewayError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof GatewayError) return e;
    throw e;
  }
  throw new Error('expected a GatewayError');
}

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'grok-gw-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('gateway config', () => {
  it('reads gateway.json {host?, port, token}', async () => {
    await mkdir(join(home, 'agent-data'));
    await writeFile(join(home, 'agent-data', 'gateway.json'), JSON.stringify({ port: 1340, token: 'tok' }));
    expect(await readGatewayConfig({ HOME: home })).toEqual({
      baseUrl: 'http://127.0.0.1:1340',
      token: 'tok',
      source: join(home, 'agent-data', 'gateway.json'),
    });
  });

  it('prefers TXCRIPT_GROK_BOT_GATEWAY + TXCRIPT_GROK_BOT_TOKEN', async () => {
    const config = await readGatewayConfig({
      HOME: home,
      TXCRIPT_GROK_BOT_GATEWAY: 'http://127.0.0.1:9/',
      TXCRIPT_GROK_BOT_TOKEN: 't',
    });
    expect(config).toMatchObject({ baseUrl: 'http://127.0.0.1:9', token: 't' });
  });

  it('takes TXCRIPT_GROK_BOT_GATEWAY as txcript documents it: host:port, http://host:port, a trailing slash', async () => {
    const cases: Array<[string, string]> = [
      ['127.0.0.1:1340', 'http://127.0.0.1:1340'],
      ['http://127.0.0.1:1340', 'http://127.0.0.1:1340'],
      ['127.0.0.1:1340/', 'http://127.0.0.1:1340'],
      ['http://localhost:1340/', 'http://localhost:1340'],
      ['[::1]:1340', 'http://[::1]:1340'],
    ];
    for (const [value, baseUrl] of cases) {
      const config = await readGatewayConfig({
        HOME: home,
        TXCRIPT_GROK_BOT_GATEWAY: value,
        TXCRIPT_GROK_BOT_TOKEN: 't',
      });
      expect(config.baseUrl, value).toBe(baseUrl);
    }
  });

  it('refuses a gateway address it cannot use, naming the variable', async () => {
    for (const value of ['not a url', 'ftp://127.0.0.1:1340', 'http://127.0.0.1:1340/api', 'http://:1340']) {
      const error = await readGatewayConfig({
        HOME: home,
        TXCRIPT_GROK_BOT_GATEWAY: value,
        TXCRIPT_GROK_BOT_TOKEN: 't',
      }).catch((e: unknown) => e);
      expect(error, value).toBeInstanceOf(GatewayError);
      expect((error as GatewayError).kind).toBe('config');
      expect((error as Error).message).toContain('TXCRIPT_GROK_BOT_GATEWAY=');
      expect((error as Error).message).toContain('host:port');
    }
  });

  it('says what is missing or malformed, naming the file', async () => {
    await expect(readGatewayConfig({ HOME: home })).rejects.toThrow(
      /no gateway configured: .*gateway\.json does not exist/,
    );
    await mkdir(join(home, 'agent-data'));
    await writeFile(join(home, 'agent-data', 'gateway.json'), JSON.stringify({ port: 1340 }));
    await expect(readGatewayConfig({ HOME: home })).rejects.toThrow(/gateway\.json: token: /);
    await writeFile(join(home, 'agent-data', 'gateway.json'), '{oops');
    await expect(readGatewayConfig({ HOME: home })).rejects.toThrow(/gateway\.json is not valid JSON/);
  });
});

describe('gateway client', () => {
  it('POSTs JSON to /api/<method> with the Bearer token', async () => {
    const seen: { url?: string; auth?: string; body?: string } = {};
    const srv = await startServer((req, body, res) => {
      Object.assign(seen, { url: req.url, auth: req.headers.authorization, body });
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ agent: { id: 'n1' } }));
    });
    try {
      const client = new GatewayClient({ baseUrl: srv.url, token: 'secret' });
      expect(await client.call('createAgent', { name: 'x' })).toEqual({ agent: { id: 'n1' } });
      expect(seen).toEqual({ url: '/api/createAgent', auth: 'Bearer secret', body: '{"name":"x"}' });
    } finally {
      await srv.close();
    }
  });

  it('fails clearly on 401, other statuses, garbage, {error} bodies, timeouts and refused connections', async () => {
    const srv = await startServer((req, _body, res) => {
      switch (req.url ?? '') {
        case '/api/auth':
          res.statusCode = 401;
          res.end('no');
          return;
        case '/api/missing':
          res.statusCode = 404;
          res.end('unknown method');
          return;
        case '/api/garbage':
          res.end('<html>hello</html>');
          return;
        case '/api/err':
          res.end(JSON.stringify({ error: 'agent not found' }));
          return;
        default:
          return; // never answers
      }
    });
    const client = new GatewayClient({ baseUrl: srv.url, token: 't', timeoutMs: 150 });
    try {
      const auth = await caught(client.call('auth', {}));
      expect([auth.kind, auth.status, auth.endpoint]).toEqual(['auth', 401, `${srv.url}/api/auth`]);
      expect(auth.message).toMatch(/rejected the token \(HTTP 401\)/);
      expect((await caught(client.call('missing', {}))).message).toMatch(
        /api\/missing: HTTP 404: unknown method/,
      );
      expect((await caught(client.call('garbage', {}))).kind).toBe('bad-response');
      const err = await caught(client.call('err', {}));
      expect([err.kind, err.message]).toEqual([
        'error-body',
        expect.stringContaining('agent not found') as string,
      ]);
      const slow = await caught(client.call('slow', {}));
      expect([slow.kind, slow.message]).toEqual([
        'timeout',
        `POST ${srv.url}/api/slow: no response within 150 ms`,
      ]);
    } finally {
      await srv.close();
    }
    // A port that was just free: nothing listens there any more.
    const gone = await startServer(() => undefined);
    await gone.close();
    const down = await caught(
      new GatewayClient({ baseUrl: gone.url, token: 't' }).call('openAgent', { id: 'x' }),
    );
    expect(down.kind).toBe('unreachable');
    expect(down.message).toMatch(/api\/openAgent: gateway unreachable \(ECONNREFUSED\)/);
  });
});
