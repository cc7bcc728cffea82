/**
 * The agent dialog (src/agent-dialog/) in headless Chromium against the real gateway, real files
 * and a scripted model, at 1280×800 and 390×844 (in Tokyo time, to see times converted): the
 * Settings tab renames the agent and changes its instructions (and shows the box's refusal of a
 * bad domain, saving nothing); the Routines tab creates (a bad schedule first: the box's error),
 * pauses, resumes, runs now, edits and deletes, with the next run in the reader's zone; the list
 * follows the gateway's `routines` events (a change made elsewhere, a fire) without a reload, and a
 * read of the list answered after a newer one (held back with page.route) does not replace it; a
 * run is a link that closes the dialog and shows its turn's marker in the conversation; the
 * Memory tab shows both scopes and deletes an entry (one already gone: the box's error).
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { MemoryFile } from '../../box/src/memory/memory-file.ts';
import { agentPaths, userMemoryFile } from '../../box/src/stores/files/layout.ts';
import { axeViolations, callGateway, saveScreenshot } from './support.ts';
import { browserSuite } from './suite.ts';

const DESKTOP = { width: 1280, height: 800, timezoneId: 'Asia/Tokyo' };
const PHONE = { width: 390, height: 844, timezoneId: 'Asia/Tokyo' };
const VIEWPORTS = [
  ['desktop', DESKTOP],
  ['phone', PHONE],
] as const;

const suite = browserSuite({ env: { SENDBOX_ROUTINE_MIN_INTERVAL_S: '1' } });

interface Routine {
  id: string;
  name: string;
  prompt: string;
  paused: boolean;
  nextRunAt: number | null;
  runs: Array<{ status: string }>;
}

const routines = async (agentId: string) =>
  (await callGateway<{ routines: Routine[] }>(suite.gateway, 'listRoutines', { agentId })).routines;

/** Opens the agent's dialog from its menu (on a phone, through the agents drawer) on `tab`. */
async function openDialog(
  viewport: typeof DESKTOP,
  agentId: string,
  tab: 'settings' | 'routines' | 'memory',
): Promise<{ page: Page; problems: string[] }> {
  const opened = await suite.open(viewport, `#agent=${agentId}`);
  const { page } = opened;
  if (viewport.width < 720) await page.getByTestId('agents-drawer-button').click();
  const row = page.locator(`[data-testid="agent-row"][data-agent-id="${agentId}"]`);
  await row.getByTestId('agent-menu').click();
  await row.getByTestId('agent-settings').click();
  await page.getByRole('dialog').waitFor();
  if (tab !== 'settings') await page.getByTestId(`agent-tab-${tab}`).click();
  await page.getByTestId(`agent-panel-${tab}`).waitFor();
  return opened;
}

describe('the agent dialog', { timeout: 120_000 }, () => {
  for (const [label, viewport] of VIEWPORTS) {
    it(`Settings: renames the agent and sets its instructions; a bad domain is refused and nothing saved (${label})`, async ({
      task,
    }) => {
      const id = await suite.createAgent(`Scout ${label}`);
      const { page, problems } = await openDialog(viewport, id, 'settings');
      const dialog = page.getByRole('dialog', { name: `Scout ${label}` });
      await dialog.waitFor();
      // The tab list is one Tab stop and arrow keys move along it.
      await expect.poll(() => page.evaluate('document.activeElement.textContent')).toBe('Settings');
      await page.keyboard.press('ArrowRight');
      expect(await page.getByTestId('agent-tab-routines').getAttribute('aria-selected')).toBe('true');
      await page.keyboard.press('ArrowLeft');
      await page.getByTestId('agent-name').waitFor();

      // The error path first: the box refuses the domain, names the field, and keeps the old name.
      await page.getByTestId('agent-name').fill(`Ranger ${label}`);
      await page.getByTestId('agent-domains').fill('not a domain!');
      await page.getByTestId('agent-settings-save').click();
      const refusal = page.getByTestId('agent-settings-error');
      await refusal.waitFor();
      expect(await refusal.textContent()).toMatch(/allowDomains.*not a host name/);
      expect(await callGateway<{ name: string }>(suite.gateway, 'getAgent', { id })).toMatchObject({
        name: `Scout ${label}`,
      });

      await page.getByTestId('agent-domains').fill('example.com');
      await page.getByTestId('agent-instructions').fill('Answer in haiku.');
      expect(await page.getByTestId('agent-web-fetch').isChecked()).toBe(true);
      await page.getByTestId('agent-web-fetch').uncheck();
      expect(await axeViolations(page)).toEqual([]);
      await saveScreenshot(page, `${task.name} (form)`);
      await page.getByTestId('agent-settings-save').click();
      await page.getByTestId('agent-settings-saved').waitFor();
      expect(await callGateway(suite.gateway, 'getAgent', { id })).toMatchObject({
        name: `Ranger ${label}`,
        instructions: 'Answer in haiku.',
        allowDomains: ['example.com'],
        webFetch: false,
      });
      // The dialog's title and the sidebar follow the new name.
      await page.getByRole('dialog', { name: `Ranger ${label}` }).waitFor();
      await page.keyboard.press('Escape');
      await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
      // (On a phone the drawer it was opened from is still open.)
      await page.locator(`[data-agent-id="${id}"] .agent-name`, { hasText: `Ranger ${label}` }).waitFor();
      expect(problems.filter((p) => !/status of 400/.test(p))).toEqual([]);
    });

    it(`Routines: a bad schedule is refused; create, pause, resume, run now, edit and delete, next run in the reader's zone (${label})`, async ({
      task,
    }) => {
      const id = await suite.createAgent(`Routines ${label}`);
      const { page, problems } = await openDialog(viewport, id, 'routines');
      await page.getByTestId('routines-empty').waitFor();
      await page.getByTestId('routine-new').click();
      // The form's zone defaults to the reader's.
      expect(await page.getByTestId('routine-timezone').inputValue()).toBe('Asia/Tokyo');
      await page.getByTestId('routine-name').fill('Morning news');
      await page.getByTestId('routine-schedule').fill('every morning');
      await page.getByTestId('routine-timezone').fill('America/New_York');
      await page.getByTestId('routine-prompt').fill('Summarise the news.');
      await page.getByTestId('routine-save').click();
      const refusal = page.getByTestId('routine-form-error');
      await refusal.waitFor();
      expect(await refusal.textContent()).toMatch(/schedule/);
      expect(await page.getByTestId('routine-schedule').getAttribute('aria-invalid')).toBe('true');
      expect(await routines(id)).toEqual([]);
      await saveScreenshot(page, `${task.name} (refused)`);

      await page.getByTestId('routine-schedule').fill('0 9 * * *');
      await page.getByTestId('routine-save').click();
      const card = page.getByTestId('routine');
      await card.waitFor();
      const [created] = await routines(id);
      expect(created).toMatchObject({ name: 'Morning news', paused: false });
      // 09:00 in New York is 23:00 in Tokyo (22:00 in summer): the reader's zone, said as such.
      const tokyo = new Intl.DateTimeFormat('en-US', {
        timeZone: 'Asia/Tokyo',
        hour: '2-digit',
        minute: '2-digit',
        hourCycle: 'h12',
      }).format(created!.nextRunAt!);
      const next = (await card.getByTestId('routine-next').textContent()) ?? '';
      expect(next).toContain(tokyo.replace(/\s?[AP]M$/, ''));
      expect(next).toContain('GMT+9');
      expect(await axeViolations(page)).toEqual([]);

      await card.getByTestId('routine-pause').click();
      await card.getByTestId('routine-paused').waitFor();
      expect(await card.getByTestId('routine-next').textContent()).toBe('Paused: no next run.');
      expect((await routines(id))[0]!.paused).toBe(true);
      await card.getByTestId('routine-pause').click();
      await expect.poll(() => card.getByTestId('routine-paused').count()).toBe(0);
      expect((await routines(id))[0]!.paused).toBe(false);

      await card.getByTestId('routine-run-now').click();
      await expect
        .poll(async () => (await routines(id))[0]!.runs.map((run) => run.status), { timeout: 30_000 })
        .toEqual([expect.stringMatching(/^(ok|silent|failed)$/)]);
      await card.getByTestId('routine-runs-summary').waitFor();

      await card.getByTestId('routine-edit').click();
      await page.getByTestId('routine-prompt').fill('Summarise the news in three lines.');
      await page.getByTestId('routine-save').click();
      await expect
        .poll(async () => (await routines(id))[0]!.prompt)
        .toBe('Summarise the news in three lines.');
      await page.locator('[data-testid="routine"]', { hasText: 'three lines' }).waitFor();
      await saveScreenshot(page, task.name);

      await page.getByTestId('routine-delete').click();
      await page.getByTestId('routine-delete-confirm').click();
      await page.getByTestId('routines-empty').waitFor();
      expect(await routines(id)).toEqual([]);
      expect(problems.filter((p) => !/status of 400/.test(p))).toEqual([]);
    });

    it(`Routines: the open list follows changes made elsewhere and the routine's fires, without a reload (${label})`, async () => {
      const id = await suite.createAgent(`Live ${label}`);
      const { page, problems } = await openDialog(viewport, id, 'routines');
      await page.getByTestId('routines-empty').waitFor();
      // Made elsewhere (another tab, the CLI): it shows up.
      const { routine } = await callGateway<{ routine: Routine }>(suite.gateway, 'updateRoutine', {
        agentId: id,
        action: 'create',
        name: 'Pulse',
        schedule: '@every 2s',
        prompt: 'Check in.',
      });
      const card = page.locator(`[data-routine-id="${routine.id}"]`);
      await card.waitFor({ timeout: 10_000 });
      // It fires on its own: the run shows up in the open list, and it ends.
      await card.getByTestId('routine-runs-summary').waitFor({ timeout: 20_000 });
      await callGateway(suite.gateway, 'updateRoutine', { agentId: id, id: routine.id, action: 'pause' });
      await card.getByTestId('routine-paused').waitFor({ timeout: 10_000 });
      await expect
        .poll(() => card.getByTestId('routine-runs-summary').textContent(), { timeout: 30_000 })
        .toMatch(/Last run: Done/);
      expect(problems).toEqual([]);
    });

    it(`Routines: a read answered late never replaces a newer one, and a run links to the turn it opened (${label})`, async ({
      task,
    }) => {
      const id = await suite.createAgent(`Linked ${label}`);
      const { routine } = await callGateway<{ routine: Routine }>(suite.gateway, 'updateRoutine', {
        agentId: id,
        action: 'create',
        name: 'Digest',
        schedule: '@daily',
        prompt: 'Write the digest.',
      });
      const { page, problems } = await openDialog(viewport, id, 'routines');
      const card = page.locator(`[data-routine-id="${routine.id}"]`);
      await card.waitFor();
      // A read of the list taken while the run is running is answered only after the run ended
      // (as a slow connection may): the list must keep showing the newer "Done".
      let releaseStale!: () => void;
      const stale = new Promise<void>((resolve) => (releaseStale = resolve));
      let held = 0;
      let staleAnswered = false;
      await page.route('**/api/listRoutines', async (route) => {
        const response = await route.fetch();
        const body = await response.text();
        if (/"status":"running"/.test(body) && held++ === 0) {
          await stale;
          await route.fulfill({ response, body });
          staleAnswered = true;
          return;
        }
        await route.fulfill({ response, body });
      });
      let releaseModel!: () => void;
      suite.model.reply({
        toolCall: { name: 'send_message', arguments: { type: 'text', content: 'Here is the digest.' } },
        after: new Promise<void>((resolve) => (releaseModel = resolve)),
      });
      await card.getByTestId('routine-run-now').click();
      await expect.poll(() => held > 0, { timeout: 30_000 }).toBe(true);
      releaseModel();
      await expect
        .poll(() => card.getByTestId('routine-runs-summary').textContent(), { timeout: 30_000 })
        .toMatch(/Last run: Done/);
      releaseStale();
      await expect.poll(() => staleAnswered, { timeout: 10_000 }).toBe(true);
      // Two frames for React to commit whatever the late answer would set.
      await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
      expect(await card.getByTestId('routine-runs-summary').textContent()).toMatch(/Last run: Done/);

      // Later turns push the run's turn out of view.
      const long = Array.from({ length: 40 }, (_, i) => `Line ${i} of a long answer.`).join('\n\n');
      for (let i = 0; i < 2; i++) {
        suite.model.reply(
          { toolCall: { name: 'send_message', arguments: { type: 'text', content: long } } },
          { text: 'done' },
        );
        await suite.prompt(id, `Later question ${i} (${label})`);
        await expect.poll(() => suite.model.pending(), { timeout: 30_000 }).toBe(0);
      }
      await suite.settled(id);

      // The run is a link to its turn: the dialog closes and the conversation shows it.
      const [listed] = await routines(id);
      const run = (listed as unknown as { runs: Array<{ entryId: string | null }> }).runs[0]!;
      expect(run.entryId).toMatch(/^t\d+u$/);
      await card.getByTestId('routine-runs-summary').click();
      const link = card.getByTestId('routine-run-link');
      expect(await link.getAttribute('data-entry-id')).toBe(run.entryId);
      await link.focus();
      await page.keyboard.press('Enter');
      await page.getByRole('dialog').waitFor({ state: 'detached' });
      const marker = page.locator(`[data-entry-id="${run.entryId}"]`);
      await marker.getByTestId('routine-run-marker').waitFor();
      expect(await marker.textContent()).toContain('Routine “Digest” ran');
      await expect.poll(() => marker.evaluate((node) => node === document.activeElement)).toBe(true);
      const box = (await marker.boundingBox())!;
      expect(box.y).toBeGreaterThanOrEqual(0);
      expect(box.y + box.height).toBeLessThanOrEqual(viewport.height);
      expect(await axeViolations(page)).toEqual([]);
      await saveScreenshot(page, task.name);
      expect(problems).toEqual([]);
    });

    it(`Memory: shows the agent's and the user's entries, deletes one; one deleted elsewhere gives the box's error (${label})`, async ({
      task,
    }) => {
      const id = await suite.createAgent(`Memory ${label}`);
      const now = Date.now();
      const own = new MemoryFile(agentPaths(suite.gateway.dataDir, id).memory, 'agent');
      await own.write(`The user is called Ada (${label})`, now);
      await own.write(`Ada prefers tea (${label})`, now);
      await new MemoryFile(userMemoryFile(suite.gateway.dataDir), 'user').write(
        `Shared note (${label})`,
        now,
      );
      const { page, problems } = await openDialog(viewport, id, 'memory');
      const agentScope = page.getByTestId('memory-agent');
      await agentScope.getByText(`The user is called Ada (${label})`).waitFor();
      await page.getByTestId('memory-user').getByText(`Shared note (${label})`).waitFor();
      expect(await axeViolations(page)).toEqual([]);
      await saveScreenshot(page, task.name);

      const tea = agentScope.locator('[data-testid="memory-entry"]', { hasText: 'prefers tea' });
      await tea.getByTestId('memory-delete').click();
      await tea.getByTestId('memory-delete-confirm').click();
      await expect.poll(() => tea.count()).toBe(0);
      expect((await own.entries()).map((entry) => entry.text)).toEqual([`The user is called Ada (${label})`]);

      // Gone already (forgotten by the agent, say): the box says so and the list is read again.
      await own.forget(`The user is called Ada (${label})`);
      const ada = agentScope.locator('[data-testid="memory-entry"]', { hasText: 'called Ada' });
      await ada.getByTestId('memory-delete').click();
      await ada.getByTestId('memory-delete-confirm').click();
      await page.getByTestId('memory-error').waitFor();
      expect(await page.getByTestId('memory-error').textContent()).toMatch(/called Ada/);
      await expect.poll(() => ada.count()).toBe(0);
      expect(problems.filter((p) => !/status of 404/.test(p))).toEqual([]);
    });
  }
});
