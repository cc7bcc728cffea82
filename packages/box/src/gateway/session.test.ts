/**
 * Signing a browser in, over real HTTP against a real gateway: the page carries no token,
 * a one-time login link sets an HttpOnly SameSite=Strict cookie, the cookie counts only
 * with the page's CSRF proofs, the bearer token keeps working for the CLI, and sessions
 * survive a restart on the same data dir.
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LOGIN_CODE_TTL_MS, mintLoginCode, readSessionKey, sessionKeyPath } from './session.ts';
import { makeTempDir, openLoginLink, pageHeaders, startGatewayOn, startTestBox } from './test-support.ts';
import type { TestBox } from './test-support.ts';
import { testModel } from './test-model.ts';

let box: TestBox;

beforeAll(async () => {
  box = await startTestBox(testModel());
});
afterAll(async () => {
  await box.close();
});

/** The body is read at once: an unread body keeps its socket busy, and shutdown would wait for it. */
async function listAgents(headers: Record<string, string>): Promise<{ status: number; error?: string }> {
  const response = await fetch(new URL('api/listAgents', box.gateway.url), {
    method: 'POST',
    headers,
    body: '{}',
  });
  const body = (await response.json()) as { error?: string };
  return { status: response.status, ...(body.error === undefined ? {} : { error: body.error }) };
}

describe('the page without a session', () => {
  it('is a short sign-in page with no token and no script', async () => {
    for (const at of ['/', '/index.html']) {
      const response = await fetch(new URL(at, box.gateway.url));
      expect(response.status, at).toBe(401);
      const html = await response.text();
      expect(html).toContain('sendbox login');
      expect(html).not.toContain(box.gateway.token);
      expect(html).not.toContain('<script');
      expect(response.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
      expect(response.headers.get('set-cookie')).toBeNull();
    }
  });

  it('does not open the API to a cookie-less browser request', async () => {
    const response = await listAgents({ 'X-Sendbox-Request': '1', Origin: new URL(box.gateway.url).origin });
    expect(response.status).toBe(401);
    expect(response.error).toMatch(/sendbox login/);
  });
});

describe('the login link', () => {
  it('sets an HttpOnly, SameSite=Strict session cookie and redirects (303) to the clean URL', async () => {
    const link = box.gateway.loginUrl();
    expect(link).toMatch(new RegExp(`^${box.gateway.url}login\\?code=[\\w.-]+$`));
    expect(link).not.toContain(box.gateway.token);
    const signIn = await openLoginLink(link);
    expect(signIn.status).toBe(303);
    expect(signIn.location).toBe('/');
    const flags = signIn.setCookie.split(';').map((part) => part.trim().toLowerCase());
    expect(flags).toContain('httponly');
    expect(flags).toContain('samesite=strict');
    expect(flags).toContain('path=/');
    expect(flags).not.toContain('secure'); // plain http on loopback: a Secure cookie would never be sent
    expect(flags.some((flag) => flag.startsWith('max-age='))).toBe(true);

    const page = await fetch(box.gateway.url, { headers: { Cookie: signIn.cookie } });
    expect(page.status).toBe(200);
    expect(await page.text()).not.toContain(box.gateway.token);
  });

  it('works once, and a HEAD does not spend it', async () => {
    const link = box.gateway.loginUrl();
    expect((await fetch(link, { method: 'HEAD', redirect: 'manual' })).status).toBe(405);
    expect((await openLoginLink(link)).status).toBe(303);
    const again = await openLoginLink(link);
    expect(again.status).toBe(403);
    expect(again.setCookie).toBe('');
    expect(await (await fetch(link)).text()).toMatch(/used already.*sendbox login/s);
  });

  it('refuses an expired code, a tampered one and one minted for another gateway instance', async () => {
    const key = (await readSessionKey(box.dataDir))!;
    const expired = mintLoginCode(key, box.gateway.token, Date.now() - LOGIN_CODE_TTL_MS - 1_000);
    const fresh = mintLoginCode(key, box.gateway.token);
    const tampered = `${fresh.slice(0, -2)}${fresh.endsWith('AA') ? 'BB' : 'AA'}`;
    const otherInstance = mintLoginCode(key, 'token-of-an-earlier-start');
    const cases: Array<[string, RegExp]> = [
      [expired, /expired/],
      [tampered, /not valid/],
      [otherInstance, /not valid/],
      ['', /not valid/],
    ];
    for (const [code, message] of cases) {
      const response = await fetch(new URL(`login?code=${encodeURIComponent(code)}`, box.gateway.url), {
        redirect: 'manual',
      });
      expect(response.status, code).toBe(403);
      expect(response.headers.get('set-cookie'), code).toBeNull();
      expect(await response.text(), code).toMatch(message);
    }
  });

  it('is refused once it expires, even if never used', async () => {
    const link = box.gateway.loginUrl();
    const now = Date.now();
    vi.spyOn(Date, 'now').mockReturnValue(now + LOGIN_CODE_TTL_MS + 1_000);
    try {
      expect((await openLoginLink(link)).status).toBe(403);
    } finally {
      vi.restoreAllMocks();
    }
  });
});

describe('the session cookie and its CSRF guard', () => {
  let cookie: string;
  beforeAll(async () => {
    cookie = (await openLoginLink(box.gateway.loginUrl())).cookie;
  });

  it('signs in the page’s requests: cookie, X-Sendbox-Request and its own Origin', async () => {
    const response = await listAgents(pageHeaders(box.gateway, cookie));
    expect(response.status).toBe(200);
  });

  it('refuses the cookie without the custom header', async () => {
    const { 'X-Sendbox-Request': _dropped, ...headers } = pageHeaders(box.gateway, cookie);
    const response = await listAgents(headers);
    expect(response.status).toBe(403);
    expect(response.error).toMatch(/x-sendbox-request/i);
  });

  it('refuses the cookie with a foreign Origin, without an Origin on a POST, or from another site', async () => {
    const base = pageHeaders(box.gateway, cookie);
    const { Origin: _origin, ...noOrigin } = base;
    for (const headers of [
      { ...base, Origin: 'http://evil.example' },
      noOrigin,
      { ...base, 'Sec-Fetch-Site': 'cross-site' },
      { ...base, 'Sec-Fetch-Site': 'same-site' },
    ]) {
      expect((await listAgents(headers)).status, JSON.stringify(headers)).toBe(403);
    }
  });

  it('refuses a forged or foreign cookie', async () => {
    const [name, value = ''] = cookie.split('=');
    const forged = `${name}=${value.slice(0, -2)}${value.endsWith('AA') ? 'BB' : 'AA'}`;
    for (const bad of [forged, `${name}=1.2.3`, `sendbox_other=${value}`]) {
      expect((await listAgents(pageHeaders(box.gateway, bad))).status, bad).toBe(401);
    }
  });

  it('never lets a cookie rescue a wrong bearer token, and the bearer alone still works for the CLI', async () => {
    const wrong = await listAgents({ ...pageHeaders(box.gateway, cookie), Authorization: 'Bearer nope' });
    expect(wrong.status).toBe(401);
    expect((await listAgents({ Authorization: `Bearer ${box.gateway.token}` })).status).toBe(200);
  });

  it('opens the event stream with the cookie (a same-origin GET carries no Origin)', async () => {
    const { Origin: _origin, ...headers } = pageHeaders(box.gateway, cookie);
    const { 'X-Sendbox-Request': _header, ...withoutHeader } = headers;
    const refused = await fetch(new URL('api/events', box.gateway.url), { headers: withoutHeader });
    expect(refused.status).toBe(403);
    await refused.body?.cancel();
    // Its own socket, closed when done: a stream left on a pooled socket holds up the gateway's shutdown.
    const stream = await new Promise<http.IncomingMessage>((resolve, reject) =>
      http
        .get(new URL('api/events', box.gateway.url), { headers, agent: false }, resolve)
        .on('error', reject),
    );
    expect(stream.statusCode).toBe(200);
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    stream.destroy();
  });
});

describe('the session key', () => {
  it('is kept in the data dir, mode 0600, so sessions survive a restart; old login links do not', async () => {
    const dataDir = await makeTempDir('sendbox-session-');
    const start = (port: number) => startGatewayOn(box.host, dataDir, { webRoot: box.webRoot, port });
    try {
      const first = await start(0);
      const { cookie } = await openLoginLink(first.loginUrl());
      const unused = first.loginUrl();
      const key = await fs.promises.readFile(sessionKeyPath(dataDir), 'utf8');
      expect(fs.statSync(sessionKeyPath(dataDir)).mode & 0o777).toBe(0o600);
      await first.close();

      const second = await start(first.port);
      try {
        expect(await fs.promises.readFile(sessionKeyPath(dataDir), 'utf8')).toBe(key);
        const page = await fetch(second.url, { headers: { Cookie: cookie } });
        expect(page.status).toBe(200);
        await page.body?.cancel();
        const api = await fetch(new URL('api/listAgents', second.url), {
          method: 'POST',
          headers: pageHeaders(second, cookie),
          body: '{}',
        });
        expect(api.status).toBe(200);
        await api.body?.cancel();
        // A link printed before the restart belonged to the old instance.
        expect((await openLoginLink(unused)).status).toBe(403);
        expect((await openLoginLink(second.loginUrl())).status).toBe(303);
      } finally {
        await second.close();
      }
      expect(fs.readdirSync(dataDir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    } finally {
      await fs.promises.rm(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses to start on a damaged key file instead of replacing it', async () => {
    const dataDir = await makeTempDir('sendbox-session-bad-');
    try {
      await fs.promises.writeFile(path.join(dataDir, 'session.key'), 'not a key\n', { mode: 0o600 });
      await expect(startGatewayOn(box.host, dataDir, { webRoot: box.webRoot })).rejects.toThrow(
        /session\.key does not hold a session key.*delete it/,
      );
      expect(await fs.promises.readFile(path.join(dataDir, 'session.key'), 'utf8')).toBe('not a key\n');
      expect(fs.existsSync(path.join(dataDir, 'gateway.json'))).toBe(false);
    } finally {
      await fs.promises.rm(dataDir, { recursive: true, force: true });
    }
  });
});
