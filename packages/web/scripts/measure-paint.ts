/**
 * DEV AID: how long the 10,000-entry fixture agent takes to paint, from navigation start to
 * the frame after its last bubble is in the DOM. Run preview-fixture.ts first.
 *
 *   npx tsx packages/web/scripts/measure-paint.ts [http://127.0.0.1:5178/] [runs]
 */
import { chromium } from 'playwright-core';

const [base = 'http://127.0.0.1:5178/', runsArg = '5'] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
});
try {
  for (let run = 0; run < Number(runsArg); run++) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${base}#agent=agent-big-ledger`);
    await page.waitForSelector('[data-entry-id="b9999"]');
    const figures = await page.evaluate(
      () =>
        new Promise<Record<string, number>>((resolve) =>
          requestAnimationFrame(() =>
            setTimeout(() => {
              const open = performance
                .getEntriesByType('resource')
                .find((entry) => entry.name.endsWith('/api/openAgent')) as
                PerformanceResourceTiming | undefined;
              resolve({
                paintedMs: Math.round(performance.now()),
                openAgentRequestStartMs: Math.round(open?.requestStart ?? -1),
                openAgentResponseEndMs: Math.round(open?.responseEnd ?? -1),
                afterResponseMs: Math.round(performance.now() - (open?.responseEnd ?? 0)),
                openAgentBytes: open?.encodedBodySize ?? -1,
                openAgentCallMs: Math.round(
                  performance.getEntriesByName('sendbox:open-agent', 'measure')[0]?.duration ?? -1,
                ),
                firstRowsCommittedMs: Math.round(
                  performance.getEntriesByName('sendbox:first-rows')[0]?.startTime ?? -1,
                ),
                bubbles: document.querySelectorAll('[data-testid="bubble"]').length,
              });
            }),
          ),
        ),
    );
    console.log(JSON.stringify(figures));
    await page.close();
  }
} finally {
  await browser.close();
}
