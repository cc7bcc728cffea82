/**
 * Approval cards in the web UI (issue 20), in headless Chromium against the real suite.gateway, a
 * scripted model and a real MCP server (the SDK's, on stdio, confined) whose tools ask first
 * (`approval: "ask"`): allow and deny from the card, by keyboard and by touch, at 1280×800 and
 * 390×844; "Always allow this tool"; a card that survives a reload; and a box SIGKILLed while a
 * card waits, restarted, the card still waiting and answered after the restart.
 */
import type { Locator, Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  axeViolations,
  callGateway,
  modelEnv,
  saveScreenshot,
  send,
  startGateway,
  startModelServer,
  testMcpServer,
  writeMcpConfig,
  type ModelServer,
  type RunningGateway,
  type ScriptedReply,
} from './support.ts';
import { browserSuite, DESKTOP, PHONE } from './suite.ts';

const suite = browserSuite({ keepRequests: true });
beforeAll(async () => {
  await writeMcpConfig(suite.gateway.dataDir, { demo: testMcpServer({ approval: 'ask' }) });
});

const mcpCall = (toolName: string, args: Record<string, unknown>): ScriptedReply => ({
  toolCall: { name: 'mcp', arguments: { server: 'demo', toolName, args } },
});

interface Entry {
  id: string;
  kind: string;
  status?: string;
  name?: string;
  approval?: { answers?: string; decision?: string };
}

async function entries(target: RunningGateway, agentId: string): Promise<Entry[]> {
  return (await callGateway<{ entries: Entry[] }>(target, 'openAgent', { id: agentId })).entries;
}

/** The `n`th approval card of the page (0-based), once it is drawn. */
async function card(page: Page, n: number): Promise<Locator> {
  const cards = page.getByTestId('approval-card');
  await expect.poll(() => cards.count(), { timeout: 30_000 }).toBeGreaterThan(n);
  return cards.nth(n);
}

/** Whether any model request so far holds `text` (the tool results and host messages it read). */
function modelRead(server: ModelServer, text: string): boolean {
  return server.requests().some((body) => body.includes(text));
}

describe('approval cards in Chromium', () => {
  it('shows server, tool and arguments; Allow once by keyboard and Deny by pointer, on desktop and phone', async ({
    task,
  }) => {
    for (const viewport of [DESKTOP, PHONE]) {
      const id = await suite.createAgent(`Approvals ${viewport.width}`);
      const marker = `line one ${viewport.width}`;
      suite.model.reply(
        mcpCall('echo', { text: `${marker}\nline two` }),
        mcpCall('add', { a: 2, b: viewport.width }),
        send({ type: 'text', content: 'All done.' }),
      );
      const { page, problems } = await suite.open(viewport, `#agent=${id}`);
      await suite.prompt(id, 'echo and add');

      const first = await card(page, 0);
      expect(await first.getAttribute('data-outcome')).toBe('waiting');
      expect(await first.getByTestId('approval-server').textContent()).toBe('demo');
      expect(await first.getByTestId('approval-tool').textContent()).toBe('echo');
      // One argument per line, its name and its value as written (new lines kept).
      expect(await first.locator('.approval-arg dt').allTextContents()).toEqual(['text']);
      expect(await first.locator('.approval-arg dd').innerText()).toBe(`${marker}\nline two`);
      expect(await first.getByRole('button').allTextContents()).toEqual([
        'Allow once',
        'Always allow this tool',
        'Deny',
      ]);
      // The composer says what the agent waits for.
      await expect.poll(() => page.getByTestId('awaiting-approval').count()).toBe(1);
      if (viewport === DESKTOP) {
        // So does its row in the agent list (RosterRow.awaitingApproval).
        const row = page.locator(`[data-testid="agent-row"][data-agent-id="${id}"]`);
        await expect
          .poll(() =>
            row
              .getByTestId('agent-state')
              .textContent({ timeout: 500 })
              .catch(() => null),
          )
          .toBe('Waiting for approval');
      }
      expect(await page.getByTestId('working-indicator').count()).toBe(0);
      // Not run before the answer.
      expect(modelRead(suite.model, `echo: ${marker}`)).toBe(false);
      await saveScreenshot(page, `${task.name} waiting (${viewport.width})`);
      if (viewport === DESKTOP) expect(await axeViolations(page)).toEqual([]);

      if (viewport === DESKTOP) {
        // Keyboard: Tab from the card's first button reaches the next, and Enter answers.
        await first.getByTestId('approval-allow').focus();
        await page.keyboard.press('Tab');
        expect(await page.evaluate('document.activeElement?.dataset.testid')).toBe('approval-allow-always');
        await page.keyboard.press('Shift+Tab');
        await page.keyboard.press('Enter');
      } else {
        await first.getByTestId('approval-allow').click();
      }
      await expect.poll(() => first.getAttribute('data-outcome'), { timeout: 20_000 }).toBe('allow');
      expect(await first.getByTestId('approval-status').textContent()).toBe('Allowed once.');
      expect(await first.getByRole('button').count()).toBe(0);
      await expect.poll(() => modelRead(suite.model, `echo: ${marker}`), { timeout: 20_000 }).toBe(true);

      const second = await card(page, 1);
      expect(await second.getByTestId('approval-tool').textContent()).toBe('add');
      await expect
        .poll(() => second.locator('.approval-arg dd').allInnerTexts())
        .toEqual(['2', String(viewport.width)]);
      await second.getByTestId('approval-deny').click();
      await expect.poll(() => second.getAttribute('data-outcome'), { timeout: 20_000 }).toBe('deny');
      await suite.settled(id, { turnEnded: true });
      expect(modelRead(suite.model, 'The user declined this mcp:demo/add call')).toBe(true);
      expect(modelRead(suite.model, String(2 + viewport.width))).toBe(false);

      // The answers are ledger entries the cards show; they take no row of their own.
      const ledger = await entries(suite.gateway, id);
      expect(ledger.filter((e) => e.approval?.answers).map((e) => [e.approval?.answers, e.status])).toEqual([
        [expect.stringMatching(/^approval-/) as string, 'approved'],
        [expect.stringMatching(/^approval-/) as string, 'denied'],
      ]);
      expect(await page.getByTestId('approval-card').count()).toBe(2);
      expect(await page.getByTestId('awaiting-approval').count()).toBe(0);
      await expect.poll(() => page.getByTestId('bubble').filter({ hasText: 'All done.' }).count()).toBe(1);
      // A reload shows both cards answered, with no buttons left.
      await page.reload();
      await expect.poll(() => page.getByTestId('approval-card').count(), { timeout: 20_000 }).toBe(2);
      expect(
        await page.getByTestId('approval-card').evaluateAll((cards) => cards.map((c) => c.dataset.outcome)),
      ).toEqual(['allow', 'deny']);
      expect(await page.getByTestId('approval-card').getByRole('button').count()).toBe(0);
      await saveScreenshot(page, `${task.name} answered (${viewport.width})`);
      expect(problems).toEqual([]);
    }
  }, 180_000);

  it('a waiting card survives a reload; "Always allow this tool" lets the next call run without one', async ({
    task,
  }) => {
    const id = await suite.createAgent('Always');
    suite.model.reply(
      mcpCall('echo', { text: 'first always' }),
      mcpCall('echo', { text: 'second always' }),
      send({ type: 'text', content: 'Echoed twice.' }),
    );
    const { page, problems } = await suite.open(PHONE, `#agent=${id}`);
    await suite.prompt(id, 'echo twice');
    await card(page, 0);
    await page.reload();
    const first = await card(page, 0);
    expect(await first.getAttribute('data-outcome')).toBe('waiting');
    await first.getByTestId('approval-allow-always').click();
    await expect.poll(() => first.getAttribute('data-outcome'), { timeout: 20_000 }).toBe('allow-always');
    await suite.settled(id, { turnEnded: true });
    expect(modelRead(suite.model, 'echo: second always')).toBe(true);
    expect(await page.getByTestId('approval-card').count()).toBe(1);
    expect((await entries(suite.gateway, id)).filter((e) => e.status === 'awaiting-approval')).toHaveLength(
      1,
    );
    await saveScreenshot(page, task.name);
    expect(problems).toEqual([]);
  }, 120_000);
});

describe('a message sent while a card waits', () => {
  it('is sent, not queued: the agent answers it, and the card stays answerable afterwards', async ({
    task,
  }) => {
    const id = await suite.createAgent('Meanwhile');
    suite.model.reply(mcpCall('echo', { text: 'asked first' }));
    const { page, problems } = await suite.open(PHONE, `#agent=${id}`);
    await suite.prompt(id, 'echo something');
    const first = await card(page, 0);
    // The turn waits on the user, as after a widget: the composer sends, there is nothing to stop.
    await expect.poll(() => page.getByTestId('composer-send').textContent()).toBe('Send');
    expect(await page.getByTestId('composer-stop').count()).toBe(0);

    suite.model.reply(send({ type: 'text', content: 'Hello meanwhile!' }));
    await page.getByTestId('composer-input').fill('never mind, say hello');
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.getByTestId('bubble').filter({ hasText: 'Hello meanwhile!' }).count(), {
        timeout: 20_000,
      })
      .toBe(1);
    await suite.settled(id, { turnEnded: true });
    expect(modelRead(suite.model, 'the user sent a new message before answering the approval card')).toBe(
      true,
    );
    expect(await first.getAttribute('data-outcome')).toBe('waiting');
    await saveScreenshot(page, `${task.name} answered meanwhile`);

    // Answered later, the card's answer starts a turn of its own; the call made again runs once.
    suite.model.reply(
      mcpCall('echo', { text: 'asked again' }),
      send({ type: 'text', content: 'Echoed now.' }),
    );
    await first.getByTestId('approval-allow').click();
    await expect.poll(() => first.getAttribute('data-outcome'), { timeout: 20_000 }).toBe('allow');
    await suite.settled(id, { turnEnded: true });
    expect(modelRead(suite.model, 'The user allowed the mcp:demo/echo call you asked approval for')).toBe(
      true,
    );
    expect(modelRead(suite.model, 'echo: asked again')).toBe(true);
    expect(await page.getByTestId('approval-card').count()).toBe(1);
    expect(problems).toEqual([]);
  }, 120_000);
});

describe('a box killed while a card waits', () => {
  it('SIGKILL, restart: the card still waits, is answered once after the restart, and the call runs', async ({
    task,
  }) => {
    const crashModel = await startModelServer({ keepRequests: true });
    const env = { ...modelEnv(crashModel), SENDBOX_MODEL_MAX_RETRIES: '0' };
    let box = await startGateway(env);
    try {
      await writeMcpConfig(box.dataDir, { demo: testMcpServer({ approval: 'ask' }) });
      const id = await suite.createAgent('Crash', box);
      crashModel.reply(mcpCall('echo', { text: 'before the crash' }));
      const { page, problems } = await suite.open(DESKTOP, `#agent=${id}`, box);
      await suite.prompt(id, 'echo through a crash', box);
      await card(page, 0);
      const before = await entries(box, id);
      const cardId = before.find((e) => e.status === 'awaiting-approval')!.id;

      const port = Number(new URL(box.url).port);
      await box.stop({ keepData: true, signal: 'SIGKILL' });
      box = await startGateway(env, [], { dataDir: box.dataDir, port });

      // Nothing is lost: every entry from before the kill is there, and the card still waits.
      const after = await entries(box, id);
      expect(after.slice(0, before.length).map((e) => e.id)).toEqual(before.map((e) => e.id));
      expect(after.some((e) => e.approval?.answers === cardId)).toBe(false);
      await page.reload();
      const again = await card(page, 0);
      expect(await again.getAttribute('data-outcome')).toBe('waiting');
      expect(await again.getByTestId('approval-allow').isEnabled()).toBe(true);
      await saveScreenshot(page, `${task.name} after restart`);

      // The answer goes through the durable inbox: the model is told, makes the call again, and
      // it runs without a second card.
      crashModel.reply(
        mcpCall('echo', { text: 'after the restart' }),
        send({ type: 'text', content: 'Ran it.' }),
      );
      await again.getByTestId('approval-allow').click();
      await expect.poll(() => again.getAttribute('data-outcome'), { timeout: 20_000 }).toBe('allow');
      await suite.settled(id, { target: box, model: crashModel, turnEnded: true });
      expect(modelRead(crashModel, 'The user allowed the mcp:demo/echo call you asked approval for')).toBe(
        true,
      );
      expect(modelRead(crashModel, 'echo: after the restart')).toBe(true);
      const final = await entries(box, id);
      expect(final.filter((e) => e.status === 'awaiting-approval')).toHaveLength(1);
      // Accepted once: a second answer is refused.
      await expect(
        callGateway(box, 'answerToolApproval', { agentId: id, entryId: cardId, decision: 'deny' }),
      ).rejects.toThrow(/409/);
      await expect
        .poll(() => page.getByTestId('bubble').filter({ hasText: 'Ran it.' }).count(), { timeout: 20_000 })
        .toBe(1);
      await saveScreenshot(page, `${task.name} answered`);
      expect(problems.filter((p) => !/Failed to load resource|ERR_CONNECTION_REFUSED|net::/.test(p))).toEqual(
        [],
      );
    } finally {
      await box.stop();
      await crashModel.close();
    }
  }, 180_000);
});
