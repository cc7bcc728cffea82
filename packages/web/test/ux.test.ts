/**
 * The web UI as a new user meets it (issue 12), in headless Chromium against the real gateway
 * and a scripted model, at 1280×800 and 390×844. One browser for the file; each test leaves
 * screenshots in `test-artifacts/web/`.
 */
import { createRequire } from 'node:module';
import fs from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callGateway,
  ensureBuilt,
  launchBrowser,
  modelEnv,
  saveScreenshot,
  send,
  startGateway,
  startModelServer,
  type ModelServer,
  type RunningGateway,
} from './support.ts';

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let browser: Browser;
let bare: RunningGateway;
let gateway: RunningGateway;
let model: ModelServer;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  ensureBuilt();
  model = await startModelServer();
  [browser, bare, gateway] = await Promise.all([
    launchBrowser(),
    startGateway(),
    startGateway(modelEnv(model)),
  ]);
});
afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await Promise.all([bare?.stop(), gateway?.stop(), model?.close()]);
});

/** A fresh page at `viewport`, recording console errors, page errors and 5xx answers. */
async function openPage(
  target: RunningGateway,
  viewport: { width: number; height: number },
  hash = '',
): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport });
  contexts.push(context);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('response', (response) => {
    if (response.status() >= 500) problems.push(`HTTP ${response.status()} ${response.url()}`);
  });
  await page.goto(`${target.url}${hash}`);
  return { page, problems };
}

async function createAgent(name: string): Promise<string> {
  const { agent } = await callGateway<{ agent: { id: string } }>(gateway, 'createAgent', { name });
  return agent.id;
}

async function prompt(agentId: string, text: string): Promise<void> {
  await callGateway(gateway, 'sendPrompt', { agentId, prompt: text, clientNonce: `${agentId}-${text}` });
}

/** Text that wraps a letter or two per line (a squeezed flex item): each such run, for the message. */
function squeezedText(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const found: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent?.trim() ?? '';
      if (text.length < 4 || !/^\S+$/.test(text)) continue;
      const parent = node.parentElement;
      if (!parent || parent.closest('[hidden], pre, .code-block')) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      const lines = new Set(Array.from(range.getClientRects(), (rect) => Math.round(rect.top))).size;
      if (lines > 1 && text.length / lines < 4) found.push(`${text} (${lines} lines)`);
    }
    return found;
  });
}

async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE_SOURCE);
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } }).axe;
    interface AxeViolation {
      id: string;
      impact: string | null;
      nodes: Array<{ target: string[] }>;
    }
    const result = await axe.run();
    return result.violations
      .filter((v) => v.impact === 'critical' || v.impact === 'serious')
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
}

const box = async (page: Page, selector: string) => {
  const rect = await page.locator(selector).first().boundingBox();
  if (!rect) throw new Error(`${selector} is not laid out`);
  return rect;
};

describe('layouts', () => {
  it('on a phone with a model the conversation takes most of the screen and the agents are a drawer', async ({
    task,
  }) => {
    const ids: string[] = [];
    for (const name of ['Alpha', 'Beta', 'Gamma', 'Delta', 'Epsilon', 'Zeta'])
      ids.push(await createAgent(name));
    const { page, problems } = await openPage(gateway, PHONE, `#agent=${ids[0]}`);
    await page.getByTestId('composer-input').waitFor();
    expect(await page.getByTestId('sidebar').isVisible()).toBe(false);
    const transcript = await box(page, '[data-testid="transcript"]');
    expect(transcript.height / PHONE.height).toBeGreaterThanOrEqual(0.7);
    const composer = await box(page, '[data-testid="composer"]');
    expect(Math.abs(composer.y + composer.height - PHONE.height)).toBeLessThanOrEqual(1);
    expect(await squeezedText(page)).toEqual([]);
    await saveScreenshot(page, `${task.name} (conversation)`);

    const drawerButton = page.getByRole('button', { name: 'Agents' });
    await drawerButton.click();
    await page.getByTestId('sidebar').waitFor();
    expect(await page.locator('[data-testid="agent-row"]').count()).toBeGreaterThanOrEqual(6);
    await saveScreenshot(page, `${task.name} (drawer)`);
    await page.locator('[data-testid="agent-row"]', { hasText: 'Gamma' }).locator('.agent-open').click();
    expect(await page.getByTestId('sidebar').isVisible()).toBe(false);
    await expect.poll(() => page.locator('.conversation-head h2').textContent()).toBe('Gamma');
    expect(await drawerButton.getAttribute('aria-expanded')).toBe('false');
    // Esc closes the drawer too, and focus returns to its button.
    await drawerButton.click();
    await page.keyboard.press('Escape');
    expect(await page.getByTestId('sidebar').isVisible()).toBe(false);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toContain('Agents');
    expect(problems).toEqual([]);
  });

  it('on a phone without a model the setup notice is one dismissible line and the demo still gets half the screen', async ({
    task,
  }) => {
    const { page, problems } = await openPage(bare, PHONE);
    await page.waitForSelector('[data-testid="bubble"][data-type="secret-request"]');
    const banner = page.getByTestId('model-banner');
    await saveScreenshot(page, task.name);
    expect(await page.getByTestId('banner-steps').isVisible()).toBe(false);
    expect((await box(page, '[data-testid="model-banner"]')).height).toBeLessThanOrEqual(48);
    const transcript = await box(page, '[data-testid="transcript"]');
    expect(transcript.height / PHONE.height).toBeGreaterThanOrEqual(0.5);
    expect(await squeezedText(page)).toEqual([]);

    await page.getByTestId('banner-details').click();
    await expect.poll(() => page.getByTestId('banner-steps').textContent()).toContain('XAI_API_KEY');
    await saveScreenshot(page, `${task.name} (details)`);
    await page.getByTestId('banner-dismiss').click();
    expect(await banner.count()).toBe(0);
    await page.reload();
    await page.waitForSelector('[data-testid="bubble"]');
    expect(await banner.count()).toBe(0);
    expect(problems).toEqual([]);
  });

  it('on a desktop the agent list stays beside the conversation, with no drawer button', async ({ task }) => {
    const { page, problems } = await openPage(gateway, DESKTOP);
    await page.getByTestId('composer-input').waitFor();
    expect(await page.getByTestId('sidebar').isVisible()).toBe(true);
    expect(await page.getByTestId('agents-drawer-button').count()).toBe(0);
    expect(await squeezedText(page)).toEqual([]);
    await saveScreenshot(page, task.name);
    expect(problems).toEqual([]);
  });
});
