/**
 * Background work in the web UI (issue 22), in headless Chromium against the real gateway and a
 * scripted model, at 1280×800 and 390×844: a background command's tool row with its live tail
 * and Stop, and a running subagent as an expandable row whose steps arrive live, then read back
 * from its transcript after a reload.
 */
import { describe, expect, it } from 'vitest';
import { callGateway, saveScreenshot, send } from './support.ts';
import { browserSuite, DESKTOP, PHONE } from './suite.ts';

const suite = browserSuite();

describe('background tasks in the UI', () => {
  it('a background command’s row shows its live tail and stops it', async ({ task }) => {
    for (const viewport of [DESKTOP, PHONE]) {
      const id = await suite.createAgent(`Tail ${viewport.width}`);
      suite.model.reply(
        {
          toolCall: {
            name: 'shell',
            arguments: {
              command: 'for i in $(seq 1 1200); do echo tick $i; sleep 0.05; done',
              isBackground: true,
              description: 'Count ticks',
            },
          },
        },
        send({ type: 'text', content: 'Started the ticks.' }),
      );
      const { page, problems } = await suite.open(viewport, `#agent=${id}`);
      await suite.prompt(id, 'tick please');
      await suite.settled(id, { state: 'not-working', turnEnded: true });
      const panel = page.getByTestId('task-panel');
      await expect.poll(() => panel.getAttribute('data-state'), { timeout: 20_000 }).toBe('running');
      const tail = page.getByTestId('task-tail');
      await expect.poll(() => tail.textContent(), { timeout: 20_000 }).toMatch(/tick \d+/);
      const first = await tail.textContent();
      // Live: the tail moves on while the page stays open.
      await expect.poll(() => tail.textContent(), { timeout: 20_000 }).not.toBe(first);
      await saveScreenshot(page, `${task.name} running (${viewport.width})`);
      await page.getByTestId('task-stop').click();
      await expect
        .poll(() => page.getByTestId('task-state').textContent(), { timeout: 20_000 })
        .toBe('stopped');
      expect(await page.getByTestId('task-stop').count()).toBe(0);
      const tasks = await callGateway<{ tasks: Array<{ state: string; reason?: string }> }>(
        suite.gateway,
        'listTasks',
        {
          agentId: id,
        },
      );
      expect(tasks.tasks).toEqual([expect.objectContaining({ state: 'ended', reason: 'stopped' })]);
      await saveScreenshot(page, `${task.name} stopped (${viewport.width})`);
      expect(problems).toEqual([]);
    }
  }, 120_000);

  it('a running subagent is an expandable row whose steps arrive live, and read back after a reload', async ({
    task,
  }) => {
    const id = await suite.createAgent('Delegator');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    suite.model.reply(
      // The parent delegates; the child runs a command, then (once the test lets it) answers.
      {
        toolCall: {
          name: 'task',
          arguments: { description: 'Survey the sandbox', prompt: 'List the files and report.' },
        },
      },
      { toolCall: { name: 'shell', arguments: { command: 'echo child-step-marker' } } },
      { text: 'The sandbox is empty.', after: held },
      send({ type: 'text', content: 'The subagent says the sandbox is empty.' }),
    );
    const { page, problems } = await suite.open(DESKTOP, `#agent=${id}`);
    await suite.prompt(id, 'survey it');
    const running = page.getByTestId('running-task');
    await expect.poll(() => running.count(), { timeout: 20_000 }).toBe(1);
    const child = running.getByTestId('task-child');
    expect(await child.getAttribute('data-state')).toBe('running');
    await child.locator('summary.task-head').click();
    // The child's command shows while the child still works (its answer is held back).
    await expect
      .poll(() => child.getByTestId('child-steps').locator('.tool-summary').first().textContent(), {
        timeout: 20_000,
      })
      .toContain('echo child-step-marker');
    await saveScreenshot(page, `${task.name} live (1280)`);
    // A page opened while the child runs saw none of its earlier steps go by: it reads them.
    const joined = await suite.open(PHONE, `#agent=${id}`);
    const late = joined.page.getByTestId('running-task').getByTestId('task-child');
    await expect.poll(() => late.count(), { timeout: 20_000 }).toBe(1);
    await late.locator('summary.task-head').click();
    await expect
      .poll(() => late.getByTestId('child-steps').locator('.tool-summary').first().textContent(), {
        timeout: 20_000,
      })
      .toContain('echo child-step-marker');
    await saveScreenshot(joined.page, `${task.name} joined live (390)`);
    expect(joined.problems).toEqual([]);
    release();
    await suite.settled(id, { state: 'not-working', turnEnded: true });
    // The task row takes over from the running row once the call has its result.
    await expect.poll(() => running.count(), { timeout: 20_000 }).toBe(0);
    const done = page.getByTestId('task-child');
    await expect.poll(() => done.getAttribute('data-state'), { timeout: 20_000 }).toBe('ended');
    expect(problems).toEqual([]);

    // Later, on a phone: the row reads the child's steps from its transcript.
    const later = await suite.open(PHONE, `#agent=${id}`);
    const row = later.page.getByTestId('task-child');
    await expect.poll(() => row.count(), { timeout: 20_000 }).toBe(1);
    await row.locator('summary.task-head').click();
    await expect
      .poll(() => row.getByTestId('child-steps').locator('.tool-summary').first().textContent(), {
        timeout: 20_000,
      })
      .toContain('echo child-step-marker');
    await saveScreenshot(later.page, `${task.name} read back (390)`);
    expect(later.problems).toEqual([]);
  }, 120_000);
});
