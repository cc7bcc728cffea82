/**
 * Connectors in the web UI (issue 20), in headless Chromium against the real suite.gateway, a scripted
 * model and real MCP servers of the SDK (the box's stdio test server, confined; an HTTP server
 * behind OAuth on loopback): the panel at 1280×800 and 390×844 (status, tools, the file's
 * problems, add/test/edit/remove, which servers an agent may use, the sessions switch), the box
 * secrets form whose values are never shown back, and a "Connect" card signed in end to end.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { startHttpServer } from '../../box/src/mcp/testing/http-servers.ts';
import {
  axeViolations,
  callGateway,
  saveScreenshot,
  send,
  testMcpServer,
  writeMcpConfig,
  type ScriptedReply,
} from './support.ts';
import { browserSuite, DESKTOP, PHONE } from './suite.ts';

const suite = browserSuite({ keepRequests: true });

const mcpCall = (server: string, toolName: string, args: Record<string, unknown>): ScriptedReply => ({
  toolCall: { name: 'mcp', arguments: { server, toolName, args } },
});

async function mcpJson(dataDir: string): Promise<{ mcpServers: Record<string, Record<string, unknown>> }> {
  return JSON.parse(await fsp.readFile(path.join(dataDir, 'mcp.json'), 'utf8')) as {
    mcpServers: Record<string, Record<string, unknown>>;
  };
}

async function openConnectors(page: Page) {
  await page.getByTestId('connectors-open').click();
  const panel = page.getByTestId('mcp-panel');
  await expect.poll(() => panel.isVisible()).toBe(true);
  return panel;
}

const row = (page: Page, name: string) => page.locator(`[data-testid="mcp-server"][data-name="${name}"]`);

describe('the connectors panel', () => {
  it('shows each server’s status, tools and problems; adds, tests, edits and removes; limits an agent', async ({
    task,
  }) => {
    for (const viewport of [DESKTOP, PHONE]) {
      const added = `echo-${viewport.width}`;
      await writeMcpConfig(suite.gateway.dataDir, {
        demo: testMcpServer(),
        broken: { command: 'node', timeoutMS: 5 },
      });
      const id = await suite.createAgent(`Connectors ${viewport.width}`);
      // The agent uses demo once, so the panel has a running server with its tools.
      suite.model.reply(mcpCall('demo', 'echo', { text: 'warm' }), send({ type: 'text', content: 'Warm.' }));
      await callGateway(suite.gateway, 'sendPrompt', {
        agentId: id,
        prompt: 'warm up',
        clientNonce: `warm-${id}`,
      });
      await suite.settled(id, { turnEnded: true });

      const { page, problems } = await suite.open(viewport, `#agent=${id}`);
      // Every toolbar button, Connectors included, is on the screen (on a phone they wrap).
      await page.getByTestId('connectors-open').waitFor();
      const offScreen = await page.evaluate<string[]>(
        `Array.from(document.querySelectorAll('.toolbar button')).filter((b) => { const r = b.getBoundingClientRect(); return r.left < 0 || r.right > window.innerWidth; }).map((b) => b.textContent)`,
      );
      expect(offScreen).toEqual([]);
      const panel = await openConnectors(page);
      // Status and tools of a running server; a bad entry named with its field, and left out.
      await expect
        .poll(() => row(page, 'demo').getAttribute('data-status'), { timeout: 20_000 })
        .toBe('ready');
      expect(await row(page, 'demo').getByTestId('mcp-status').textContent()).toBe(
        // The desktop round's agent still holds its instance.
        viewport === DESKTOP ? 'Running for 1 agent' : 'Running for 2 agents',
      );
      await row(page, 'demo').getByTestId('mcp-tools-summary').click();
      expect(await row(page, 'demo').locator('.mcp-tools li').allInnerTexts()).toContainEqual(
        'echo Echoes text back.',
      );
      expect(await row(page, 'broken').getAttribute('data-status')).toBe('invalid');
      expect(await row(page, 'broken').getByTestId('mcp-problem').textContent()).toMatch(/field timeoutMS/);
      expect(await page.getByTestId('mcp-problems').textContent()).toMatch(
        /mcp\.json: server "broken": field timeoutMS/,
      );
      if (viewport === DESKTOP) expect(await axeViolations(page)).toEqual([]);
      await saveScreenshot(page, `${task.name} list (${viewport.width})`);

      // Add: the form, tested unsaved (the server really starts), then saved.
      await panel.getByTestId('mcp-add').click();
      const demo = testMcpServer();
      await page.getByTestId('mcp-name').fill(added);
      await page.getByTestId('mcp-command').fill('node');
      await page.getByTestId('mcp-args').fill((demo.args as string[]).join('\n'));
      await page.getByTestId('mcp-read-only').fill((demo.readOnly as string[]).join('\n'));
      await page.getByTestId('mcp-timeout').fill('soon');
      await page.getByTestId('mcp-save').click();
      expect(await page.getByTestId('mcp-form-error').textContent()).toMatch(
        /Timeout: write a number of seconds/,
      );
      await page.getByTestId('mcp-timeout').fill('20');
      await page.getByTestId('mcp-test').click();
      await expect
        .poll(() => page.getByTestId('mcp-check').textContent(), { timeout: 30_000 })
        .toMatch(/echo Echoes text back/);
      expect(await mcpJson(suite.gateway.dataDir).then((file) => Object.keys(file.mcpServers))).not.toContain(
        added,
      );
      await saveScreenshot(page, `${task.name} form (${viewport.width})`);
      await page.getByTestId('mcp-save').click();
      await expect.poll(() => row(page, added).count()).toBe(1);
      expect((await mcpJson(suite.gateway.dataDir)).mcpServers[added]).toEqual({
        command: 'node',
        args: demo.args,
        readOnly: demo.readOnly,
        timeoutMs: 20_000,
      });

      // Edit: the box's own check names a bad field; a good edit keeps what the form does not show.
      await row(page, added).getByTestId('mcp-edit').click();
      await page.getByTestId('mcp-approval').selectOption('ask');
      await page.getByTestId('mcp-description').fill('Echoes, after asking');
      await page.getByTestId('mcp-save').click();
      await expect.poll(() => row(page, added).count()).toBe(1);
      expect((await mcpJson(suite.gateway.dataDir)).mcpServers[added]).toMatchObject({
        approval: 'ask',
        description: 'Echoes, after asking',
        readOnly: demo.readOnly,
      });
      await row(page, added).getByTestId('mcp-edit').click();
      await page.getByTestId('mcp-kind-http').check();
      await page.getByTestId('mcp-url').fill('ftp://example.com/mcp');
      await page.getByTestId('mcp-save').click();
      await expect
        .poll(
          () =>
            page
              .getByTestId('mcp-form-error')
              .textContent()
              .catch(() => ''),
          { timeout: 10_000 },
        )
        .toMatch(/url/);
      expect((await mcpJson(suite.gateway.dataDir)).mcpServers[added]).toHaveProperty('command', 'node');
      await page.getByRole('button', { name: 'Cancel' }).click();

      // Which servers this agent may use.
      const agentServers = page.getByTestId('mcp-agent-servers');
      expect(await agentServers.getByTestId('mcp-agent-all').isChecked()).toBe(true);
      await agentServers.getByTestId('mcp-agent-some').check();
      await agentServers.locator(`[data-testid="mcp-agent-server"][data-name="demo"]`).uncheck();
      await expect
        .poll(
          async () =>
            (await callGateway<{ mcpServers: unknown }>(suite.gateway, 'getAgent', { id })).mcpServers,
        )
        .toEqual([added]);
      await agentServers.getByTestId('mcp-agent-all').check();
      await expect
        .poll(
          async () =>
            (await callGateway<{ mcpServers: unknown }>(suite.gateway, 'getAgent', { id })).mcpServers,
        )
        .toBeNull();

      // The sessions switch, then remove (asked first).
      await page.getByTestId('mcp-sessions').check();
      await expect
        .poll(async () => (await mcpJson(suite.gateway.dataDir)).mcpServers.sessions)
        .toEqual({ builtin: 'sessions' });
      await page.getByTestId('mcp-sessions').uncheck();
      await expect
        .poll(async () => (await mcpJson(suite.gateway.dataDir)).mcpServers.sessions)
        .toBeUndefined();
      await row(page, added).getByTestId('mcp-remove').click();
      expect(Object.keys((await mcpJson(suite.gateway.dataDir)).mcpServers)).toContain(added);
      await row(page, added).getByTestId('mcp-remove-confirm').click();
      await expect.poll(() => row(page, added).count()).toBe(0);
      expect(Object.keys((await mcpJson(suite.gateway.dataDir)).mcpServers)).toEqual(['demo', 'broken']);

      // On a phone the panel takes the screen without a sideways scroll.
      expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
      await saveScreenshot(page, `${task.name} done (${viewport.width})`);
      await page.keyboard.press('Escape');
      await expect.poll(() => page.getByTestId('mcp-panel').count()).toBe(0);
      // Only the refused edit (the box's 400 naming the url field) reached the console.
      expect(problems).toEqual([
        'Failed to load resource: the server responded with a status of 400 (Bad Request)',
      ]);
    }
  }, 240_000);
});

describe('box secrets', () => {
  it('sets, replaces and deletes a secret; its value is never shown back, stored in clear or logged', async ({
    task,
  }) => {
    const values = ['sk-first-9f8e7d6c5b4a', 'sk-second-1a2b3c4d5e6f'];
    await writeMcpConfig(suite.gateway.dataDir, {
      tokened: testMcpServer({ env: { API_TOKEN: '${secret:API_TOKEN}' } }),
    });
    const id = await suite.createAgent('Secrets');
    const { page, problems } = await suite.open(DESKTOP, `#agent=${id}`);
    const answers: string[] = [];
    page.on('response', (response) => {
      if (response.url().includes('/api/'))
        void response.text().then(
          (text) => answers.push(text),
          () => undefined,
        );
    });
    await openConnectors(page);
    const missing = page.locator('[data-testid="box-secret-missing"][data-name="API_TOKEN"]');
    await expect
      .poll(() => missing.textContent(), { timeout: 20_000 })
      .toMatch(/not set: tokened cannot start/);

    await missing.getByRole('button', { name: 'Set API_TOKEN' }).click();
    expect(await page.getByTestId('box-secret-name').inputValue()).toBe('API_TOKEN');
    expect(await page.evaluate('document.activeElement?.dataset.testid')).toBe('box-secret-value');
    expect(await page.getByTestId('box-secret-value').getAttribute('type')).toBe('password');
    await page.keyboard.type(values[0]!);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('box-secret-done').textContent()).toMatch(/^Saved API_TOKEN\./);
    const set = page.locator('[data-testid="box-secret"][data-name="API_TOKEN"]');
    expect(await set.textContent()).toMatch(/API_TOKEN set/);
    expect(await page.getByTestId('box-secret-value').inputValue()).toBe('');

    // The server gets it (and the box log never shows what the server printed of it).
    suite.model.reply(mcpCall('tokened', 'secret_env', {}), send({ type: 'text', content: 'Checked.' }));
    await callGateway(suite.gateway, 'sendPrompt', {
      agentId: id,
      prompt: 'check the token',
      clientNonce: `tok-${id}`,
    });
    await suite.settled(id, { turnEnded: true });
    expect(suite.model.requests().some((body) => body.includes(`length ${values[0]!.length}`))).toBe(true);

    await set.getByRole('button', { name: 'Replace API_TOKEN' }).click();
    await page.getByTestId('box-secret-value').fill(values[1]!);
    await page.getByTestId('box-secret-save').click();
    await expect
      .poll(() => page.getByTestId('box-secret-done').textContent())
      .toMatch(/^Replaced API_TOKEN\./);
    await saveScreenshot(page, task.name);

    // Never shown back: not in the page, its storage, any API answer, the files or the box's output.
    await page.reload();
    await openConnectors(page);
    await expect.poll(() => set.count(), { timeout: 20_000 }).toBe(1);
    const shown = await page.evaluate<string>(
      'document.documentElement.outerHTML + JSON.stringify({...localStorage}) + JSON.stringify({...sessionStorage}) + location.href',
    );
    const files: string[] = [];
    for (const entry of await fsp.readdir(suite.gateway.dataDir, { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) files.push(await fsp.readFile(path.join(entry.parentPath, entry.name), 'latin1'));
    }
    for (const value of values) {
      expect(shown).not.toContain(value);
      expect(answers.join('\n')).not.toContain(value);
      expect(suite.gateway.output()).not.toContain(value);
      expect(suite.model.requests().join('\n')).not.toContain(value);
      for (const text of files) expect(text.includes(value)).toBe(false);
    }

    await set.getByTestId('box-secret-delete').click();
    await set.getByTestId('box-secret-delete-confirm').click();
    await expect.poll(() => missing.count()).toBe(1);
    expect((await callGateway<{ names: string[] }>(suite.gateway, 'listBoxSecrets', {})).names).toEqual([]);
    expect(problems).toEqual([]);
  }, 120_000);
});

describe('the Connect card', () => {
  it('signs a remote server in through the OAuth flow in a new tab, and the agent’s next call works', async ({
    task,
  }) => {
    const server = await startHttpServer('oauth');
    try {
      await writeMcpConfig(suite.gateway.dataDir, {});
      const id = await suite.createAgent('Connect');
      suite.model.reply(
        mcpCall('secure', 'echo', { text: 'one' }),
        send({ type: 'text', content: 'Please connect.' }),
      );
      const { page, problems } = await suite.open(PHONE, `#agent=${id}`);
      // The remote server is added in the panel: its URL, on this machine (loopback) by the user's leave.
      await openConnectors(page);
      await page.getByTestId('mcp-add').click();
      await page.getByTestId('mcp-name').fill('secure');
      await page.getByTestId('mcp-kind-http').check();
      await page.getByTestId('mcp-url').fill(server.url);
      await page.getByTestId('mcp-allow-private-host').check();
      await page.getByTestId('mcp-save').click();
      await expect.poll(() => row(page, 'secure').count()).toBe(1);
      expect((await mcpJson(suite.gateway.dataDir)).mcpServers.secure).toEqual({
        url: server.url,
        allowPrivateHost: true,
      });
      await page.keyboard.press('Escape');
      await callGateway(suite.gateway, 'sendPrompt', {
        agentId: id,
        prompt: 'use secure',
        clientNonce: `sec-${id}`,
      });
      await suite.settled(id, { turnEnded: true });
      const card = page.getByTestId('connect-card');
      await expect.poll(() => card.count(), { timeout: 20_000 }).toBe(1);
      expect(await card.textContent()).toMatch(/Connect secure: the MCP server secure needs you to sign in/);
      await saveScreenshot(page, `${task.name} card`);

      const opened = page.context().waitForEvent('page');
      await card.getByTestId('connect-button').click();
      const tab = await opened;
      await expect
        .poll(async () => (await tab.content()).includes('Connected secure'), { timeout: 30_000 })
        .toBe(true);
      expect(tab.url()).toMatch(/\/oauth\/mcp\/callback\?code=/);
      // The sign-in tab had no handle on the page.
      expect(await tab.evaluate('window.opener === null')).toBe(true);
      await tab.close();
      expect(await card.getByTestId('connect-status').textContent()).toMatch(/Sign in in the new tab/);
      // In the conversation (the sidebar's preview of the agent may show the same line).
      await expect
        .poll(
          () =>
            page
              .locator('[data-testid="bubble"]', { hasText: 'Connected secure: your agent can use it now.' })
              .count(),
          { timeout: 20_000 },
        )
        .toBe(1);

      suite.model.reply(
        mcpCall('secure', 'echo', { text: 'two' }),
        send({ type: 'text', content: 'Worked.' }),
      );
      await callGateway(suite.gateway, 'sendPrompt', {
        agentId: id,
        prompt: 'again',
        clientNonce: `sec2-${id}`,
      });
      await suite.settled(id, { turnEnded: true });
      expect(suite.model.requests().some((body) => body.includes('oauth echo: two'))).toBe(true);
      await saveScreenshot(page, `${task.name} connected`);
      expect(problems).toEqual([]);
    } finally {
      await server.stop();
    }
  }, 120_000);
});

describe('Connect in the Connectors panel', () => {
  it('a remote server that asked for a sign-in offers Connect on its row; signed in there, the agent’s next call works', async () => {
    for (const viewport of [DESKTOP, PHONE]) {
      const name = `remote-${viewport.width}`;
      const server = await startHttpServer('oauth');
      try {
        await writeMcpConfig(suite.gateway.dataDir, { [name]: { url: server.url, allowPrivateHost: true } });
        const id = await suite.createAgent(`Panel connect ${viewport.width}`);
        const { page, problems } = await suite.open(viewport, `#agent=${id}`);
        // Before any call the box does not know the server wants a sign-in: no Connect yet.
        const panel = await openConnectors(page);
        await expect.poll(() => row(page, name).count()).toBe(1);
        expect(await row(page, name).getByTestId('mcp-sign-in').count()).toBe(0);
        await page.keyboard.press('Escape');

        // The agent's call meets the server's 401.
        suite.model.reply(
          mcpCall(name, 'echo', { text: 'one' }),
          send({ type: 'text', content: 'Please connect.' }),
        );
        await callGateway(suite.gateway, 'sendPrompt', {
          agentId: id,
          prompt: 'use it',
          clientNonce: `pc1-${id}`,
        });
        await suite.settled(id, { turnEnded: true });

        await openConnectors(page);
        const signIn = row(page, name).getByTestId('mcp-sign-in');
        await expect.poll(() => signIn.count(), { timeout: 15_000 }).toBe(1);
        expect(await signIn.textContent()).toContain(`${name} needs you to sign in`);
        // Said once, in the user's words (not the model's error text).
        expect(await row(page, name).getByTestId('mcp-status').textContent()).toBe('Needs sign-in');
        expect(await row(page, name).getByTestId('mcp-problem').count()).toBe(0);
        await saveScreenshot(page, `panel connect ${viewport.width} needs sign-in`);
        if (viewport === DESKTOP) expect(await axeViolations(page)).toEqual([]);

        const opened = page.context().waitForEvent('page');
        if (viewport === DESKTOP) {
          // By keyboard: the button takes focus and Enter connects.
          await signIn.getByTestId('mcp-connect').focus();
          await page.keyboard.press('Enter');
        } else {
          await signIn.getByTestId('mcp-connect').click();
        }
        const tab = await opened;
        await expect
          .poll(async () => (await tab.content()).includes(`Connected ${name}`), { timeout: 30_000 })
          .toBe(true);
        expect(tab.url()).toMatch(/\/oauth\/mcp\/callback\?code=/);
        expect(await tab.evaluate('window.opener === null')).toBe(true);
        await tab.close();
        // The panel reads the box again: the row says it is signed in, and offers Connect no more.
        await expect
          .poll(() => row(page, name).getByTestId('mcp-signed-in').count(), { timeout: 20_000 })
          .toBe(1);
        expect(await row(page, name).getByTestId('mcp-sign-in').count()).toBe(0);
        await saveScreenshot(page, `panel connect ${viewport.width} signed in`);
        expect(await panel.isVisible()).toBe(true);

        // A connect from the panel names no agent: no conversation gets a notice.
        const { entries } = await callGateway<{ entries: Array<{ kind: string; text?: string }> }>(
          suite.gateway,
          'openAgent',
          { id },
        );
        expect(entries.some((e) => e.text?.startsWith(`Connected ${name}`))).toBe(false);

        suite.model.reply(mcpCall(name, 'echo', { text: 'two' }), send({ type: 'text', content: 'Worked.' }));
        await callGateway(suite.gateway, 'sendPrompt', {
          agentId: id,
          prompt: 'again',
          clientNonce: `pc2-${id}`,
        });
        await suite.settled(id, { turnEnded: true });
        expect(suite.model.requests().some((body) => body.includes('oauth echo: two'))).toBe(true);
        expect(problems).toEqual([]);
      } finally {
        await server.stop();
      }
    }
  }, 180_000);
});
