/**
 * The shared modal (src/Dialog.tsx) in headless Chromium, through the model settings dialog of a
 * real gateway, at 1280×800 and 390×844: it is named by its title, the focus starts on its first
 * field and cannot Tab (or be moved) out of it, Escape closes it and gives the focus back, and on
 * a phone it fits the screen with every control reachable.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { axeViolations, saveScreenshot } from './support.ts';
import { browserSuite, DESKTOP, PHONE } from './suite.ts';

const suite = browserSuite({ model: false });

/** Where the focus is: the active element's test id or tag, and whether it is in the dialog. */
function focusInfo(page: Page): Promise<{ inDialog: boolean; what: string }> {
  return page.evaluate(`(() => {
    const active = document.activeElement;
    return {
      inDialog: !!active && !!active.closest('[role="dialog"]'),
      what: active ? (active.getAttribute('data-testid') || active.getAttribute('aria-label') || active.tagName) : 'none',
    };
  })()`);
}

describe('the shared dialog', () => {
  for (const [label, viewport] of [
    ['desktop', DESKTOP],
    ['phone', PHONE],
  ] as const) {
    it(`is labelled, traps the focus, closes on Escape and gives the focus back (${label})`, async ({
      task,
    }) => {
      const { page, problems } = await suite.open(viewport);
      const opener = page.getByTestId('settings-open');
      await opener.click();
      const dialog = page.getByRole('dialog', { name: 'Model settings' });
      await dialog.waitFor();
      expect(await dialog.getAttribute('aria-modal')).toBe('true');
      await page.getByTestId('settings-provider').waitFor();
      await expect.poll(async () => (await focusInfo(page)).what).toBe('settings-provider');

      // Tab round the whole dialog twice: the focus never leaves it.
      const seen = new Set<string>();
      for (let i = 0; i < 40; i += 1) {
        await page.keyboard.press('Tab');
        const focus = await focusInfo(page);
        expect(focus.inDialog, `Tab ${i + 1} moved the focus to ${focus.what}`).toBe(true);
        seen.add(focus.what);
      }
      expect(seen.has('settings-save') && seen.has('Close') && seen.has('settings-provider')).toBe(true);
      // Shift+Tab from the first control wraps to the last.
      await page.getByRole('button', { name: 'Close', exact: true }).first().focus();
      await page.keyboard.press('Shift+Tab');
      expect(await focusInfo(page)).toEqual({ inDialog: true, what: 'settings-save' });
      // Focus moved behind the dialog by a script comes back into it.
      await page.evaluate(`document.querySelector('[data-testid="theme-toggle"]').focus()`);
      expect((await focusInfo(page)).inDialog).toBe(true);

      const rect = await dialog.boundingBox();
      if (!rect) throw new Error('the dialog is not laid out');
      expect(rect.x).toBeGreaterThanOrEqual(0);
      expect(rect.x + rect.width).toBeLessThanOrEqual(viewport.width);
      expect(rect.y + rect.height).toBeLessThanOrEqual(viewport.height);
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(viewport.width);
      // The last control is reachable by scrolling the dialog's body, and fully on screen then.
      await page.getByTestId('settings-save').scrollIntoViewIfNeeded();
      const save = await page.getByTestId('settings-save').boundingBox();
      expect(save && save.y >= 0 && save.y + save.height <= viewport.height).toBe(true);
      expect(await axeViolations(page)).toEqual([]);
      await saveScreenshot(page, task.name);

      await page.keyboard.press('Escape');
      await expect.poll(() => dialog.count()).toBe(0);
      expect(await focusInfo(page)).toEqual({ inDialog: false, what: 'settings-open' });

      // The close button and a press on the backdrop close it too.
      await opener.click();
      await dialog.waitFor();
      await page.getByRole('button', { name: 'Close', exact: true }).first().click();
      await expect.poll(() => dialog.count()).toBe(0);
      await opener.click();
      await dialog.waitFor();
      await page.mouse.click(2, 2);
      if (label === 'desktop') await expect.poll(() => dialog.count()).toBe(0);
      else expect(await dialog.count()).toBe(1); // full-screen on a phone: no backdrop to press
      expect(problems).toEqual([]);
    });
  }
});
