/**
 * The permanent warning when tools are not confined: `sendbox serve` in a child process with a
 * bubblewrap that cannot start, in headless Chromium.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, launchBrowser, startGateway, type RunningGateway } from './support.ts';

let browser: Browser;
const gateways: RunningGateway[] = [];

beforeAll(async () => {
  ensureBuilt();
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  for (const gateway of gateways) await gateway.stop();
});

/**
 * `use` on the box's page, signed in (its login link redeemed), in a fresh browser context that is
 * closed before this returns (a close left running failed once the browser had closed).
 */
async function withBox<T>(gateway: RunningGateway, use: (page: Page) => Promise<T>): Promise<T> {
  const context = await browser.newContext();
  try {
    await gateway.signIn(context);
    const page = await context.newPage();
    await page.goto(gateway.url);
    return await use(page);
  } finally {
    await context.close();
  }
}

async function bannerText(env: Record<string, string>, args: string[] = []): Promise<string> {
  const gateway = await startGateway(env, args);
  gateways.push(gateway);
  return withBox(gateway, async (page) => {
    const banner = page.getByTestId('sandbox-banner');
    await banner.waitFor();
    return (await banner.textContent()) ?? '';
  });
}

describe('sandbox banner', () => {
  it('says the shell tool is disabled, and how to fix it, when bubblewrap cannot start', async () => {
    const text = await bannerText({ SENDBOX_BWRAP: '/nonexistent/bwrap' });
    expect(text).toContain('The shell tool is disabled.');
    expect(text).toContain('apt-get install bubblewrap');
  });

  it('warns that tools run unconfined under --unsafe-host-tools', async () => {
    const text = await bannerText({ SENDBOX_BWRAP: '/nonexistent/bwrap' }, ['--unsafe-host-tools']);
    expect(text).toContain('Tools run unconfined.');
    expect(text).toContain('UNSAFE');
  });

  it('is absent when tools are confined', async () => {
    const gateway = await startGateway();
    gateways.push(gateway);
    await withBox(gateway, async (page) => {
      // The model banner (no model here) shows once the status has arrived.
      await page.getByTestId('model-banner').waitFor();
      expect(await page.getByTestId('sandbox-banner').count()).toBe(0);
    });
  });
});
