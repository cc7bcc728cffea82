import { chromium } from 'playwright-core';
const base = process.argv[2]!;
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu'],
});
const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
await page.addInitScript(() => {
  document.addEventListener('securitypolicyviolation', (e) =>
    console.log(
      'CSP',
      e.violatedDirective,
      e.blockedURI,
      e.sourceFile,
      e.lineNumber,
      e.columnNumber,
      e.sample,
    ),
  );
});
page.on('console', (m) => console.log('[console]', m.type(), m.text().slice(0, 300)));
page.on('response', (r) => {
  if (r.status() >= 400) console.log('[http]', r.status(), r.url());
});
await page.goto(base);
await page.waitForSelector('[data-testid="bubble"]');
await page.waitForTimeout(1500);
await browser.close();
