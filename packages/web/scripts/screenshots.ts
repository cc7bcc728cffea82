/**
 * DEV AID: screenshots of a running page (the fixture from preview-fixture.ts) with Debian's chromium, for a visual check. Prints console errors and CSP reports.
 *
 *   npx tsx packages/web/scripts/screenshots.ts http://127.0.0.1:5178/ /tmp/web-shots
 */
import type { Page } from 'playwright-core';
import { launchBrowser } from '../test/support.ts';

const [base = 'http://127.0.0.1:5178/', out = '/tmp/web-shots'] = process.argv.slice(2);

const browser = await launchBrowser();

async function open(colorScheme: 'light' | 'dark', hash = ''): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme });
  // The fixture takes any tab proof; the page must hold one to call the API.
  await context.addInitScript(() => window.sessionStorage.setItem('sendbox.session', 'f'.repeat(43)));
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning')
      console.log(`[console ${message.type()}] ${message.text()}`);
  });
  page.on('pageerror', (error) => console.log(`[pageerror] ${error.message}`));
  await page.goto(`${base}${hash}`);
  await page.waitForSelector('[data-testid="agent-row"]');
  return page;
}

const shot = async (page: Page, name: string) => {
  await page.screenshot({ path: `${out}/${name}.png` });
  console.log(`${out}/${name}.png`);
};

try {
  const page = await open('light', '#agent=agent-every-bubble');
  await page.waitForSelector('[data-entry-id="t0s0"]');
  await page
    .waitForSelector('.code-block span[style]', { timeout: 10_000 })
    .catch(() => console.log('no highlight'));
  await page.evaluate(() => document.querySelector('[data-entry-id="t0s0"]')?.scrollIntoView());
  await shot(page, 'light-top');
  for (const id of ['t0s1', 't0s2', 't0s3']) {
    await page.click(`[data-entry-id="${id}"] [data-testid="file-preview-toggle"]`);
  }
  await page
    .waitForSelector('[data-testid="preview-pdf"] canvas', { timeout: 15_000 })
    .catch(() => console.log('no pdf canvas'));
  await page
    .waitForSelector('[data-testid="preview-docx"]', { timeout: 15_000 })
    .catch(() => console.log('no docx'));
  await page
    .waitForSelector('[data-testid="preview-xlsx"]', { timeout: 15_000 })
    .catch(() => console.log('no xlsx'));
  await page.waitForTimeout(800);
  for (const id of ['t0s1', 't0s2', 't0s3', 't0s4']) {
    await page.evaluate(
      (entry) => document.querySelector(`[data-entry-id="${entry}"]`)?.scrollIntoView(),
      id,
    );
    await shot(page, `light-${id}`);
  }
  await page.evaluate(() => {
    const t = document.querySelector('[data-testid="transcript"]');
    if (t) t.scrollTop = t.scrollHeight;
  });
  await shot(page, 'light-bottom');
  await page.click('[data-testid="thinking-toggle"]');
  await page.click('[data-testid="bubble-style-toggle"]');
  await page.evaluate(() => document.querySelector('[data-entry-id="t0a0"]')?.scrollIntoView());
  await shot(page, 'light-plain-thinking');
  await page.click('[data-entry-id="t0s0"] .image-button');
  await page.waitForSelector('[data-testid="lightbox"]');
  await shot(page, 'light-lightbox');
  await page.keyboard.press('Escape');

  const dark = await open('dark', '#agent=agent-every-bubble');
  await dark.waitForSelector('[data-entry-id="t0s0"]');
  await dark
    .waitForSelector('.code-block span[style]', { timeout: 10_000 })
    .catch(() => console.log('no highlight'));
  await dark.evaluate(() => document.querySelector('[data-entry-id="t0s0"]')?.scrollIntoView());
  await shot(dark, 'dark-top');
  await dark.evaluate(() => {
    const t = document.querySelector('[data-testid="transcript"]');
    if (t) t.scrollTop = t.scrollHeight;
  });
  await shot(dark, 'dark-bottom');

  const big = await open('light', '#agent=agent-big-ledger');
  const started = Date.now();
  await big.waitForSelector('[data-entry-id="b9999"]');
  console.log(`big ledger: last bubble visible ${Date.now() - started} ms after the roster rendered`);
  console.log(`big ledger: ${await big.locator('[data-testid="bubble"]').count()} bubbles mounted`);
  await shot(big, 'big-ledger');
  const demo = await open('light', '#agent=agent-demo');
  await demo.waitForSelector('[data-entry-id="d0s0"]');
  await shot(demo, 'demo-readonly');
} finally {
  await browser.close();
}
