import { chromium } from 'playwright-core';
const base = process.argv[2]!;
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu'],
});
const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
page.on('console', (m) => console.log('[console]', m.type(), m.text().slice(0, 300)));
page.on('pageerror', (e) => console.log('[pageerror]', e.message));
await page.goto(base);
await page.waitForSelector('[data-testid="bubble"]');
await page.waitForTimeout(1500);
await page.screenshot({ path: '/tmp/web-shots/real-1.png' });
await page.evaluate(() => {
  const t = document.querySelector('[data-testid="transcript"]');
  if (t) t.scrollTop = 0;
});
await page.waitForTimeout(500);
await page.screenshot({ path: '/tmp/web-shots/real-0.png' });
console.log(
  await page.$$eval('[data-testid="bubble"]', (els) =>
    els
      .map(
        (e) =>
          `${e.getAttribute('data-entry-id')} ${e.getAttribute('data-kind')} ${e.getAttribute('data-type') ?? ''}`,
      )
      .join('\n'),
  ),
);
await browser.close();
