/**
 * The web UI in headless Chromium against the real gateway (`sendbox serve` in a child
 * process). Only the model is faked: an OpenAI-compatible server on loopback. A missing
 * chromium fails these tests (launchBrowser says how to install it); each test leaves a
 * full-page screenshot in `test-artifacts/web/`.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SAMPLE_DOCX_TEXT, SAMPLE_XLSX, sampleDocx, samplePdf, sampleXlsx } from './sample-files.ts';
import { sendboxCommand } from '../../box/src/cli/command-name.ts';
import { callGateway, artifactPath, saveScreenshot, send, stepTrail, sendCall } from './support.ts';
import { browserSuite } from './suite.ts';

const VIEW = { width: 1280, height: 900 };

async function filesUnder(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await filesUnder(full)));
    else if (entry.isFile()) found.push(full);
  }
  return found;
}

describe('web UI without a model (the demo agent)', () => {
  const suite = browserSuite({ model: false });
  const open = (hash?: string) => suite.open(VIEW, hash);

  it('renders every bubble type of the demo under the CSP, with the model banner and a disabled composer', async ({
    task,
  }) => {
    const { page, problems } = await open();
    await page.waitForSelector('[data-testid="bubble"][data-type="secret-request"]');
    const banner = page.getByTestId('model-banner');
    await expect.poll(() => banner.textContent()).toContain('XAI_API_KEY');

    const types = await page.$$eval('[data-kind="send-message"]', (els) =>
      els.map((e) => e.getAttribute('data-type')),
    );
    expect(new Set(types)).toEqual(
      new Set(['text', 'attachment', 'cursor-agent', 'widget', 'secret-request']),
    );
    for (const kind of ['message', 'user-attachment', 'tool-call', 'notice']) {
      expect(await page.locator(`[data-testid="bubble"][data-kind="${kind}"]`).count(), kind).toBeGreaterThan(
        0,
      );
    }
    // Every rendered bubble names its entry.
    const ids = await page.$$eval('[data-testid="bubble"]', (els) =>
      els.map((e) => e.getAttribute('data-entry-id')),
    );
    expect(ids.every((id) => id && id.length > 0)).toBe(true);

    expect(await page.getByTestId('composer-input').isDisabled()).toBe(true);
    await expect
      .poll(() => page.getByTestId('composer-disabled').textContent())
      .toMatch(/No model is set up/);

    // The demo's widget was answered: its options are disabled and the choice is marked.
    const chosen = page.locator('[data-testid="widget-option"][aria-pressed="true"]');
    await expect.poll(() => chosen.textContent()).toContain('A secret request');
    expect(await page.locator('[data-testid="widget-option"]:not([disabled])').count()).toBe(0);
    await saveScreenshot(page, task.name);
    expect(problems).toEqual([]);
  });

  it('stays at the bottom while bubbles grow after layout, unless the reader scrolled up', async () => {
    const { page, problems } = await open();
    await page.waitForSelector('[data-testid="bubble"][data-type="secret-request"]');
    const transcript = page.getByTestId('transcript');
    const gap = (): Promise<number> =>
      transcript.evaluate((e) => e.scrollHeight - e.scrollTop - e.clientHeight);
    await expect.poll(gap).toBeLessThan(2);
    // A bubble that grows after it was laid out (an image or a preview arriving late).
    const grow = (px: number): Promise<void> =>
      page.$eval(
        '.bubbles',
        (bubbles, height) => {
          const late = document.createElement('div');
          late.style.height = `${height}px`;
          bubbles.lastElementChild?.append(late);
        },
        px,
      );
    await grow(700);
    await expect.poll(gap).toBeLessThan(2);
    // Scrolled up to read: growth below leaves the view where the reader put it.
    await transcript.evaluate((e) => {
      e.scrollTop = 0;
    });
    await expect.poll(() => transcript.evaluate((e) => e.scrollTop)).toBe(0);
    await grow(700);
    await page.evaluate(
      () => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))),
    );
    expect(await transcript.evaluate((e) => e.scrollTop)).toBe(0);
    expect(problems).toEqual([]);
  });

  it('hides thinking until toggled; the bubble style switch changes classes only, and persists', async ({
    task,
  }) => {
    const { page, problems } = await open();
    await page.waitForSelector('[data-testid="bubble"][data-type="text"]');
    expect(await page.locator('[data-kind="thinking"]').count()).toBe(0);
    await page.getByTestId('thinking-toggle').click();
    await page.waitForSelector('[data-kind="thinking"]');
    expect(await page.getByTestId('thinking-toggle').getAttribute('aria-pressed')).toBe('true');
    expect(await page.locator('[data-kind="thinking"]').first().textContent()).toBeTruthy();
    await saveScreenshot(page, `${task.name} (thinking shown)`);
    await page.getByTestId('thinking-toggle').click();
    await expect.poll(() => page.locator('[data-kind="thinking"]').count()).toBe(0);

    const before = await page.$$eval('[data-testid="bubble"]', (els) =>
      els.map((e) => e.getAttribute('data-entry-id')),
    );
    const transcript = page.getByTestId('transcript');
    expect(await transcript.getAttribute('data-bubble-style')).toBe('cards');
    await page.getByTestId('bubble-style-toggle').click();
    expect(await transcript.getAttribute('class')).toContain('transcript-plain');
    const after = await page.$$eval('[data-testid="bubble"]', (els) =>
      els.map((e) => e.getAttribute('data-entry-id')),
    );
    expect(after).toEqual(before);

    await page.reload();
    await page.waitForSelector('[data-testid="bubble"]');
    expect(await page.getByTestId('transcript').getAttribute('data-bubble-style')).toBe('plain');
    await saveScreenshot(page, task.name);
    await page.getByTestId('bubble-style-toggle').click();
    expect(problems).toEqual([]);
  });

  it('follows prefers-color-scheme until the theme toggle picks one, and remembers it', async ({ task }) => {
    {
      const { page } = await suite.open({ ...VIEW, colorScheme: 'dark' });
      await page.waitForSelector('[data-testid="agent-row"]');
      expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
      await saveScreenshot(page, `${task.name} (dark)`);
      await page.getByTestId('theme-toggle').click(); // system -> light
      expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('light');
      await page.reload();
      await page.waitForSelector('[data-testid="agent-row"]');
      expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('light');
      await saveScreenshot(page, task.name);
    }
  });

  it("changes the look on the theme toggle's first click whatever the system's theme", async () => {
    {
      const { page, problems } = await suite.open({ ...VIEW, colorScheme: 'light' });
      await page.waitForSelector('[data-testid="agent-row"]');
      const theme = () => page.evaluate(() => document.documentElement.dataset.theme);
      const toggle = page.getByTestId('theme-toggle');
      expect(await theme()).toBe('light');
      const seen: Array<[string | null, string | undefined]> = [];
      for (let i = 0; i < 3; i++) {
        await toggle.click();
        seen.push([await toggle.getAttribute('data-theme-choice'), await theme()]);
      }
      // Light system: the first click goes dark, then light is pinned, then the system is followed.
      expect(seen).toEqual([
        ['dark', 'dark'],
        ['light', 'light'],
        ['system', 'light'],
      ]);
      expect(problems).toEqual([]);
    }
  });

  it('opens an image full screen with its alt as caption, closes on Esc, and previews the PDF', async ({
    task,
  }) => {
    const { page, problems } = await open();
    const image = page.locator('[data-testid="image-grid"] img').first();
    await image.waitFor();
    expect(await image.getAttribute('title')).toBe('A bar chart');
    await page.locator('[data-testid="image-grid"] .image-button').first().click();
    const lightbox = page.getByTestId('lightbox');
    await lightbox.waitFor();
    expect(await lightbox.locator('figcaption').textContent()).toBe('A bar chart');
    await saveScreenshot(page, `${task.name} (lightbox)`);
    await page.keyboard.press('Escape');
    await lightbox.waitFor({ state: 'detached' });

    await page.locator('[data-type="attachment"] [data-testid="file-preview-toggle"]').click();
    await page.waitForSelector('[data-testid="preview-pdf"] canvas', { timeout: 20_000 });
    await page.locator('[data-testid="preview-pdf"]').scrollIntoViewIfNeeded();
    await saveScreenshot(page, task.name);
    expect(problems).toEqual([]);
  });

  it('names the login command as this shell runs it on the sign-in page (sendbox may not be on PATH)', async ({
    task,
  }) => {
    const signedOut = await suite.browser.newContext();
    try {
      const page = await signedOut.newPage();
      expect((await page.goto(suite.gateway.url))?.status()).toBe(401);
      // `sendbox login` only when this very box is the sendbox on PATH; else `node <its bin> login`.
      const login = sendboxCommand(`login --data-dir ${suite.gateway.dataDir}`);
      expect(await page.locator('code').allTextContents()).toContain(login);
      await saveScreenshot(page, task.name);
    } finally {
      await signedOut.close();
    }
  });

  it('creates, duplicates and deletes agents from the sidebar', async ({ task }) => {
    const { page, problems } = await open();
    await page.waitForSelector('[data-testid="agent-row"]');
    await page.getByTestId('new-agent').click();
    await page.getByTestId('new-agent-name').fill('Research');
    await page.keyboard.press('Enter');
    const row = page.locator('[data-testid="agent-row"]', { hasText: 'Research' });
    await row.waitFor();
    const id = await row.getAttribute('data-agent-id');
    expect(id).toBeTruthy();
    await expect.poll(() => page.locator('.conversation-head h2').textContent()).toBe('Research');

    const original = page.locator(`[data-agent-id="${id}"]`);
    await original.getByTestId('agent-menu').click();
    await original.getByTestId('agent-duplicate').click();
    await expect.poll(() => page.locator('[data-testid="agent-row"]').count()).toBe(3);

    await original.getByTestId('agent-menu').click();
    await original.getByTestId('agent-delete').click();
    await original.getByTestId('agent-delete-confirm').click();
    await expect.poll(() => page.locator(`[data-agent-id="${id}"]`).count()).toBe(0);
    await saveScreenshot(page, task.name);
    expect(problems).toEqual([]);
  });
});

describe('web UI with a model', () => {
  const suite = browserSuite({ keepRequests: true });
  const open = (hash?: string) => suite.open(VIEW, hash);

  /** Waits until the agent's last turn has ended: idle, with `turn-ended` as its last entry. */
  async function waitForTurnEnd(agentId: string): Promise<void> {
    await expect
      .poll(
        async () => {
          const rows = await callGateway<{ id: string; state: string }[]>(suite.gateway, 'listAgents', {});
          const { entries } = await callGateway<{ entries: { kind: string }[] }>(suite.gateway, 'openAgent', {
            id: agentId,
          });
          return `${rows.find((row) => row.id === agentId)?.state} ${entries.at(-1)?.kind}`;
        },
        { timeout: 20_000 },
      )
      .toBe('idle turn-ended');
  }

  // Three pages, two turns, a duplicate and a read of every file of the data dir: 2–3 s alone, and
  // once over 30 s in a full run (where it stalled was not recorded: the step trail says it now).
  it(
    'sends with Enter, streams the reply live, answers a widget once and saves a secret without keeping it',
    { timeout: 60_000 },
    async ({ task, onTestFailed, onTestFinished }) => {
      const step = stepTrail({ onTestFailed, onTestFinished });
      step('open');
      const { page, problems } = await open();
      const answerRequests: string[] = [];
      const secretBodies: string[] = [];
      page.on('request', (request) => {
        if (request.url().endsWith('/api/answerWidget')) answerRequests.push(request.postData() ?? '');
        if (request.url().endsWith('/api/submitSecret')) secretBodies.push(request.postData() ?? '');
      });
      await page.getByTestId('new-agent').click();
      await page.getByTestId('new-agent-name').fill('Live');
      await page.keyboard.press('Enter');
      const input = page.getByTestId('composer-input');
      await expect.poll(() => input.isEnabled()).toBe(true);
      await expect
        .poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-testid')))
        .toBe('composer-input');

      // Shift+Enter is a new line, not a send.
      step('type');
      await input.type('first line');
      await page.keyboard.press('Shift+Enter');
      await input.type('second line');
      expect(await input.inputValue()).toBe('first line\nsecond line');

      suite.model.reply(
        send({ type: 'text', content: 'Hello **there**' }),
        send({
          type: 'widget',
          widget: { prompt: 'Pick one', options: [{ label: 'Red', value: 'red' }, { label: 'Blue' }] },
        }),
      );
      step('send');
      await page.keyboard.press('Enter');
      await expect.poll(() => input.inputValue()).toBe('');
      const userBubble = page.locator('[data-kind="message"][data-role="user"]').first();
      await expect.poll(() => userBubble.textContent()).toContain('first line\nsecond line');
      const textBubble = page.locator('[data-type="text"]').first();
      await expect.poll(() => textBubble.innerHTML()).toContain('<strong>there</strong>');

      step('widget shown');
      const red = page.locator('[data-testid="widget-option"][data-value="red"]');
      await red.waitFor();
      suite.model.reply(
        send({ type: 'secret-request', secret: { label: 'Deploy key', name: 'DEPLOY_KEY' } }),
      );
      step('answer the widget');
      await red.dblclick();
      await expect.poll(() => red.getAttribute('aria-pressed')).toBe('true');
      expect(await red.isDisabled()).toBe(true);
      const answer = page.locator('[data-kind="message"][data-role="user"]', { hasText: 'red' });
      await answer.waitFor();
      expect(answerRequests).toHaveLength(1);
      expect(JSON.parse(answerRequests[0]!)).toMatchObject({ answer: 'red' });

      step('secret form');
      const secretInput = page.getByTestId('secret-input');
      await secretInput.waitFor();
      expect(await secretInput.getAttribute('type')).toBe('password');
      expect(await secretInput.getAttribute('autocomplete')).toBe('off');
      const value = 'sk-test-3f9a7c1e5b';
      await secretInput.fill(value);
      step('save the secret');
      await secretInput.press('Enter');
      await page.getByTestId('secret-saved').waitFor();
      expect(await page.getByTestId('secret-saved').textContent()).toContain('Deploy key');
      // The form is gone: the keyboard goes on in the composer.
      await expect
        .poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-testid')))
        .toBe('composer-input');
      // The padlock is drawn, not an emoji: no tofu where no colour-emoji font is installed.
      expect(await page.getByTestId('secret-saved').textContent()).not.toMatch(/\p{Extended_Pictographic}/u);
      const lock = await page.getByTestId('secret-lock').boundingBox();
      expect(lock?.width).toBeGreaterThan(10);
      expect(secretBodies).toHaveLength(1);
      expect(JSON.parse(secretBodies[0]!)).toMatchObject({ value });
      // The value is nowhere in the page afterwards: not in the DOM, not in storage.
      expect(await page.content()).not.toContain(value);
      expect(await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage }))).not.toContain(
        value,
      );
      await saveScreenshot(page, task.name);

      // Nor on disk or in any log once the turn the secret resumed has ended: not in the JSONL,
      // the ledger (store.db and its WAL), any other file of the data dir (secrets.enc holds it
      // encrypted), the suite.gateway's output, or what the model was sent.
      const agentId = await page
        .locator('[data-testid="agent-row"]', { hasText: 'Live' })
        .getAttribute('data-agent-id');
      expect(agentId).toBeTruthy();
      step('turn end');
      await waitForTurnEnd(agentId!);
      step('read the data dir');
      const jsonl = path.join(suite.gateway.dataDir, 'agent-transcripts', agentId!, `${agentId!}.jsonl`);
      const storeDb = path.join(suite.gateway.dataDir, 'agents', agentId!, 'store.db');
      const [jsonlBytes, dbBytes, walBytes] = await Promise.all([
        fs.readFile(jsonl),
        fs.readFile(storeDb),
        fs.readFile(`${storeDb}-wal`),
      ]);
      // The right files: they hold this conversation (the request is recorded by its label).
      expect(jsonlBytes.includes('Deploy key')).toBe(true);
      expect(Buffer.concat([dbBytes, walBytes]).includes('DEPLOY_KEY')).toBe(true);
      for (const [name, bytes] of [
        ['JSONL', jsonlBytes],
        ['store.db', dbBytes],
        ['store.db-wal', walBytes],
      ] as const) {
        expect(bytes.includes(value), `${name} holds the secret`).toBe(false);
      }
      expect(await fs.stat(path.join(suite.gateway.dataDir, 'agents', agentId!, 'secrets.enc'))).toBeTruthy();
      for (const file of await filesUnder(suite.gateway.dataDir)) {
        expect((await fs.readFile(file)).includes(value), `${file} holds the secret`).toBe(false);
      }
      expect(suite.gateway.output()).not.toContain(value);
      expect(suite.model.requests().length).toBeGreaterThan(3);
      expect(suite.model.requests().some((body) => body.includes(value))).toBe(false);

      // A duplicate has the history but not the secret: its request does not claim "Saved".
      step('duplicate');
      const { agent: copy } = await callGateway<{ agent: { id: string } }>(suite.gateway, 'duplicateAgent', {
        id: agentId!,
      });
      const duplicate = await open(`#agent=${copy.id}`);
      const notHere = duplicate.page.getByTestId('secret-not-here');
      await notHere.waitFor({ timeout: 20_000 });
      expect(await duplicate.page.getByTestId('secret-saved').count()).toBe(0);
      expect(await notHere.textContent()).toMatch(
        /Not saved in this agent: Deploy key was saved in the agent this one was copied from/,
      );
      await saveScreenshot(duplicate.page, `${task.name} (duplicate)`);
      await duplicate.page.close();
      step('reopen the original');
      const original = await open(`#agent=${agentId!}`);
      await original.page.getByTestId('secret-saved').waitFor({ timeout: 20_000 });
      expect(await original.page.getByTestId('secret-not-here').count()).toBe(0);
      await original.page.close();
      expect([...problems, ...duplicate.problems, ...original.problems]).toEqual([]);
      // The model's script is the suite's: a call of this agent's made late must not take the next test's.
      await suite.settled(agentId!);
    },
  );

  it('previews a PDF, a Word document and a workbook the agent attaches from its sandbox', async ({
    task,
  }) => {
    const { page, problems } = await open();
    await page.getByTestId('new-agent').click();
    await page.getByTestId('new-agent-name').fill('Files');
    await page.keyboard.press('Enter');
    const row = page.locator('[data-testid="agent-row"]', { hasText: 'Files' });
    await row.waitFor();
    const agentId = await row.getAttribute('data-agent-id');
    expect(agentId).toBeTruthy();

    // The files the agent "made": written into its sandbox (layout.ts), attached by file:// URL.
    const sandbox = path.join(suite.gateway.dataDir, 'sandboxes', agentId!);
    await fs.mkdir(path.join(sandbox, 'out'), { recursive: true });
    const files = {
      'report.pdf': samplePdf(),
      'notes.docx': sampleDocx(),
      'budget.xlsx': await sampleXlsx(),
    };
    for (const [name, bytes] of Object.entries(files))
      await fs.writeFile(path.join(sandbox, 'out', name), bytes);
    suite.model.reply({
      toolCalls: Object.keys(files).map((name) =>
        sendCall({ type: 'attachment', url: pathToFileURL(path.join(sandbox, 'out', name)).href }),
      ),
    });
    const input = page.getByTestId('composer-input');
    await expect.poll(() => input.isEnabled()).toBe(true);
    await input.fill('Send me the report, the notes and the budget.');
    await page.keyboard.press('Enter');

    const card = (name: string) =>
      page.locator('[data-kind="send-message"][data-type="attachment"]', { hasText: name });
    for (const [name, bytes] of Object.entries(files)) {
      await card(name).waitFor();
      expect(await card(name).getByTestId('file-card').textContent()).toContain(name);
      expect(await card(name).getByTestId('file-card').textContent()).toContain(
        bytes.length < 1024 ? `${bytes.length} B` : 'KB',
      );
    }

    // PDF: pdf.js draws both pages; the first canvas has ink on it, not just a white page.
    await card('report.pdf').getByTestId('file-preview-toggle').click();
    const pdf = card('report.pdf').getByTestId('preview-pdf');
    await expect.poll(() => pdf.textContent(), { timeout: 20_000 }).toContain('2 pages.');
    expect(await pdf.locator('canvas').count()).toBe(2);
    const ink = await pdf
      .locator('canvas')
      .first()
      .evaluate((canvas: HTMLCanvasElement) => {
        const { data } = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height);
        let dark = 0;
        let light = 0;
        for (let i = 0; i < data.length; i += 4) {
          if (data[i]! < 128 && data[i + 1]! < 128 && data[i + 2]! < 128 && data[i + 3]! > 0) dark++;
          else light++;
        }
        return { dark, light, width: canvas.width, height: canvas.height };
      });
    expect(ink.width).toBeGreaterThan(100);
    expect(ink.dark).toBeGreaterThan(200); // the glyphs of "Quarterly report" and its subtitle
    expect(ink.light).toBeGreaterThan(ink.dark); // on a white page

    // Word: the document's text, with its markup shown as text and never run.
    await card('notes.docx').getByTestId('file-preview-toggle').click();
    const docx = card('notes.docx').getByTestId('preview-docx');
    await docx.waitFor({ timeout: 20_000 });
    expect(await docx.locator('h1').textContent()).toBe(SAMPLE_DOCX_TEXT.heading);
    const docxText = await docx.textContent();
    for (const text of [SAMPLE_DOCX_TEXT.body, SAMPLE_DOCX_TEXT.inertMarkup, SAMPLE_DOCX_TEXT.bold]) {
      expect(docxText).toContain(text);
    }
    expect(await docx.locator('strong').textContent()).toBe(SAMPLE_DOCX_TEXT.bold);
    expect(await docx.locator('script').count()).toBe(0);

    // Excel: the first sheet as a table, capped at 100 rows.
    await card('budget.xlsx').getByTestId('file-preview-toggle').click();
    const xlsx = card('budget.xlsx').getByTestId('preview-xlsx');
    await xlsx.waitFor({ timeout: 20_000 });
    expect(await xlsx.locator('caption').textContent()).toBe(SAMPLE_XLSX.sheet);
    expect(await xlsx.locator('tr').first().locator('th').allTextContents()).toEqual([...SAMPLE_XLSX.header]);
    // Formulas read as their results through the cell's number format, never raw doubles.
    expect(await xlsx.locator('tr').nth(1).locator('td').allTextContents()).toEqual([
      'Line 1',
      '10',
      '12',
      '22',
      '45.5%',
      '0.2',
    ]);
    expect(await xlsx.locator('tr').nth(99).locator('td').allTextContents()).toEqual([
      'Line 99',
      '990',
      '1188',
      '2178',
      '45.5%',
      '0.2',
    ]);
    expect(await xlsx.locator('tr').count()).toBe(100);
    expect(await xlsx.textContent()).toContain(`First 100 of ${SAMPLE_XLSX.rows + 1} rows`);

    await saveScreenshot(page, task.name);
    for (const name of Object.keys(files)) {
      await card(name).scrollIntoViewIfNeeded();
      await card(name).screenshot({ path: await artifactPath(`${task.name} ${name}`) });
    }
    expect(problems).toEqual([]);
    await suite.settled(agentId!);
  });

  it('shows a prompt queued behind a running turn at once as pending, until its turn starts', async ({
    task,
    onTestFailed,
    onTestFinished,
  }) => {
    // It once timed out at 30 s in a full run (1-3 s alone, also with the CPU saturated).
    const step = stepTrail({ onTestFailed, onTestFinished });
    step('open');
    const { page, problems } = await open();
    await page.getByTestId('new-agent').click();
    await page.getByTestId('new-agent-name').fill('Queue');
    await page.keyboard.press('Enter');
    // The new agent's conversation, not the one open before it.
    await page.getByRole('heading', { name: 'Queue' }).waitFor();
    const input = page.getByTestId('composer-input');
    await expect.poll(() => input.isEnabled()).toBe(true);
    let answerFirst = (): void => undefined;
    const firstAnswered = new Promise<void>((resolve) => (answerFirst = resolve));
    suite.model.reply(
      { ...send({ type: 'text', content: 'first answer' }), after: firstAnswered },
      { text: 'done' },
      send({ type: 'text', content: 'second answer' }),
      { text: 'done' },
    );
    step('first question');
    await input.fill('the first question');
    await page.keyboard.press('Enter');
    await page.locator('[data-kind="message"]', { hasText: 'the first question' }).waitFor();
    step('queued question');
    await input.fill('the queued question');
    await page.keyboard.press('Enter');
    const pending = page.getByTestId('pending-input');
    await pending.waitFor({ timeout: 10_000 });
    expect(await pending.textContent()).toContain('the queued question');
    await saveScreenshot(page, task.name);
    step('first answered');
    answerFirst();
    // Its turn starts: the pending bubble gives way to the user message, and the answer follows.
    await page.locator('.bubble', { hasText: 'second answer' }).waitFor({ timeout: 20_000 });
    expect(await page.getByTestId('pending-input').count()).toBe(0);
    await page.locator('[data-kind="message"]', { hasText: 'the queued question' }).waitFor();
    expect(problems).toEqual([]);
  });

  it('uploads a file from the composer and shows it as a file card', async ({ task }) => {
    const { page, problems } = await open();
    const uploads: string[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/api/uploadFile')) uploads.push(request.url());
    });
    await page.waitForSelector('[data-testid="agent-row"]');
    await expect.poll(() => page.getByTestId('composer-input').isEnabled()).toBe(true);
    // A file over the box's limit is refused at once, before a byte is sent, saying the limit.
    const huge = path.join(suite.gateway.dataDir, 'huge.bin');
    await fs.writeFile(huge, '');
    await fs.truncate(huge, 60 * 1024 * 1024);
    await page.getByTestId('composer-file').setInputFiles(huge);
    const refusal = page.getByRole('alert').filter({ hasText: 'huge.bin' });
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(
      /Not attached: huge\.bin \(60 MB\)\. sendbox takes files up to 50 MB/,
    );
    expect(await page.getByTestId('file-chip').count()).toBe(0);
    expect(uploads).toEqual([]);
    await saveScreenshot(page, `${task.name} (too large)`);
    await page.getByTestId('composer-file').setInputFiles({
      name: 'notes one.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from('hello from the test'),
    });
    // Staged as a chip until Send.
    await page.getByTestId('file-chip').waitFor();
    await page.getByTestId('composer-send').click();
    const card = page.locator('[data-kind="user-attachment"] [data-testid="file-card"]', {
      hasText: 'notes one.txt',
    });
    await card.waitFor();
    expect(await card.textContent()).toContain('19 B');
    // The bubble's time sits inside the card's frame, as a text bubble's does, not below it.
    const framed = await page
      .locator('[data-kind="user-attachment"]', { hasText: 'notes one.txt' })
      .evaluate((bubble) => {
        let frame = bubble.querySelector<HTMLElement>('.file-name');
        while (frame && parseFloat(getComputedStyle(frame).borderTopWidth) === 0) frame = frame.parentElement;
        const time = bubble.querySelector('.bubble-time')?.getBoundingClientRect();
        const box = frame?.getBoundingClientRect();
        return (
          !!time &&
          !!box &&
          time.top >= box.top &&
          time.bottom <= box.bottom &&
          time.left >= box.left &&
          time.right <= box.right
        );
      });
    expect(framed).toBe(true);
    await saveScreenshot(page, task.name);
    expect(problems).toEqual([]);
  });
});
