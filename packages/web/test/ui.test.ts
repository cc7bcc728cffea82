/**
 * The web UI in headless Chromium against the real gateway (`sendbox serve` in a child
 * process). Only the model is faked: an OpenAI-compatible server on loopback.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ensureBuilt,
  hasChromium,
  launchBrowser,
  send,
  startGateway,
  startModelServer,
  type ModelServer,
  type RunningGateway,
} from './support.ts';

if (!hasChromium) console.warn('web UI tests skipped: install Debian chromium (apt-get install -y chromium)');

let browser: Browser;

/** A fresh page that records console errors and CSP violations. */
async function openPage(context: BrowserContext, url: string): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (event) =>
      console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`),
    );
  });
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('response', (response) => {
    if (response.status() >= 500) problems.push(`HTTP ${response.status()} ${response.url()}`);
  });
  await page.goto(url);
  return { page, problems };
}

describe.skipIf(!hasChromium)('web UI without a model (the demo agent)', () => {
  let gateway: RunningGateway;
  let context: BrowserContext;

  beforeAll(async () => {
    ensureBuilt();
    [browser, gateway] = await Promise.all([launchBrowser(), startGateway()]);
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  });
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    if (gateway && /\b500\b|Error/.test(gateway.output())) console.log(gateway.output());
    await gateway?.stop();
  });

  it('renders every bubble type of the demo under the CSP, with the model banner and a disabled composer', async () => {
    const { page, problems } = await openPage(context, gateway.url);
    await page.waitForSelector('[data-testid="bubble"][data-type="secret-request"]');
    const banner = page.getByTestId('model-banner');
    await expect.poll(() => banner.textContent()).toContain('XAI_API_KEY');

    const types = await page.$$eval('[data-kind="send-message"]', (els) =>
      els.map((e) => e.getAttribute('data-type')),
    );
    expect(new Set(types)).toEqual(
      new Set(['text', 'attachment', 'cursor-agent', 'widget', 'secret-request']),
    );
    for (const kind of ['message', 'user-attachment', 'tool-call', 'notice']) {
      expect(await page.locator(`[data-testid="bubble"][data-kind="${kind}"]`).count(), kind).toBeGreaterThan(
        0,
      );
    }
    // Every rendered bubble names its entry.
    const ids = await page.$$eval('[data-testid="bubble"]', (els) =>
      els.map((e) => e.getAttribute('data-entry-id')),
    );
    expect(ids.every((id) => id && id.length > 0)).toBe(true);

    expect(await page.getByTestId('composer-input').isDisabled()).toBe(true);
    await expect
      .poll(() => page.getByTestId('composer-disabled').textContent())
      .toMatch(/No model is configured/);

    // The demo's widget was answered: its options are disabled and the choice is marked.
    const chosen = page.locator('[data-testid="widget-option"][aria-pressed="true"]');
    await expect.poll(() => chosen.textContent()).toContain('A secret request');
    expect(await page.locator('[data-testid="widget-option"]:not([disabled])').count()).toBe(0);
    expect(problems).toEqual([]);
  });

  it('hides thinking until toggled; the bubble style switch changes classes only, and persists', async () => {
    const { page, problems } = await openPage(context, gateway.url);
    await page.waitForSelector('[data-testid="bubble"][data-type="text"]');
    expect(await page.locator('[data-kind="thinking"]').count()).toBe(0);
    await page.getByTestId('thinking-toggle').click();
    await page.waitForSelector('[data-kind="thinking"]');
    await page.getByTestId('thinking-toggle').click();
    await expect.poll(() => page.locator('[data-kind="thinking"]').count()).toBe(0);

    const before = await page.$$eval('[data-testid="bubble"]', (els) =>
      els.map((e) => e.getAttribute('data-entry-id')),
    );
    const transcript = page.getByTestId('transcript');
    expect(await transcript.getAttribute('data-bubble-style')).toBe('cards');
    await page.getByTestId('bubble-style-toggle').click();
    expect(await transcript.getAttribute('class')).toContain('transcript-plain');
    const after = await page.$$eval('[data-testid="bubble"]', (els) =>
      els.map((e) => e.getAttribute('data-entry-id')),
    );
    expect(after).toEqual(before);

    await page.reload();
    await page.waitForSelector('[data-testid="bubble"]');
    expect(await page.getByTestId('transcript').getAttribute('data-bubble-style')).toBe('plain');
    await page.getByTestId('bubble-style-toggle').click();
    expect(problems).toEqual([]);
  });

  it('follows prefers-color-scheme until the theme toggle picks one, and remembers it', async () => {
    const dark = await browser.newContext({ colorScheme: 'dark' });
    try {
      const { page } = await openPage(dark, gateway.url);
      await page.waitForSelector('[data-testid="agent-row"]');
      expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
      await page.getByTestId('theme-toggle').click(); // system -> light
      expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('light');
      await page.reload();
      await page.waitForSelector('[data-testid="agent-row"]');
      expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('light');
    } finally {
      await dark.close();
    }
  });

  it('opens an image full screen with its alt as caption, closes on Esc, and previews the PDF', async () => {
    const { page, problems } = await openPage(context, gateway.url);
    const image = page.locator('[data-testid="image-grid"] img').first();
    await image.waitFor();
    expect(await image.getAttribute('title')).toBe('A bar chart');
    await page.locator('[data-testid="image-grid"] .image-button').first().click();
    const lightbox = page.getByTestId('lightbox');
    await lightbox.waitFor();
    expect(await lightbox.locator('figcaption').textContent()).toBe('A bar chart');
    await page.keyboard.press('Escape');
    await lightbox.waitFor({ state: 'detached' });

    await page.locator('[data-type="attachment"] [data-testid="file-preview-toggle"]').click();
    await page.waitForSelector('[data-testid="preview-pdf"] canvas', { timeout: 20_000 });
    expect(problems).toEqual([]);
  });

  it('creates, duplicates and deletes agents from the sidebar', async () => {
    const { page, problems } = await openPage(context, gateway.url);
    await page.waitForSelector('[data-testid="agent-row"]');
    await page.getByTestId('new-agent').click();
    await page.getByTestId('new-agent-name').fill('Research');
    await page.keyboard.press('Enter');
    const row = page.locator('[data-testid="agent-row"]', { hasText: 'Research' });
    await row.waitFor();
    const id = await row.getAttribute('data-agent-id');
    expect(id).toBeTruthy();
    await expect.poll(() => page.locator('.conversation-head h2').textContent()).toBe('Research');

    const original = page.locator(`[data-agent-id="${id}"]`);
    await original.getByTestId('agent-duplicate').click();
    await expect.poll(() => page.locator('[data-testid="agent-row"]').count()).toBe(3);

    await original.getByTestId('agent-delete').click();
    await original.getByTestId('agent-delete-confirm').click();
    await expect.poll(() => page.locator(`[data-agent-id="${id}"]`).count()).toBe(0);
    expect(problems).toEqual([]);
  });
});

describe.skipIf(!hasChromium)('web UI with a model', () => {
  let gateway: RunningGateway;
  let model: ModelServer;
  let context: BrowserContext;

  beforeAll(async () => {
    ensureBuilt();
    model = await startModelServer();
    [browser, gateway] = await Promise.all([
      launchBrowser(),
      startGateway({
        SENDBOX_PROVIDER: 'openai-compatible',
        OPENAI_BASE_URL: model.baseURL,
        SENDBOX_MODEL: 'local',
      }),
    ]);
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  });
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await gateway?.stop();
    await model?.close();
  });

  it('sends with Enter, streams the reply live, answers a widget once and saves a secret without keeping it', async () => {
    const { page, problems } = await openPage(context, gateway.url);
    const answerRequests: string[] = [];
    const secretBodies: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/api/answerWidget')) answerRequests.push(request.postData() ?? '');
      if (request.url().endsWith('/api/submitSecret')) secretBodies.push(request.postData() ?? '');
    });
    await page.getByTestId('new-agent').click();
    await page.getByTestId('new-agent-name').fill('Live');
    await page.keyboard.press('Enter');
    const input = page.getByTestId('composer-input');
    await expect.poll(() => input.isEnabled()).toBe(true);
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-testid')))
      .toBe('composer-input');

    // Shift+Enter is a new line, not a send.
    await input.type('first line');
    await page.keyboard.press('Shift+Enter');
    await input.type('second line');
    expect(await input.inputValue()).toBe('first line\nsecond line');

    model.reply(
      send({ type: 'text', content: 'Hello **there**' }),
      send({
        type: 'widget',
        widget: { prompt: 'Pick one', options: [{ label: 'Red', value: 'red' }, { label: 'Blue' }] },
      }),
    );
    await page.keyboard.press('Enter');
    await expect.poll(() => input.inputValue()).toBe('');
    const userBubble = page.locator('[data-kind="message"][data-role="user"]').first();
    await expect.poll(() => userBubble.textContent()).toContain('first line\nsecond line');
    const textBubble = page.locator('[data-type="text"]').first();
    await expect.poll(() => textBubble.innerHTML()).toContain('<strong>there</strong>');

    const red = page.locator('[data-testid="widget-option"][data-value="red"]');
    await red.waitFor();
    model.reply(send({ type: 'secret-request', secret: { label: 'Deploy key', name: 'DEPLOY_KEY' } }));
    await red.dblclick();
    await expect.poll(() => red.getAttribute('aria-pressed')).toBe('true');
    expect(await red.isDisabled()).toBe(true);
    const answer = page.locator('[data-kind="message"][data-role="user"]', { hasText: 'red' });
    await answer.waitFor();
    expect(answerRequests).toHaveLength(1);
    expect(JSON.parse(answerRequests[0]!)).toMatchObject({ answer: 'red' });

    const secretInput = page.getByTestId('secret-input');
    await secretInput.waitFor();
    expect(await secretInput.getAttribute('type')).toBe('password');
    expect(await secretInput.getAttribute('autocomplete')).toBe('off');
    const value = 'sk-test-3f9a7c1e5b';
    await secretInput.fill(value);
    await secretInput.press('Enter');
    await page.getByTestId('secret-saved').waitFor();
    expect(await page.getByTestId('secret-saved').textContent()).toContain('Deploy key');
    expect(secretBodies).toHaveLength(1);
    expect(JSON.parse(secretBodies[0]!)).toMatchObject({ value });
    // The value is nowhere in the page afterwards: not in the DOM, not in storage.
    expect(await page.content()).not.toContain(value);
    expect(await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage }))).not.toContain(
      value,
    );
    expect(problems).toEqual([]);
  });

  it('uploads a file from the composer and shows it as a file card', async () => {
    const { page, problems } = await openPage(context, gateway.url);
    await page.waitForSelector('[data-testid="agent-row"]');
    await expect.poll(() => page.getByTestId('composer-input').isEnabled()).toBe(true);
    await page.getByTestId('composer-file').setInputFiles({
      name: 'notes one.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from('hello from the test'),
    });
    const card = page.locator('[data-kind="user-attachment"] [data-testid="file-card"]', {
      hasText: 'notes one.txt',
    });
    await card.waitFor();
    expect(await card.textContent()).toContain('19 B');
    expect(problems).toEqual([]);
  });
});
