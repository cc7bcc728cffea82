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
import type { RunningGateway } from './server.ts';
import { SESSION_IDLE_MS, sessionBookPath } from './session-book.ts';
import { LOGIN_CODE_TTL_MS, mintLoginCode, readSessionKey, sessionKeyPath } from './session.ts';
import { makeTempDir, openLoginLink, pageHeaders, startGatewayOn, startTestBox } from './test-support.ts';
import type { SignIn, TestBox } from './test-support.ts';
import { testModel } from './test-model.ts';

let box: TestBox;

beforeAll(async () => {
  box = await startTestBox(testModel());
});
afterAll(async () => {
  await box.close();
});

const DAY = 24 * 60 * 60_000;

/** An event stream on its own socket: a stream left on a pooled socket holds up the gateway's shutdown. */
function openStream(gateway: RunningGateway, headers: Record<string, string>): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) =>
    http.get(new URL('api/events', gateway.url), { headers, agent: false }, resolve).on('error', reject),
  );
}

/** The body is read at once: an unread body keeps its socket busy, and shutdown would wait for it. */
function listAgents(headers: Record<string, string>): Promise<{ status: number; error?: string }> {
  return listAgentsOn(box.gateway, headers);
}

async function listAgentsOn(
  gateway: RunningGateway,
  headers: Record<string, string>,
): Promise<{ status: number; error?: string }> {
  const response = await fetch(new URL('api/listAgents', gateway.url), {
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

  it("names the login command the box was given, as the user's shell runs it, escaped", async () => {
    const dataDir = await makeTempDir('sendbox-login-command-');
    const command = "node '/opt/send box/bin/sendbox.mjs' login --data-dir /tmp/a<b>";
    const gateway = await startGatewayOn(box.host, dataDir, { webRoot: box.webRoot, loginCommand: command });
    try {
      const html = await (await fetch(gateway.url)).text();
      expect(html).toContain(
        'node &#39;/opt/send box/bin/sendbox.mjs&#39; login --data-dir /tmp/a&#60;b&#62;',
      );
      expect(html).not.toContain('<code>sendbox login</code>');
      const refused = await fetch(new URL('api/listAgents', gateway.url), { method: 'POST' });
      expect(((await refused.json()) as { error: string }).error).toContain(
        `run \`${command}\` for a fresh one`,
      );
    } finally {
      await gateway.close();
      await fs.promises.rm(dataDir, { recursive: true, force: true });
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
    // The tab proof rides in the fragment, which no server ever receives.
    expect(signIn.location).toMatch(/^\/#session=[\w-]{43}$/);
    const flags = signIn.setCookie.split(';').map((part) => part.trim().toLowerCase());
    expect(flags).toContain('httponly');
    expect(flags).toContain('samesite=strict');
    expect(flags).toContain('path=/');
    expect(flags).not.toContain('secure'); // plain http on loopback: a Secure cookie would never be sent
    expect(flags).toContain('max-age=604800'); // 7 days, sliding

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

describe('the two halves of a session', () => {
  let signIn: SignIn;
  beforeAll(async () => {
    signIn = await openLoginLink(box.gateway.loginUrl());
  });

  it('signs in the page’s requests: cookie, tab proof and its own Origin', async () => {
    expect(signIn.tabProof).toMatch(/^[\w-]{43}$/);
    const response = await listAgents(pageHeaders(box.gateway, signIn));
    expect(response.status).toBe(200);
  });

  it('refuses the cookie replayed by another local server with the old constant CSRF headers', async () => {
    // What a dev server on another port of 127.0.0.1 receives from the browser, and what it can add.
    const replay = {
      Cookie: signIn.cookie,
      'X-Sendbox-Request': '1',
      Origin: new URL(box.gateway.url).origin,
      'Sec-Fetch-Site': 'same-origin',
    };
    const response = await listAgents(replay);
    expect(response.status).toBe(401);
    expect(response.error).toMatch(/x-sendbox-session/i);
    const created = await fetch(new URL('api/createAgent', box.gateway.url), {
      method: 'POST',
      headers: replay,
      body: JSON.stringify({ name: 'planted' }),
    });
    expect(created.status).toBe(401);
    await created.body?.cancel();
  });

  it('refuses a wrong tab proof, another session’s proof, and a proof without its cookie', async () => {
    const other = await openLoginLink(box.gateway.loginUrl());
    const base = pageHeaders(box.gateway, signIn);
    const { Cookie: _cookie, ...proofOnly } = base;
    for (const headers of [
      { ...base, 'X-Sendbox-Session': `${signIn.tabProof.slice(0, -2)}AA` },
      { ...base, 'X-Sendbox-Session': other.tabProof },
      proofOnly,
    ]) {
      expect((await listAgents(headers)).status, JSON.stringify(headers)).toBe(401);
    }
  });

  it('refuses the session with a foreign Origin, without an Origin on a POST, or from another site', async () => {
    const base = pageHeaders(box.gateway, signIn);
    const { Origin: _origin, ...noOrigin } = base;
    for (const headers of [
      { ...base, Origin: 'http://evil.example' },
      { ...base, Origin: 'http://127.0.0.1:1' },
      noOrigin,
      { ...base, 'Sec-Fetch-Site': 'cross-site' },
      { ...base, 'Sec-Fetch-Site': 'same-site' },
    ]) {
      expect((await listAgents(headers)).status, JSON.stringify(headers)).toBe(403);
    }
  });

  it('refuses a forged or foreign cookie', async () => {
    const [name, value = ''] = signIn.cookie.split('=');
    const forged = `${name}=${value.slice(0, -2)}${value.endsWith('AA') ? 'BB' : 'AA'}`;
    for (const bad of [forged, `${name}=1.2.3`, `sendbox_other=${value}`]) {
      const headers = pageHeaders(box.gateway, { cookie: bad, tabProof: signIn.tabProof });
      expect((await listAgents(headers)).status, bad).toBe(401);
    }
  });

  it('never lets a session rescue a wrong bearer token, and the bearer alone still works for the CLI', async () => {
    const wrong = await listAgents({ ...pageHeaders(box.gateway, signIn), Authorization: 'Bearer nope' });
    expect(wrong.status).toBe(401);
    expect((await listAgents({ Authorization: `Bearer ${box.gateway.token}` })).status).toBe(200);
  });

  it('opens the event stream with both halves (a same-origin GET carries no Origin)', async () => {
    const { Origin: _origin, ...headers } = pageHeaders(box.gateway, signIn);
    const { 'X-Sendbox-Session': _proof, ...withoutProof } = headers;
    const refused = await fetch(new URL('api/events', box.gateway.url), { headers: withoutProof });
    expect(refused.status).toBe(401);
    await refused.body?.cancel();
    const stream = await openStream(box.gateway, headers);
    expect(stream.statusCode).toBe(200);
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    stream.destroy();
  });

  it('serves files only with both halves: no bare cookie reaches an attachment', async () => {
    const agent = (await box.call('createAgent', { name: 'files' })).body as { agent: { id: string } };
    const query = `agentId=${agent.agent.id}&sha256=${'0'.repeat(64)}`;
    const { Origin: _origin, ...headers } = pageHeaders(box.gateway, signIn);
    const bare = await fetch(new URL(`api/attachment?${query}`, box.gateway.url), {
      headers: { Cookie: signIn.cookie },
    });
    expect(bare.status).toBe(401);
    await bare.body?.cancel();
    // Signed in, the request reaches the route (which has no such file).
    const signedIn = await fetch(new URL(`api/attachment?${query}`, box.gateway.url), { headers });
    expect(signedIn.status).toBe(404);
    await signedIn.body?.cancel();
  });
});

describe('a second sign-in, sliding expiry and signing out', () => {
  it('keeps the session of a browser that signs in again, so its other tabs keep working', async () => {
    const first = await openLoginLink(box.gateway.loginUrl());
    const again = await openLoginLink(box.gateway.loginUrl(), first.cookie);
    expect(again.status).toBe(303);
    expect(again.cookie).toBe(first.cookie);
    expect(again.tabProof).toBe(first.tabProof);
    const fresh = await openLoginLink(box.gateway.loginUrl());
    expect(fresh.cookie).not.toBe(first.cookie);
    expect((await listAgents(pageHeaders(box.gateway, first))).status).toBe(200);
  });

  it('lasts 7 days from the last use, and each use moves the end and re-sends the cookie', async () => {
    const signIn = await openLoginLink(box.gateway.loginUrl());
    expect(signIn.setCookie).toMatch(/Max-Age=604800(;|$)/);
    const started = Date.now();
    const at = (offset: number) => vi.spyOn(Date, 'now').mockReturnValue(started + offset);
    try {
      // Within the touch interval: nothing is written, no cookie is re-sent.
      at(60_000);
      const quiet = await fetch(new URL('api/listAgents', box.gateway.url), {
        method: 'POST',
        headers: pageHeaders(box.gateway, signIn),
        body: '{}',
      });
      expect(quiet.status).toBe(200);
      expect(quiet.headers.get('set-cookie')).toBeNull();
      await quiet.body?.cancel();
      // Six days on, the session is used: it now ends seven days after this use.
      at(SESSION_IDLE_MS - DAY);
      const used = await fetch(new URL('api/listAgents', box.gateway.url), {
        method: 'POST',
        headers: pageHeaders(box.gateway, signIn),
        body: '{}',
      });
      expect(used.status).toBe(200);
      expect(used.headers.get('set-cookie')).toMatch(/^sendbox_[\w-]+=[\w-]+\.[\w-]+; .*Max-Age=604800/);
      await used.body?.cancel();
      at(SESSION_IDLE_MS + DAY);
      expect((await listAgents(pageHeaders(box.gateway, signIn))).status).toBe(200);
      // Seven idle days after that last use, it is over.
      at(SESSION_IDLE_MS + DAY + SESSION_IDLE_MS + 1);
      expect((await listAgents(pageHeaders(box.gateway, signIn))).status).toBe(401);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('lists sessions, and signOut ends the caller’s own: the cookie is cleared and its event stream ends', async () => {
    const mine = await openLoginLink(box.gateway.loginUrl(), undefined, 'TabTest/1.0');
    const other = await openLoginLink(box.gateway.loginUrl());
    const listed = (await box.call('listSessions')).body as {
      sessions: Array<{ id: string; browser: string; current: boolean; expires: number; lastSeen: number }>;
    };
    const row = listed.sessions.find((session) => session.browser === 'TabTest/1.0');
    expect(row).toBeDefined();
    expect(row!.current).toBe(false); // the bearer token is no browser session
    expect(row!.expires).toBe(row!.lastSeen + SESSION_IDLE_MS);
    expect(JSON.stringify(listed)).not.toContain(mine.tabProof);
    expect(JSON.stringify(listed)).not.toContain(mine.cookie.split('=')[1]);

    const { Origin: _origin, ...streamHeaders } = pageHeaders(box.gateway, mine);
    const stream = await openStream(box.gateway, streamHeaders);
    const ended = new Promise<void>((resolve) => stream.on('end', resolve).resume());

    const viaBearer = await box.call('signOut');
    expect(viaBearer.status).toBe(400);
    const out = await fetch(new URL('api/signOut', box.gateway.url), {
      method: 'POST',
      headers: pageHeaders(box.gateway, mine),
      body: '{}',
    });
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toMatch(/^sendbox_[\w-]+=; .*Max-Age=0/);
    await out.body?.cancel();
    await ended;
    expect((await listAgents(pageHeaders(box.gateway, mine))).status).toBe(401);
    expect((await listAgents(pageHeaders(box.gateway, other))).status).toBe(200);
    const after = (await box.call('listSessions')).body as { sessions: Array<{ browser: string }> };
    expect(after.sessions.some((session) => session.browser === 'TabTest/1.0')).toBe(false);
  });

  it('revokeSessions ends the sessions named, or all of them', async () => {
    const one = await openLoginLink(box.gateway.loginUrl());
    const two = await openLoginLink(box.gateway.loginUrl());
    const { sessions } = (await box.call('listSessions')).body as { sessions: Array<{ id: string }> };
    expect((await box.call('revokeSessions', { ids: ['not-a-session'] })).status).toBe(400);
    expect((await box.call('revokeSessions', {})).status).toBe(400);
    const all = await box.call('revokeSessions', { all: true });
    expect(all.status).toBe(200);
    expect((all.body as { revoked: string[] }).revoked.sort()).toEqual(sessions.map((s) => s.id).sort());
    for (const signIn of [one, two])
      expect((await listAgents(pageHeaders(box.gateway, signIn))).status).toBe(401);
    expect(((await box.call('listSessions')).body as { sessions: unknown[] }).sessions).toEqual([]);
  });
});

describe('the session key and the session book', () => {
  it('are kept in the data dir, mode 0600, so sessions and sign-outs survive a restart; old login links do not', async () => {
    const dataDir = await makeTempDir('sendbox-session-');
    const start = (port: number) => startGatewayOn(box.host, dataDir, { webRoot: box.webRoot, port });
    try {
      const first = await start(0);
      const signIn = await openLoginLink(first.loginUrl());
      const signedOut = await openLoginLink(first.loginUrl());
      const out = await fetch(new URL('api/signOut', first.url), {
        method: 'POST',
        headers: pageHeaders(first, signedOut),
        body: '{}',
      });
      expect(out.status).toBe(200);
      await out.body?.cancel();
      const unused = first.loginUrl();
      expect(fs.statSync(sessionBookPath(dataDir)).mode & 0o777).toBe(0o600);
      const key = await fs.promises.readFile(sessionKeyPath(dataDir), 'utf8');
      expect(fs.statSync(sessionKeyPath(dataDir)).mode & 0o777).toBe(0o600);
      await first.close();

      const second = await start(first.port);
      try {
        expect(await fs.promises.readFile(sessionKeyPath(dataDir), 'utf8')).toBe(key);
        const page = await fetch(second.url, { headers: { Cookie: signIn.cookie } });
        expect(page.status).toBe(200);
        await page.body?.cancel();
        const api = await fetch(new URL('api/listAgents', second.url), {
          method: 'POST',
          headers: pageHeaders(second, signIn),
          body: '{}',
        });
        expect(api.status).toBe(200);
        await api.body?.cancel();
        expect((await listAgentsOn(second, pageHeaders(second, signedOut))).status).toBe(401);
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

  it('refuses to start on a damaged session book instead of replacing it', async () => {
    const dataDir = await makeTempDir('sendbox-session-book-');
    try {
      await fs.promises.writeFile(sessionBookPath(dataDir), '{"sessions": 3}\n', { mode: 0o600 });
      await expect(startGatewayOn(box.host, dataDir, { webRoot: box.webRoot })).rejects.toThrow(
        /sessions\.json is not a list of browser sessions; delete it/,
      );
      expect(await fs.promises.readFile(sessionBookPath(dataDir), 'utf8')).toBe('{"sessions": 3}\n');
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
