/**
 * A 10,000-entry agent in the real UI (real gateway, ledger seeded through the runtime by a
 * scripted loopback model): the page mounts only the newest window of bubbles, mounts more
 * when the reader scrolls to the top, and fetches the ledger once, for the agent it remembers.
 * Behaviour only: the paint time is a figure of scripts/measure-paint.ts, never asserted here.
 * Its own file so it runs beside ui.test.ts.
 */
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { callGateway, saveScreenshot, seedLedger } from './support.ts';
import { browserSuite } from './suite.ts';

/** The renderer's window (Conversation.tsx `WINDOW_STEP`). */
const WINDOW = 200;
const ENTRIES = 10_000;

interface Entry {
  id: string;
  seq: number;
  kind: string;
  hidden?: boolean;
}

const suite = browserSuite();

describe('web UI with a 10,000-entry ledger', () => {
  let bigId: string;
  let ledger: Entry[];

  beforeAll(async () => {
    const { gateway, model } = suite;
    const { agent } = await callGateway<{ agent: { id: string } }>(gateway, 'createAgent', {
      name: 'Big ledger',
    });
    bigId = agent.id;
    // One turn of sends seeds fastest (each model call carries the whole history).
    expect(await seedLedger(gateway, model, bigId, ENTRIES, ENTRIES)).toBeGreaterThanOrEqual(ENTRIES);
    ledger = (await callGateway<{ entries: Entry[] }>(gateway, 'openAgent', { id: bigId })).entries;
  }, 180_000);

  /** The entries that take a row with thinking hidden (transcript.ts `isShown`). */
  const shown = () =>
    ledger.filter((entry) => entry.kind !== 'turn-ended' && entry.kind !== 'thinking' && !entry.hidden);
  const mountedIds = (page: Page) =>
    page.$$eval('[data-testid="bubble"]', (els) => els.map((el) => el.getAttribute('data-entry-id')));

  it('mounts only the newest window, and more when scrolled to the top', async ({ task }) => {
    const context = await suite.browser.newContext({ viewport: { width: 1280, height: 900 } });
    await suite.gateway.signIn(context);
    try {
      const page = await context.newPage();
      const opens: string[] = [];
      page.on('request', (request) => {
        if (request.url().endsWith('/api/openAgent')) opens.push(request.postData() ?? '');
      });
      await page.goto(`${suite.gateway.url}#agent=${bigId}`);
      const newest = shown().slice(-WINDOW);
      await page.locator(`[data-entry-id="${newest.at(-1)!.id}"]`).waitFor();
      // The window fills to WINDOW bubbles in the frames after the first paint.
      await expect.poll(() => page.locator('[data-testid="bubble"]').count()).toBe(WINDOW);
      expect(await mountedIds(page)).toEqual(newest.map((entry) => entry.id));
      expect(opens).toHaveLength(1); // the ledger fetched at page start was used, not fetched again
      expect(JSON.parse(opens[0]!)).toEqual({ id: bigId });
      const earlier = page.getByTestId('load-earlier');
      await expect.poll(() => earlier.textContent()).toContain(`${shown().length - WINDOW} more`);
      await saveScreenshot(page, task.name);

      // Scrolling to the top mounts the previous step above it, and the view stays on what the
      // reader was looking at (the former first bubble), not on the newly mounted ones.
      const firstBefore = newest[0]!.id;
      const transcript = page.getByTestId('transcript');
      await transcript.evaluate((el) => {
        el.scrollTop = 0;
      });
      await expect.poll(() => page.locator('[data-testid="bubble"]').count()).toBe(2 * WINDOW);
      expect(await mountedIds(page)).toEqual(
        shown()
          .slice(-2 * WINDOW)
          .map((entry) => entry.id),
      );
      const view = await transcript.evaluate((el) => {
        const box = el.getBoundingClientRect();
        return { top: box.top, bottom: box.bottom, scrollTop: el.scrollTop };
      });
      const formerFirst = await page
        .locator(`[data-entry-id="${firstBefore}"]`)
        .evaluate((el) => el.getBoundingClientRect().top);
      // Within a screen of where it was (bubbles off screen have estimated heights until drawn,
      // content-visibility: auto); without the anchor it would sit 200 bubbles further down.
      expect(view.scrollTop).toBeGreaterThan(0);
      expect(Math.abs(formerFirst - view.top)).toBeLessThan(view.bottom - view.top);
      await saveScreenshot(page, `${task.name} (scrolled up)`);
    } finally {
      await context.close();
    }
  });

  it('reopens the agent of the last visit without a hash, fetching its ledger once', async ({ task }) => {
    const { agent: newer } = await callGateway<{ agent: { id: string; lastActivityAt: number } }>(
      suite.gateway,
      'createAgent',
      { name: 'Newer' },
    );
    const rows = await callGateway<{ id: string; lastActivityAt: number }[]>(suite.gateway, 'listAgents', {});
    // Without the remembered agent, the page would open "Newer" (the most recent activity).
    const latest = [...rows].sort((a, b) => b.lastActivityAt - a.lastActivityAt)[0];
    expect(latest?.id).toBe(newer.id);

    const context = await suite.browser.newContext({ viewport: { width: 1280, height: 900 } });
    await suite.gateway.signIn(context);
    try {
      const first = await context.newPage();
      await first.goto(`${suite.gateway.url}#agent=${bigId}`);
      await first.locator('[data-testid="bubble"]').first().waitFor();
      await first.close();

      const page = await context.newPage();
      const opens: string[] = [];
      page.on('request', (request) => {
        if (request.url().endsWith('/api/openAgent')) opens.push(request.postData() ?? '');
      });
      await page.goto(suite.gateway.url);
      await page.locator(`[data-entry-id="${shown().at(-1)!.id}"]`).waitFor();
      expect(await page.locator('.conversation-head h2').textContent()).toBe('Big ledger');
      expect(await page.evaluate(() => window.location.hash)).toBe(`#agent=${bigId}`);
      expect(opens.map((body) => JSON.parse(body) as unknown)).toEqual([{ id: bigId }]);
      await saveScreenshot(page, task.name);
    } finally {
      await context.close();
    }
  });
});
