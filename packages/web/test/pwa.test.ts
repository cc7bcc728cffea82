/**
 * Install and notifications (issue 18, item 7), in headless Chromium against the real gateway and
 * a scripted model: the manifest, icons and service worker make the page installable (Chromium's
 * own installability check), a navigation without network gets the offline page, and while the tab
 * is hidden a finished turn and a question notify, with the message text only after the user opted
 * in. The Notification API is granted in the test; a refused permission is said in words.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { callGateway, saveScreenshot, send } from './support.ts';
import { browserSuite, DESKTOP, PHONE } from './suite.ts';

const suite = browserSuite();

/** The service worker is active and controls the page. */
async function controlled(page: Page): Promise<{ scope: string; script: string }> {
  const registration = await page.evaluate<{ scope: string; script: string }>(
    `navigator.serviceWorker.ready.then((r) => ({ scope: r.scope, script: r.active ? r.active.scriptURL : '' }))`,
  );
  await expect.poll(() => page.evaluate('navigator.serviceWorker.controller !== null')).toBe(true);
  return registration;
}

interface Shown {
  title: string;
  body: string;
  tag: string;
  agentId: unknown;
}

/** The notifications the page's service worker shows now (the real Notification API's list). */
function shown(page: Page): Promise<Shown[]> {
  return page.evaluate<Shown[]>(
    `navigator.serviceWorker.ready
      .then((r) => r.getNotifications())
      .then((list) => list.map((n) => ({ title: n.title, body: n.body, tag: n.tag, agentId: n.data && n.data.agentId })))`,
  );
}

/**
 * Hides `page`, as a user who switches to another tab or app does. Headless Chromium keeps every
 * tab visible (bringing another to the front changes nothing), so the page's visibility is what
 * the test sets; the notifications themselves go through the real API.
 */
async function setHidden(page: Page, hidden: boolean): Promise<void> {
  await page.evaluate(`(() => {
    const state = ${hidden ? "'hidden'" : "'visible'"};
    Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => state });
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => state === 'hidden' });
    document.dispatchEvent(new Event('visibilitychange'));
  })()`);
}

describe('install', () => {
  it('is installable: a valid manifest, its icons and an active service worker', async ({ task }) => {
    const { page, problems } = await suite.open(PHONE);
    await page.getByTestId('notifications-open').waitFor();
    const registration = await controlled(page);
    expect(registration.scope).toBe(suite.gateway.url);
    expect(registration.script).toBe(new URL('sw.js', suite.gateway.url).href);

    const cdp = await page.context().newCDPSession(page);
    const manifest = (await cdp.send('Page.getAppManifest')) as {
      url: string;
      errors: unknown[];
      data?: string;
    };
    expect(manifest.url).toBe(new URL('manifest.webmanifest', suite.gateway.url).href);
    expect(manifest.errors).toEqual([]);
    expect(JSON.parse(manifest.data ?? '{}')).toMatchObject({ name: 'sendbox', display: 'standalone' });
    const { installabilityErrors } = (await cdp.send('Page.getInstallabilityErrors')) as {
      installabilityErrors: Array<{ errorId: string }>;
    };
    // A test's browser context is incognito, where Chromium installs nothing; no other reason
    // (a missing or unsuitable icon, no service worker, a bad manifest) may stand in the way.
    expect(installabilityErrors.map((error) => error.errorId).filter((id) => id !== 'in-incognito')).toEqual(
      [],
    );

    // The files an installed app needs are public (a manifest is fetched without cookies), and
    // the worker is revalidated on every check, so an update reaches installed apps.
    for (const [file, type] of [
      ['manifest.webmanifest', 'application/manifest+json'],
      ['sw.js', 'text/javascript'],
      ['icons/icon-192.png', 'image/png'],
      ['icons/icon-512.png', 'image/png'],
    ] as const) {
      const response = await fetch(new URL(file, suite.gateway.url));
      expect(response.status, file).toBe(200);
      expect(response.headers.get('content-type'), file).toContain(type);
    }
    expect((await fetch(new URL('sw.js', suite.gateway.url))).headers.get('cache-control')).toBe('no-cache');
    // Only those: the rest of the build's root stays unserved.
    expect((await fetch(new URL('icons/../index.html', suite.gateway.url))).status).not.toBe(200);
    await saveScreenshot(page, task.name);
    expect(problems).toEqual([]);
  });

  it('says the box is not reachable when a navigation finds no network', async () => {
    const { page } = await suite.open(DESKTOP);
    await controlled(page);
    await page.context().setOffline(true);
    try {
      await page.reload();
      await page.getByRole('heading', { name: 'The box is not reachable' }).waitFor({ timeout: 10_000 });
    } finally {
      await page.context().setOffline(false);
    }
    await page.reload();
    await page.getByTestId('notifications-open').waitFor();
  });
});

describe('notifications', () => {
  it('while the tab is hidden: a finished turn and a question, text only when opted in; a click target per agent', async ({
    task,
  }) => {
    const id = await suite.createAgent('Night build');
    const { page, problems } = await suite.open(DESKTOP, `#agent=${id}`);
    await page.context().grantPermissions(['notifications'], { origin: new URL(suite.gateway.url).origin });
    await page.getByRole('heading', { name: 'Night build' }).waitFor();
    await controlled(page);

    await page.getByTestId('notifications-open').click();
    const toggle = page.getByTestId('notify-toggle');
    expect(await toggle.isChecked()).toBe(false);
    expect(await page.getByTestId('notify-text-toggle').isDisabled()).toBe(true);
    await toggle.check();
    await expect.poll(() => toggle.isChecked()).toBe(true);
    await saveScreenshot(page, `${task.name} (panel)`);
    await page.keyboard.press('Escape');
    expect(await page.getByTestId('notifications-panel').count()).toBe(0);
    expect(await page.getByTestId('notifications-open').getAttribute('data-active')).toBe('true');

    // Visible: a turn that ends notifies nobody (the user is looking).
    suite.model.reply(send({ type: 'text', content: 'Seen while you watched.' }));
    await suite.prompt(id, 'first');
    await page.getByText('Seen while you watched.').waitFor();
    await expect
      .poll(
        async () =>
          (await callGateway<Array<{ id: string; state: string }>>(suite.gateway, 'listAgents', {})).find(
            (r) => r.id === id,
          )?.state,
      )
      .toBe('idle');
    expect(await shown(page)).toEqual([]);

    await setHidden(page, true);
    suite.model.reply(send({ type: 'text', content: 'Build 41 passed: all 1,508 tests green.' }));
    await suite.prompt(id, 'second');
    await expect
      .poll(() => shown(page), { timeout: 20_000 })
      .toEqual([
        {
          title: 'Night build finished',
          body: 'Its turn has ended.',
          tag: `sendbox-agent-${id}`,
          agentId: id,
        },
      ]);
    await setHidden(page, false);

    await page.getByTestId('notifications-open').click();
    await page.getByTestId('notify-text-toggle').check();
    await page.keyboard.press('Escape');
    await setHidden(page, true);
    suite.model.reply(
      send({
        type: 'widget',
        widget: { prompt: 'Deploy build 42 to staging?', options: [{ label: 'Yes' }, { label: 'No' }] },
      }),
    );
    await suite.prompt(id, 'third');
    // One per agent: the newer replaces the older under the same tag.
    await expect
      .poll(() => shown(page), { timeout: 20_000 })
      .toEqual([
        {
          title: 'Night build is waiting for you',
          body: expect.stringContaining('Deploy build 42 to staging?') as string,
          tag: `sendbox-agent-${id}`,
          agentId: id,
        },
      ]);
    await setHidden(page, false);
    await saveScreenshot(page, task.name);
    expect(problems).toEqual([]);
  });

  it('says so when the browser refuses the permission, and stays off', async ({ task }) => {
    const { page } = await suite.open(PHONE);
    // The user blocked notifications for this site (the browser's own setting).
    const cdp = await page.context().newCDPSession(page);
    const { targetInfo } = (await cdp.send('Target.getTargetInfo')) as {
      targetInfo: { browserContextId: string };
    };
    await cdp.send('Browser.setPermission', {
      permission: { name: 'notifications' },
      setting: 'denied',
      origin: new URL(suite.gateway.url).origin,
      browserContextId: targetInfo.browserContextId,
    });
    expect(await page.evaluate('Notification.permission')).toBe('denied');
    await page.getByTestId('notifications-open').click();
    await page.getByTestId('notify-toggle').click();
    await page.getByTestId('notify-problem').waitFor();
    expect(await page.getByTestId('notify-problem').textContent()).toMatch(/blocks notifications/);
    expect(await page.getByTestId('notify-toggle').isChecked()).toBe(false);
    expect(await page.evaluate(`localStorage.getItem('sendbox.notify')`)).toBe('off');
    // On a phone the toolbar still fits, and the panel spans the screen: all inside the viewport.
    for (const id of ['agents-drawer-button', 'sign-out']) {
      const button = await page.getByTestId(id).boundingBox();
      expect(button && button.x >= 0 && button.x + button.width <= PHONE.width, id).toBe(true);
    }
    const box = await page.getByTestId('notifications-panel').boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= PHONE.width).toBe(true);
    await saveScreenshot(page, task.name);
  });
});
