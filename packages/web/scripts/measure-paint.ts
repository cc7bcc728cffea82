/**
 * DEV AID (a figure, not a test): how long the UI takes to paint an agent with a 10,000-entry
 * ledger, against the real gateway (`sendbox serve`) with the ledger seeded through the
 * runtime by a scripted loopback model (test/support.ts `seedLedger`). Times from navigation
 * start: the first frame holding the newest rows (`sendbox:first-frame`, the start of the frame
 * after their commit) and the window filled to 200 bubbles; one JSON line per run, then the
 * median first frame.
 *
 *   npx tsx packages/web/scripts/measure-paint.ts [entries=10000] [runs=7] [sendsPerTurn=1000]
 */
import {
  callGateway,
  ensureBuilt,
  launchBrowser,
  modelEnv,
  seedLedger,
  startGateway,
  startModelServer,
} from '../test/support.ts';

const entries = Number(process.argv[2] ?? 10_000);
const runs = Number(process.argv[3] ?? 7);
const perTurn = Number(process.argv[4] ?? 1000);

ensureBuilt();
const model = await startModelServer();
const gateway = await startGateway(modelEnv(model));
try {
  const { agent } = await callGateway<{ agent: { id: string } }>(gateway, 'createAgent', {
    name: 'Big ledger',
  });
  const seedStarted = performance.now();
  const seeded = await seedLedger(gateway, model, agent.id, entries, perTurn);
  console.log(
    `seeded ${seeded} entries through the runtime in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`,
  );
  const browser = await launchBrowser();
  const painted: number[] = [];
  try {
    for (let run = 0; run < runs; run++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      await gateway.signIn(context);
      const page = await context.newPage();
      page.on('crash', () => console.error(`run ${run}: the page crashed`));
      await page.goto(`${gateway.url}#agent=${agent.id}`);
      // The first frame paints the newest rows; the ones after it fill the window to 200.
      await page.waitForFunction(
        () => performance.getEntriesByName('sendbox:window-filled').length > 0,
        null,
        {
          timeout: 60_000,
        },
      );
      await page.waitForFunction(() => performance.getEntriesByName('sendbox:first-frame').length > 0);
      const figures = await page.evaluate(() => {
        const resources = performance.getEntriesByType('resource') as PerformanceResourceTiming[];
        const open = resources.find((entry) => entry.name.endsWith('/api/openAgent'));
        const list = resources.find((entry) => entry.name.endsWith('/api/listAgents'));
        // No named helper functions in here: tsx would wrap them in a `__name` the page lacks.
        const [firstRows, firstFrame, windowFilled] = [
          'sendbox:first-rows',
          'sendbox:first-frame',
          'sendbox:window-filled',
        ].map((name) => Math.round(performance.getEntriesByName(name)[0]?.startTime ?? -1));
        return {
          scriptsDoneMs: Math.round(
            (performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming | undefined)
              ?.domContentLoadedEventEnd ?? -1,
          ),
          openAgentRequestStartMs: Math.round(open?.requestStart ?? -1),
          openAgentResponseEndMs: Math.round(open?.responseEnd ?? -1),
          listAgentsResponseEndMs: Math.round(list?.responseEnd ?? -1),
          openAgentBytes: open?.encodedBodySize ?? -1,
          firstRowsCommittedMs: firstRows ?? -1,
          firstFrameMs: firstFrame ?? -1,
          windowFilledMs: windowFilled ?? -1,
          bubbles: document.querySelectorAll('[data-testid="bubble"]').length,
        };
      });
      console.log(JSON.stringify(figures));
      painted.push(figures.firstRowsCommittedMs);
      await context.close();
    }
  } finally {
    await browser.close();
  }
  const sorted = [...painted].sort((a, b) => a - b);
  console.log(
    `navigation -> newest rows committed (painted in the frame that follows), ${seeded} entries: median ${sorted[Math.floor(sorted.length / 2)]} ms, ` +
      `min ${sorted[0]} ms, max ${sorted.at(-1)} ms (${runs} runs; target < 1000 ms)`,
  );
} finally {
  await gateway.stop();
  await model.close();
}
