/**
 * The first hour of a new user (issue 18), in headless Chromium against the real gateway and
 * loopback models: one that streams and two that do not (JSON to a stream request; a 400 naming
 * `stream`), at 1280×800 and 390×844, light and dark. Screenshots go to `test-artifacts/web/`.
 */
import { createServer } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callGateway,
  ensureBuilt,
  launchBrowser,
  openSignedInPage,
  saveScreenshot,
  send,
  startGateway,
  startModelServer,
  type RunningGateway,
} from './support.ts';

const DESKTOP = { width: 1280, height: 800, colorScheme: 'light' as const };
const PHONE = { width: 390, height: 844, colorScheme: 'dark' as const };

let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  ensureBuilt();
  browser = await launchBrowser();
});
afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
});

/** A loopback port with nothing listening on it (taken, then given back). */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

async function openSettings(page: Page): Promise<void> {
  await page.getByTestId('model-banner').waitFor();
  await page.getByTestId('banner-settings').click();
  await page.getByTestId('settings-panel').waitFor();
}

describe('a model that cannot stream, set up from the panel', { timeout: 120_000 }, () => {
  for (const [streams, viewport] of [
    ['json', DESKTOP],
    ['refuse', PHONE],
  ] as const) {
    it(`is found by Test connection and on the first turn (${streams}, ${viewport.width}px ${viewport.colorScheme})`, async ({
      task,
    }) => {
      const model = await startModelServer({ streams });
      const box: RunningGateway = await startGateway({ SENDBOX_MODEL_MAX_RETRIES: '0' });
      try {
        const { page, problems } = await openSignedInPage(browser, contexts, box, viewport);
        await openSettings(page);
        await page.getByTestId('settings-provider').selectOption('openai-compatible');
        // A wrong port first: the test names what is wrong.
        const wrong = `http://127.0.0.1:${await closedPort()}/v1`;
        await page.getByTestId('settings-base-url').fill(wrong);
        await page.getByTestId('settings-model').fill('local');
        expect(await page.getByTestId('settings-stream').isChecked()).toBe(true);
        await page.getByTestId('settings-test').click();
        await expect
          .poll(() => page.getByTestId('settings-check').textContent(), { timeout: 30_000 })
          .toMatch(/^Nothing answers at .* \(connection refused\): is the model server running/);
        await page.getByTestId('settings-base-url').fill(model.baseURL);
        // JSON endpoints answer the test's stream request in full (unread), then the re-asked one.
        if (streams === 'json') model.reply({ text: 'OK' });
        model.reply({ text: 'OK' });
        await page.getByTestId('settings-test').click();
        await expect
          .poll(() => page.getByTestId('settings-check').textContent(), { timeout: 30_000 })
          .toMatch(
            /^Connected: openai-compatible model local at .* It does not stream: replies will arrive whole/,
          );
        await saveScreenshot(page, `${task.name} (panel)`);
        // Nothing was saved by the test.
        expect(await callGateway(box, 'getModelSettings', {})).toMatchObject({ provider: null });
        await page.getByTestId('settings-save').click();
        await page.getByTestId('settings-saved').waitFor();
        await page.keyboard.press('Escape');
        await expect.poll(() => page.getByTestId('model-banner').count()).toBe(0);

        const { agent } = await callGateway<{ agent: { id: string } }>(box, 'createAgent', {
          name: 'No stream',
        });
        await page.goto(`${box.url}#agent=${agent.id}`);
        const input = page.getByTestId('composer-input');
        await expect.poll(() => input.isEnabled()).toBe(true);
        if (streams === 'json') model.reply(send({ type: 'text', content: 'unread' }));
        model.reply(send({ type: 'text', content: 'A whole reply, not streamed.' }));
        await input.fill('hi');
        await page.keyboard.press('Enter');
        await page.locator('[data-testid="bubble"]', { hasText: 'A whole reply, not streamed.' }).waitFor();
        model.reply(send({ type: 'text', content: 'The second reply.' }));
        await input.fill('again');
        await page.keyboard.press('Enter');
        await page.locator('[data-testid="bubble"]', { hasText: 'The second reply.' }).waitFor();
        await saveScreenshot(page, task.name);
        // One line in the terminal, once: the endpoint is remembered as not streaming.
        const lines = box
          .output()
          .split('\n')
          .filter((line) => /does not stream/.test(line));
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(/calling it without streaming from now on/);
        expect(box.output()).not.toMatch(/model call failed/);
        expect(problems).toEqual([]);
      } finally {
        await box.stop();
        await model.close();
      }
    });
  }
});
