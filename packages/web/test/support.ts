/**
 * Browser-test support: the real gateway (the `sendbox serve` CLI in a child process on an
 * ephemeral loopback port, its own temp data dir), an OpenAI-compatible model server on
 * loopback whose replies the test scripts (the only fake), Debian's chromium, a fresh
 * `dist/` build when the sources are newer, screenshots kept as test artifacts, and a
 * ledger seeded through the runtime.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { freshLoginUrl } from '../../box/src/cli/login.ts';
import { writeCompletionStream } from '../../box/src/testing/openai-stream.ts';
import { testServerMounts } from '../../box/src/mcp/testing/server-mounts.ts';

const WEB_DIR = fileURLToPath(new URL('..', import.meta.url));
const REPO_ROOT = path.resolve(WEB_DIR, '..', '..');
export const CHROMIUM = '/usr/bin/chromium';
/** Screenshots of the browser tests (`test-artifacts/` is git-ignored; CI keeps it). */
export const ARTIFACTS_DIR = path.join(REPO_ROOT, 'test-artifacts', 'web');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(full));
    else newest = Math.max(newest, fs.statSync(full).mtimeMs);
  }
  return newest;
}

/** Builds `dist/` if it is missing or older than `src/`, `public/` or `index.html`. */
export function ensureBuilt(): void {
  const index = path.join(WEB_DIR, 'dist', 'index.html');
  const sources = Math.max(
    newestMtime(path.join(WEB_DIR, 'src')),
    fs.statSync(path.join(WEB_DIR, 'index.html')).mtimeMs,
    fs.statSync(path.join(WEB_DIR, 'vite.config.ts')).mtimeMs,
    newestMtime(path.join(WEB_DIR, 'public')),
  );
  if (fs.existsSync(index) && fs.statSync(index).mtimeMs >= sources) return;
  const result = spawnSync(
    process.execPath,
    [path.join(REPO_ROOT, 'node_modules/vite/bin/vite.js'), 'build'],
    // vitest runs with NODE_ENV=test; the page under test is the production build.
    { cwd: WEB_DIR, encoding: 'utf8', env: { ...process.env, NODE_ENV: 'production' } },
  );
  if (result.status !== 0) throw new Error(`vite build failed:\n${result.stdout}\n${result.stderr}`);
}

/**
 * Debian's chromium, headless. Its absence is an error, never a reason to skip: the browser
 * tests are part of the suite (`.ci/run` installs it).
 */
export function launchBrowser(extraArgs: readonly string[] = []): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) {
    return Promise.reject(
      new Error(
        `${CHROMIUM} is missing, so the web UI tests cannot run. Install Debian's chromium: apt-get install -y chromium`,
      ),
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      ...extraArgs,
    ],
  });
}

export interface RunningGateway {
  url: string;
  /** For node-side calls only (the CLI's way in); the page never sees it. */
  token: string;
  dataDir: string;
  /** A fresh one-time login link, as `sendbox login` prints it. */
  loginUrl(): Promise<string>;
  /** Signs a browser context in: redeems a login link and gives the context the cookie and tab proof it set. */
  signIn(context: BrowserContext): Promise<void>;
  /** What the gateway printed so far (500s are detailed there, not to the client). */
  output(): string;
  /**
   * Stops the box (SIGTERM, or `signal`: SIGKILL for a crash); its data dir is removed unless
   * `keepData` (for a restart on it).
   */
  stop(options?: { keepData?: boolean; signal?: NodeJS.Signals }): Promise<void>;
}

/**
 * Starts `sendbox serve` (plus `args`) on a temp data dir and an ephemeral port and waits for
 * its `gateway.json`; `at` restarts a box on the data dir and port it had.
 */
export async function startGateway(
  env: Record<string, string> = {},
  args: string[] = [],
  at?: { dataDir: string; port: number },
): Promise<RunningGateway> {
  const dataDir = at?.dataDir ?? (await fsp.mkdtemp(path.join(os.tmpdir(), 'sendbox-web-')));
  // A box that was killed leaves its descriptor behind: wait for the new one, not that.
  if (at) await fsp.rm(path.join(dataDir, 'gateway.json'), { force: true });
  const cleanEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const key of Object.keys(cleanEnv)) {
    if (/^(XAI_|OPENAI_|SENDBOX_)/.test(key)) delete cleanEnv[key];
  }
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(REPO_ROOT, 'packages/box/src/cli/main.ts'),
      'serve',
      '--port',
      String(at?.port ?? 0),
      '--data-dir',
      dataDir,
      '--no-build',
      ...args,
    ],
    { cwd: REPO_ROOT, env: { ...cleanEnv, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const descriptor = path.join(dataDir, 'gateway.json');
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`sendbox serve exited early:\n${output}`);
    try {
      const { host, port, token } = JSON.parse(await fsp.readFile(descriptor, 'utf8')) as {
        host: string;
        port: number;
        token: string;
      };
      const url = `http://${host}:${port}/`;
      return {
        url,
        token,
        dataDir,
        loginUrl: () => freshLoginUrl(dataDir),
        signIn: async (context) => signInContext(context, url, await freshLoginUrl(dataDir)),
        output: () => output,
        async stop(options = {}) {
          if (child.exitCode === null && child.signalCode === null) child.kill(options.signal ?? 'SIGTERM');
          await exited;
          if (!options.keepData) await fsp.rm(dataDir, { recursive: true, force: true });
        },
      };
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`sendbox serve did not write ${descriptor} within 60 s:\n${output}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/**
 * Redeems a login link over HTTP and gives the context both halves of the session, as the
 * browser would have them after the redirect: the cookie, and the tab proof in each page's
 * sessionStorage (the login flow itself runs in Chromium in security.test.ts); cheaper than
 * loading the whole page once per context.
 */
async function signInContext(context: BrowserContext, url: string, link: string): Promise<void> {
  const response = await fetch(link, { redirect: 'manual' });
  const setCookie = response.headers.get('set-cookie') ?? '';
  const pair = /^([^=;\s]+)=([^;]*)/.exec(setCookie);
  const proof = /#session=([\w-]+)$/.exec(response.headers.get('location') ?? '')?.[1];
  if (response.status !== 303 || !pair || proof === undefined) {
    throw new Error(`login link ${link} answered ${response.status} without a session cookie and tab proof`);
  }
  await context.addCookies([{ name: pair[1]!, value: pair[2]!, url, httpOnly: true, sameSite: 'Strict' }]);
  await context.addInitScript(
    ({ origin, proof }) => {
      if (window.location.origin === origin) window.sessionStorage.setItem('sendbox.session', proof);
    },
    { origin: new URL(url).origin, proof },
  );
}

export interface ScriptedToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

/**
 * One model step: some tool calls (run in order by the runtime), or plain text; `delayMs`
 * holds the answer back (a model that takes its time, for working states and Stop), `after`
 * holds it until that promise settles (for as long as the test needs), `status` answers with
 * that HTTP error instead. Asked to stream, the server streams (word-sized deltas,
 * `streamDelayMs` apart).
 */
export type ScriptedReply = (
  { toolCall: ScriptedToolCall } | { toolCalls: ScriptedToolCall[] } | { text: string } | { status: number }
) & { delayMs?: number; streamDelayMs?: number; after?: Promise<unknown> };

export interface ModelServer {
  baseURL: string;
  /** Queues replies for the next chat-completion calls, in order; an empty queue answers `done`. */
  reply(...replies: ScriptedReply[]): void;
  calls(): number;
  /** Replies queued and not yet taken. */
  pending(): number;
  /** The request bodies received so far (when started with `keepRequests`). */
  requests(): readonly string[];
  close(): Promise<void>;
}

/** An OpenAI-compatible `/v1/chat/completions` on loopback answering from a script. */
export async function startModelServer(
  options: {
    keepRequests?: boolean;
    onDelta?: (piece: string) => void;
    /**
     * How `stream: true` is met: streamed (default), answered with one JSON body (`json`, an
     * endpoint that ignores the flag), or refused with a 400 naming `stream` (`refuse`).
     */
    streams?: 'stream' | 'json' | 'refuse';
  } = {},
): Promise<ModelServer> {
  const queue: ScriptedReply[] = [];
  const requests: string[] = [];
  let calls = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      calls++;
      const body = Buffer.concat(chunks).toString('utf8');
      if (options.keepRequests) requests.push(body);
      const asked = (JSON.parse(body || '{}') as { stream?: unknown }).stream === true;
      if (asked && options.streams === 'refuse') {
        res.writeHead(400, { 'Content-Type': 'application/json' });
        res.end(
          JSON.stringify({ error: { message: 'stream is not supported', type: 'invalid_request_error' } }),
        );
        return;
      }
      const streamed = asked && options.streams !== 'json';
      const next = queue.shift() ?? { text: 'done' };
      const reply = (): void => {
        if (next.delayMs) setTimeout(() => answer(next, streamed), next.delayMs);
        else answer(next, streamed);
      };
      if (next.after) void next.after.then(reply, reply);
      else reply();
    });
    function answer(next: ScriptedReply, streamed: boolean): void {
      if (res.destroyed) return; // the caller gave up (Stop, a timeout)
      if ('status' in next) {
        res.writeHead(next.status, { 'Content-Type': 'application/json' });
        res.end(
          JSON.stringify({ error: { message: `scripted failure ${next.status}`, type: 'server_error' } }),
        );
        return;
      }
      const toolCalls = 'toolCall' in next ? [next.toolCall] : 'toolCalls' in next ? next.toolCalls : [];
      if (streamed) {
        void writeCompletionStream(res, {
          id: `chatcmpl-${calls}`,
          model: 'local',
          content: 'text' in next ? next.text : null,
          toolCalls: toolCalls.map((call, index) => ({
            id: `call_${calls}_${index}`,
            name: call.name,
            arguments: JSON.stringify(call.arguments),
          })),
          ...(next.streamDelayMs ? { delayMs: next.streamDelayMs } : {}),
          ...(options.onDelta ? { onDelta: options.onDelta } : {}),
        });
        return;
      }
      const message =
        'text' in next
          ? { role: 'assistant', content: next.text }
          : {
              role: 'assistant',
              content: null,
              tool_calls: toolCalls.map((call, index) => ({
                id: `call_${calls}_${index}`,
                type: 'function',
                function: { name: call.name, arguments: JSON.stringify(call.arguments) },
              })),
            };
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `chatcmpl-${calls}`,
          object: 'chat.completion',
          created: 0,
          model: 'local',
          choices: [{ index: 0, message, finish_reason: 'text' in next ? 'stop' : 'tool_calls' }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    reply: (...replies) => queue.push(...replies),
    calls: () => calls,
    pending: () => queue.length,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const sendCall = (args: Record<string, unknown>): ScriptedToolCall => ({
  name: 'send_message',
  arguments: args,
});
export const send = (args: Record<string, unknown>): ScriptedReply => ({ toolCall: sendCall(args) });

/** The environment that points `sendbox serve` at a `startModelServer` model. */
export function modelEnv(model: ModelServer): Record<string, string> {
  return { SENDBOX_PROVIDER: 'openai-compatible', OPENAI_BASE_URL: model.baseURL, SENDBOX_MODEL: 'local' };
}

/**
 * The box's own test MCP server (the SDK's McpServer on stdio: echo, add, fail, hang…) as an
 * mcp.json entry, plus `extra` keys. It runs confined, so the checkout and the real folder of its
 * node_modules (a link out of a git worktree) are mounted read-only for it.
 */
export function testMcpServer(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    command: 'node',
    args: [path.join(REPO_ROOT, 'packages/box/src/mcp/testing/stdio-server.mjs')],
    readOnly: testServerMounts(REPO_ROOT),
    ...extra,
  };
}

/** Writes `<dataDir>/mcp.json` with these servers (the box reads it again when it changes). */
export async function writeMcpConfig(dataDir: string, servers: Record<string, unknown>): Promise<void> {
  await fsp.writeFile(
    path.join(dataDir, 'mcp.json'),
    `${JSON.stringify({ mcpServers: servers }, null, 2)}\n`,
  );
}

/** One gateway method over HTTP, as the page calls it (Bearer token, JSON in and out). */
export async function callGateway<T>(gateway: RunningGateway, method: string, body: object): Promise<T> {
  const response = await fetch(new URL(`api/${method}`, gateway.url), {
    method: 'POST',
    headers: { Authorization: `Bearer ${gateway.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} failed with ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

interface AgentRowLike {
  id: string;
  state: string;
}

/** Polls `listAgents` until `agentId` is idle and the model has taken `calls` calls in all. */
async function waitIdle(gateway: RunningGateway, model: ModelServer, agentId: string, calls: number) {
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (model.calls() >= calls) {
      const rows = await callGateway<AgentRowLike[]>(gateway, 'listAgents', {});
      if (rows.find((row) => row.id === agentId)?.state === 'idle') return;
    }
    if (Date.now() > deadline) {
      throw new Error(`agent ${agentId} did not go idle within 120 s:\n${gateway.output().slice(-4000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Fills an agent's ledger through the runtime, as a real conversation would: turns whose
 * scripted model sends `perTurn` distinct text messages in one step, then ends. The JSONL and
 * `store.db` are written by the host's own writers. Fewer, larger turns seed faster (each model
 * call carries the whole history). Returns the ledger's entry count (at least `entries`).
 */
export async function seedLedger(
  gateway: RunningGateway,
  model: ModelServer,
  agentId: string,
  entries: number,
  perTurn = 200,
): Promise<number> {
  let count = (await callGateway<{ entries: unknown[] }>(gateway, 'openAgent', { id: agentId })).entries
    .length;
  for (let turn = 0; count < entries; turn++) {
    const sends = Math.max(1, Math.min(perTurn, entries - count - 3));
    model.reply({
      toolCalls: Array.from({ length: sends }, (_, i) =>
        sendCall({ type: 'text', content: `Progress ${turn}.${i}: step **done**, moving on.` }),
      ),
    });
    const calls = model.calls() + 2; // the sends, then the closing step ("done")
    await callGateway(gateway, 'sendPrompt', {
      agentId,
      prompt: `Seed turn ${turn}`,
      clientNonce: `seed-${agentId}-${turn}`,
    });
    await waitIdle(gateway, model, agentId, calls);
    count = (await callGateway<{ entries: unknown[] }>(gateway, 'openAgent', { id: agentId })).entries.length;
  }
  return count;
}

/** `test-artifacts/web/<name>.png` (repo root), the name made file-safe; creates the folder. */
export async function artifactPath(name: string): Promise<string> {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 120);
  await fsp.mkdir(ARTIFACTS_DIR, { recursive: true });
  return path.join(ARTIFACTS_DIR, `${slug}.png`);
}

/**
 * Names the steps of a long browser test, so that one which fails (a timeout above all) or is slow
 * says which step it was in and how long each took: `const step = stepTrail(context);
 * step('answer the widget');` with the test's context (`onTestFailed`, `onTestFinished`).
 */
export function stepTrail(
  test: { onTestFailed: (handler: () => void) => void; onTestFinished: (handler: () => void) => void },
  slowMs = 15_000,
): (name: string) => void {
  const started = Date.now();
  const trail: string[] = [];
  let reported = false;
  const report = (why: string): void => {
    if (reported) return;
    reported = true;
    console.log(`${why}; steps (ms since start): ${trail.join(' → ')} → ${Date.now() - started} end`);
  };
  test.onTestFailed(() => report('failed'));
  test.onTestFinished(() => {
    if (Date.now() - started > slowMs) report(`slow (over ${slowMs} ms)`);
  });
  return (name) => {
    trail.push(`${Date.now() - started} ${name}`);
  };
}

/**
 * Saves a full-page PNG as `test-artifacts/web/<name>.png` and returns its path. Pass the
 * test's own name (vitest's `task.name`) so each test's picture is findable.
 */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  const file = await artifactPath(name);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * A fresh signed-in page of `target` at `viewport` (its context kept in `contexts` for the file's
 * cleanup), recording console errors, CSP violations, page errors and 5xx answers in `problems`.
 */
export async function openSignedInPage(
  browser: Browser,
  contexts: BrowserContext[],
  target: RunningGateway,
  viewport: { width: number; height: number; colorScheme?: 'light' | 'dark'; timezoneId?: string },
  hash = '',
): Promise<{ page: Page; problems: string[] }> {
  const { colorScheme, timezoneId, ...size } = viewport;
  const context = await browser.newContext({
    viewport: size,
    ...(colorScheme ? { colorScheme } : {}),
    ...(timezoneId ? { timezoneId, locale: 'en-US' } : {}),
  });
  contexts.push(context);
  await target.signIn(context);
  const page = await context.newPage();
  const problems: string[] = [];
  // A CSP violation is not a console error by itself: the page reports each one as an error (string
  // code: the scripts run this under tsx, whose esbuild would add helpers a page does not have).
  await page.addInitScript(
    "document.addEventListener('securitypolicyviolation', (event) => console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`));",
  );
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

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's critical and serious findings on the page as it stands, one line each. */
export async function axeViolations(page: Page): Promise<string[]> {
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
