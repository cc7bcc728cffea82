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

/** The box's page, signed in (its login link redeemed), in a fresh browser context. */
async function openBox(gateway: RunningGateway): Promise<Page> {
  const context = await browser.newContext();
  await gateway.signIn(context);
  const page = await context.newPage();
  page.on('close', () => void context.close());
  await page.goto(gateway.url);
  return page;
}

async function bannerText(env: Record<string, string>, args: string[] = []): Promise<string> {
  const gateway = await startGateway(env, args);
  gateways.push(gateway);
  const page = await openBox(gateway);
  try {
    const banner = page.getByTestId('sandbox-banner');
    await banner.waitFor();
    return (await banner.textContent()) ?? '';
  } finally {
    await page.close();
  }
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
    const page = await openBox(gateway);
    try {
      // The model banner (no model here) shows once the status has arrived.
      await page.getByTestId('model-banner').waitFor();
      expect(await page.getByTestId('sandbox-banner').count()).toBe(0);
    } finally {
      await page.close();
    }
  });
});
