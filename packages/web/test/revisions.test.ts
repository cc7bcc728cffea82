/**
 * Everyday controls on the conversation's end (issue 18 item 5), in headless Chromium against the
 * real gateway and a loopback model, at 1280×800 light and 390×844 dark: an agent created without
 * a name takes its first message as its name; Regenerate and Edit replace the last turn on the
 * page, in the ledger (`supersedes`) and in what the model reads; a queued prompt is removed
 * before it starts, and the model never reads it; edits are refused while a turn runs.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { callGateway, saveScreenshot, send } from './support.ts';
import { browserSuite } from './suite.ts';

const VIEWPORTS = [
  { width: 1280, height: 800, colorScheme: 'light' as const },
  { width: 390, height: 844, colorScheme: 'dark' as const },
];

const suite = browserSuite({ keepRequests: true });

interface Row {
  id: string;
  name: string;
  state: string;
}

/** The texts of the bubbles the page shows, in order. */
const bubbleTexts = (page: Page) => page.getByTestId('bubble').allTextContents();

/** What the model was sent on its latest call. */
const lastRequest = () => suite.model.requests().at(-1) ?? '';

describe('regenerate, edit, remove a queued prompt, untitled agents', { timeout: 180_000 }, () => {
  for (const viewport of VIEWPORTS) {
    it(`works from the page (${viewport.width}px ${viewport.colorScheme})`, async ({ task }) => {
      const { page, problems } = await suite.open(viewport);
      const phone = viewport.width < 600;
      const openDrawer = async () => {
        if (phone && !(await page.getByTestId('sidebar').isVisible()))
          await page.getByRole('button', { name: 'Agents' }).click();
      };

      // A new agent with no name: the first message names it.
      await openDrawer();
      await page.getByTestId('new-agent').click();
      await page.getByTestId('new-agent-name').press('Enter');
      await expect.poll(() => page.getByTestId('composer-input').isEnabled()).toBe(true);
      await expect.poll(() => page.locator('.conversation-head h2').textContent()).toBe('New agent');
      const before = await callGateway<Row[]>(suite.gateway, 'listAgents', {});
      const agentId = before.find((row) => row.name === '')!.id;
      suite.model.reply(send({ type: 'text', content: `First answer ${viewport.width}` }));
      await page.getByTestId('composer-input').fill(`Plan a picnic ${viewport.width}`);
      await page.keyboard.press('Enter');
      await suite.settled(agentId);
      await expect
        .poll(() => page.locator('.conversation-head h2').textContent())
        .toBe(`Plan a picnic ${viewport.width}`);
      await expect.poll(() => bubbleTexts(page)).toContainEqual(expect.stringContaining('First answer'));

      // Regenerate: the old reply goes, a new one comes, the model never read the old one.
      suite.model.reply(send({ type: 'text', content: `Second answer ${viewport.width}` }));
      await page.getByTestId('regenerate').click();
      await expect.poll(() => bubbleTexts(page)).toContainEqual(expect.stringContaining('Second answer'));
      await suite.settled(agentId);
      expect((await bubbleTexts(page)).join('\n')).not.toContain('First answer');
      expect((await bubbleTexts(page)).filter((text) => text.includes('Plan a picnic'))).toHaveLength(1);
      expect(lastRequest()).not.toContain('First answer');

      // Edit the last message, by keyboard: the edited words replace the turn.
      await page.getByTestId('edit-prompt').focus();
      await page.keyboard.press('Enter');
      const editor = page.getByTestId('edit-prompt-text');
      await expect.poll(() => editor.evaluate((node) => node === document.activeElement)).toBe(true);
      await editor.fill(`Plan a picnic for six ${viewport.width}`);
      suite.model.reply(send({ type: 'text', content: `Third answer ${viewport.width}` }));
      await page.keyboard.press('Control+Enter');
      await expect.poll(() => bubbleTexts(page)).toContainEqual(expect.stringContaining('Third answer'));
      await suite.settled(agentId);
      const shown = (await bubbleTexts(page)).join('\n');
      expect(shown).toContain('Plan a picnic for six');
      expect(shown).not.toContain('Second answer');
      expect(lastRequest()).toContain('Plan a picnic for six');
      expect(lastRequest()).not.toContain('Second answer');
      // The ledger keeps every turn; the new prompts name the ones they replace.
      const opened = await callGateway<{ entries: Array<Record<string, unknown>> }>(
        suite.gateway,
        'openAgent',
        {
          id: agentId,
        },
      );
      expect(
        opened.entries.filter((e) => e.kind === 'message' && e.role === 'user').map((e) => e.supersedes),
      ).toEqual([undefined, 't0u', 't1u']);
      expect(JSON.stringify(opened.entries)).toContain('First answer');
      await saveScreenshot(page, `${task.name} edited`);

      // A queued prompt removed before it starts: the model never reads it.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      suite.model.reply({ ...send({ type: 'text', content: `Long answer ${viewport.width}` }), after: held });
      await page.getByTestId('composer-input').fill('Long question');
      await page.keyboard.press('Enter');
      await expect
        .poll(
          async () =>
            (await callGateway<Row[]>(suite.gateway, 'listAgents', {})).find((r) => r.id === agentId)?.state,
        )
        .toBe('working');
      await page.getByTestId('composer-input').fill('Never mind this one');
      await page.keyboard.press('Enter');
      const removeButton = page.getByTestId('remove-queued');
      await removeButton.waitFor();
      // No Regenerate or Edit while a turn runs, and the gateway refuses one.
      expect(await page.getByTestId('regenerate').count()).toBe(0);
      await expect(
        callGateway(suite.gateway, 'editPrompt', {
          agentId,
          messageId: 't2u',
          prompt: 'x',
          clientNonce: 'e-running',
        }),
      ).rejects.toThrow(/409.*cannot edit a prompt while a turn runs or prompts wait/);
      await saveScreenshot(page, `${task.name} queued`);
      await removeButton.click();
      await expect.poll(() => page.getByTestId('pending-input').count()).toBe(0);
      release();
      await suite.settled(agentId);
      await expect.poll(() => bubbleTexts(page)).toContainEqual(expect.stringContaining('Long answer'));
      expect(suite.model.requests().join('\n')).not.toContain('Never mind this one');
      expect(problems).toEqual([]);
    });
  }
});
