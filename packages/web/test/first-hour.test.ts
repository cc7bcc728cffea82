/**
 * The first hour of a new user (issue 18), in headless Chromium against the real gateway and
 * loopback models: one that streams and two that do not (JSON to a stream request; a 400 naming
 * `stream`), at 1280×800 and 390×844, light and dark. Screenshots go to `test-artifacts/web/`.
 */
import { createServer } from 'node:net';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  callGateway,
  saveScreenshot,
  send,
  startGateway,
  type ModelServer,
  type RunningGateway,
  modelEnv,
  startModelServer,
} from './support.ts';
import { browserSuite } from './suite.ts';

const DESKTOP = { width: 1280, height: 800, colorScheme: 'light' as const };
const PHONE = { width: 390, height: 844, colorScheme: 'dark' as const };

const suite = browserSuite({ env: { SENDBOX_MODEL_TIMEOUT_MS: '8000' } });
/** The streaming model and a box on it, with an 8 s idle timeout. */
let model: ModelServer;
let box: RunningGateway;
beforeAll(() => {
  ({ model, gateway: box } = suite);
});

/** The agent's page, its composer enabled. */
async function openAgent(id: string, viewport: typeof DESKTOP | typeof PHONE) {
  const opened = await suite.open(viewport, `#agent=${id}`);
  await expect.poll(() => opened.page.getByTestId('composer-input').isEnabled()).toBe(true);
  return opened;
}

async function promptFromPage(page: Page, text: string): Promise<void> {
  await page.getByTestId('composer-input').fill(text);
  await page.keyboard.press('Enter');
}

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
        const { page, problems } = await suite.open(viewport, '', box);
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

describe('streaming and Stop', { timeout: 120_000 }, () => {
  it('never cuts a reply that streams for 20 s under an 8 s idle timeout', async ({ task }) => {
    const id = await suite.createAgent('Long reply');
    const { page, problems } = await openAgent(id, DESKTOP);
    // 100 words, 200 ms apart: 20 s of steady streaming, two and a half idle timeouts.
    const words = Array.from({ length: 100 }, (_, i) => `w${i}`).join(' ');
    model.reply({ ...send({ type: 'text', content: `Long ${words}` }), streamDelayMs: 200 });
    await promptFromPage(page, 'a long one please');
    await page.getByTestId('streaming-bubble').waitFor();
    await page.locator('[data-testid="bubble"]', { hasText: 'w99' }).waitFor({ timeout: 60_000 });
    await suite.settled(id, { state: 'not-working' });
    const entries = (
      await callGateway<{ entries: Array<{ kind: string; text?: string }> }>(box, 'openAgent', { id })
    ).entries;
    expect(entries.filter((e) => e.kind === 'notice')).toEqual([]);
    await saveScreenshot(page, task.name);
    expect(problems).toEqual([]);
  });

  for (const viewport of [DESKTOP, PHONE]) {
    it(`keeps what was streamed when the user stops (${viewport.width}px ${viewport.colorScheme})`, async ({
      task,
    }) => {
      const id = await suite.createAgent(`Stopped ${viewport.width}`);
      const { page, problems } = await openAgent(id, viewport);
      const words = Array.from({ length: 200 }, (_, i) => `v${i}`).join(' ');
      model.reply({ ...send({ type: 'text', content: `Partial ${words}` }), streamDelayMs: 100 });
      await promptFromPage(page, 'write a lot');
      const streaming = page.getByTestId('streaming-bubble');
      await expect.poll(() => streaming.textContent(), { timeout: 30_000 }).toMatch(/v5\b/);
      await page.getByTestId('composer-stop').click();
      const kept = page.locator('[data-testid="bubble"]', { has: page.getByTestId('bubble-stopped') });
      await kept.waitFor();
      const text = (await kept.textContent()) ?? '';
      expect(text).toMatch(/^Partial v0 v1 v2 v3 v4 v5/);
      expect(text).not.toContain('v199');
      expect(await page.getByTestId('streaming-bubble').count()).toBe(0);
      await saveScreenshot(page, task.name);
      // The ledger keeps it, marked; the model's next call reads what the user saw.
      const { entries } = await callGateway<{ entries: Array<Record<string, unknown>> }>(box, 'openAgent', {
        id,
      });
      const stopped = entries.find((e) => e.kind === 'send-message' && e.stopped === true) as
        { message: { content: string } } | undefined;
      expect(stopped?.message.content).toMatch(/^Partial v0 v1 v2 v3 v4 v5/);
      await page.reload();
      await page.getByTestId('bubble-stopped').waitFor();
      expect(problems).toEqual([]);
    });
  }
});

describe('a running tool', { timeout: 120_000 }, () => {
  it('shows a live row with elapsed time and the output tail, then its entry', async ({ task }) => {
    const id = await suite.createAgent('Live tool');
    const { page, problems } = await openAgent(id, PHONE);
    model.reply(
      {
        toolCall: {
          name: 'shell',
          arguments: {
            command: 'for i in 1 2 3 4 5 6 7 8; do echo tick$i; sleep 0.5; done',
            description: 'Tick',
          },
        },
      },
      send({ type: 'text', content: 'Ticked.' }),
    );
    await promptFromPage(page, 'tick');
    const row = page.getByTestId('live-tool');
    await expect
      .poll(() => page.getByTestId('live-tool-tail').textContent(), { timeout: 30_000 })
      .toMatch(/tick2/);
    expect(await row.textContent()).toMatch(/shell.*Tick.*running/);
    expect(await page.getByTestId('live-tool-elapsed').textContent()).toMatch(/^\d+(\.\d)? s$|^0 ms$/);
    await saveScreenshot(page, task.name);
    await page.locator('[data-testid="bubble"]', { hasText: 'Ticked.' }).waitFor({ timeout: 30_000 });
    expect(await row.count()).toBe(0);
    expect(await page.locator('[data-kind="tool-call"]').textContent()).toMatch(/done/);
    expect(problems).toEqual([]);
  });
});

describe('a model that is busy for a while', { timeout: 120_000 }, () => {
  it('shows each retry while it waits, then the reply (1280px light, 390px dark)', async ({ task }) => {
    // The default retries (2, so 3 attempts); the loopback model refuses twice, then answers.
    const busy = await startModelServer();
    const retrying = await startGateway(modelEnv(busy));
    try {
      for (const viewport of [DESKTOP, PHONE]) {
        const { agent } = await callGateway<{ agent: { id: string } }>(retrying, 'createAgent', {
          name: `Busy ${viewport.width}`,
        });
        const { page, problems } = await suite.open(viewport, `#agent=${agent.id}`, retrying);
        await expect.poll(() => page.getByTestId('composer-input').isEnabled()).toBe(true);
        busy.reply({ status: 429 }, { status: 503 }, send({ type: 'text', content: 'Here at last.' }));
        await promptFromPage(page, 'are you there?');
        const row = page.getByTestId('model-retry');
        await expect
          .poll(() => row.textContent(), { timeout: 30_000 })
          .toMatch(/\(HTTP 429\): retrying in [12]\ss, attempt 2 of 3$/);
        await expect
          .poll(() => row.textContent(), { timeout: 30_000 })
          .toMatch(/\(HTTP 503\): retrying in [1-4]\ss, attempt 3 of 3$/);
        await saveScreenshot(page, `${task.name} ${viewport.width}`);
        await page
          .locator('[data-testid="bubble"]', { hasText: 'Here at last.' })
          .waitFor({ timeout: 30_000 });
        expect(await row.count()).toBe(0);
        // The notice of a failed call is not there: the turn answered.
        expect(await page.getByTestId('error-notice').count()).toBe(0);
        expect(problems).toEqual([]);
      }
    } finally {
      await retrying.stop();
      await busy.close();
    }
  });
});

describe('content search from the sidebar', { timeout: 180_000 }, () => {
  it('finds words in any agent, kept current as agents write, and opens the agent at the message', async ({
    task,
  }) => {
    const early = await suite.createAgent('Zoo notes');
    const other = await suite.createAgent('Groceries');
    model.reply(send({ type: 'text', content: 'The quokka lives on Rottnest Island.' }));
    await callGateway(box, 'sendPrompt', {
      agentId: early,
      prompt: 'where do quokkas live?',
      clientNonce: 'q1',
    });
    await suite.settled(early, { state: 'not-working' });
    // Many later messages, so the hit is far above the newest ones.
    model.reply({
      toolCalls: Array.from({ length: 60 }, (_, i) => ({
        name: 'send_message',
        arguments: { type: 'text', content: `Filler line ${i} about nothing.` },
      })),
    });
    await callGateway(box, 'sendPrompt', { agentId: early, prompt: 'say more', clientNonce: 'q2' });
    await suite.settled(early, { state: 'not-working' });
    model.reply(send({ type: 'text', content: 'Buy apples and bread.' }));
    await callGateway(box, 'sendPrompt', { agentId: other, prompt: 'shopping list', clientNonce: 'g1' });
    await suite.settled(other, { state: 'not-working' });

    for (const viewport of [DESKTOP, PHONE]) {
      const { page, problems } = await openAgent(other, viewport);
      const narrow = viewport.width < 600;
      if (narrow) await page.getByTestId('agents-drawer-button').click();
      await page.getByTestId('agent-filter').fill('quokka');
      const hit = page.getByTestId('message-hit').first();
      await hit.waitFor({ timeout: 30_000 });
      expect(await hit.getAttribute('data-agent-id')).toBe(early);
      expect(await hit.locator('mark').first().textContent()).toMatch(/^quokka$/i);
      expect(await hit.textContent()).toContain('Zoo notes');
      await saveScreenshot(page, `${task.name} hits ${viewport.width}`);
      // The agent bubble holding the word, not the prompt: pick the agent's hit.
      const agentHit = page.locator('[data-testid="message-hit"]', { hasText: 'Rottnest' });
      await agentHit.click();
      await expect
        .poll(() => page.evaluate(() => document.activeElement?.textContent ?? ''), { timeout: 30_000 })
        .toContain('The quokka lives on Rottnest Island.');
      const inView = await page.evaluate(() => {
        const node = document.activeElement as HTMLElement;
        const box = node.getBoundingClientRect();
        return box.bottom > 0 && box.top < window.innerHeight;
      });
      expect(inView).toBe(true);
      await saveScreenshot(page, `${task.name} opened ${viewport.width}`);
      expect(problems).toEqual([]);
    }

    // Written after the first searches: found without a restart.
    model.reply(send({ type: 'text', content: 'A narwhal swam past.' }));
    await callGateway(box, 'sendPrompt', { agentId: other, prompt: 'anything new?', clientNonce: 'g2' });
    await suite.settled(other, { state: 'not-working' });
    const { hits } = await callGateway<{ hits: Array<{ agentId: string; snippet: { text: string } }> }>(
      box,
      'searchMessages',
      { query: 'narwhal' },
    );
    expect(hits.map((h) => [h.agentId, h.snippet.text])).toEqual([[other, 'A narwhal swam past.']]);
  });
});

describe('a fresh box', () => {
  it('opens on a ready conversation; the first message makes the agent, named from it', async ({ task }) => {
    const fresh = await startGateway({ ...modelEnv(model), SENDBOX_MODEL_MAX_RETRIES: '0' });
    try {
      const { page, problems } = await suite.open(PHONE, '', fresh);
      const input = page.getByTestId('new-conversation-input');
      await input.waitFor();
      // Ready to type, and nothing made before the user sends.
      expect(await page.evaluate('document.activeElement?.dataset.testid')).toBe('new-conversation-input');
      expect(await callGateway<unknown[]>(fresh, 'listAgents', {})).toEqual([]);
      await saveScreenshot(page, `${task.name} (ready)`);

      model.reply(send({ type: 'text', content: 'Lisbon in three days: here is a plan.' }));
      await input.fill('Plan a three-day trip to Lisbon');
      await page.keyboard.press('Enter');
      await page
        .locator('[data-testid="bubble"]', { hasText: 'Lisbon in three days: here is a plan.' })
        .waitFor({ timeout: 30_000 });
      const rows = await callGateway<Array<{ id: string; name: string }>>(fresh, 'listAgents', {});
      expect(rows).toHaveLength(1);
      await expect
        .poll(async () => (await callGateway<Array<{ name: string }>>(fresh, 'listAgents', {}))[0]?.name)
        .toBe('Plan a three-day trip to Lisbon');
      expect(await page.getByTestId('new-conversation').count()).toBe(0);
      await saveScreenshot(page, task.name);
      expect(problems).toEqual([]);
    } finally {
      await fresh.stop();
    }
  });
});
