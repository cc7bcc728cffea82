/**
 * Browser-test support: the real gateway (the `sendbox serve` CLI in a child process on an
 * ephemeral loopback port, its own temp data dir), an OpenAI-compatible model server on
 * loopback whose replies the test scripts (the only fake), Debian's chromium, and a fresh
 * `dist/` build when the sources are newer.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';

const WEB_DIR = fileURLToPath(new URL('..', import.meta.url));
const REPO_ROOT = path.resolve(WEB_DIR, '..', '..');
export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = fs.existsSync(CHROMIUM);

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(full));
    else newest = Math.max(newest, fs.statSync(full).mtimeMs);
  }
  return newest;
}

/** Builds `dist/` if it is missing or older than `src/` / `index.html`. */
export function ensureBuilt(): void {
  const index = path.join(WEB_DIR, 'dist', 'index.html');
  const sources = Math.max(
    newestMtime(path.join(WEB_DIR, 'src')),
    fs.statSync(path.join(WEB_DIR, 'index.html')).mtimeMs,
  );
  if (fs.existsSync(index) && fs.statSync(index).mtimeMs >= sources) return;
  const result = spawnSync(
    process.execPath,
    [path.join(REPO_ROOT, 'node_modules/vite/bin/vite.js'), 'build'],
    {
      cwd: WEB_DIR,
      encoding: 'utf8',
    },
  );
  if (result.status !== 0) throw new Error(`vite build failed:\n${result.stdout}\n${result.stderr}`);
}

export function launchBrowser(): Promise<Browser> {
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
    ],
  });
}

export interface RunningGateway {
  url: string;
  token: string;
  dataDir: string;
  /** What the gateway printed so far (500s are detailed there, not to the client). */
  output(): string;
  stop(): Promise<void>;
}

/** Starts `sendbox serve --port 0` on a temp data dir and waits for its `gateway.json`. */
export async function startGateway(env: Record<string, string> = {}): Promise<RunningGateway> {
  const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), 'sendbox-web-'));
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
      '0',
      '--data-dir',
      dataDir,
      '--no-build',
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
      return {
        url: `http://${host}:${port}/`,
        token,
        dataDir,
        output: () => output,
        async stop() {
          if (child.exitCode === null) child.kill('SIGTERM');
          await exited;
          await fsp.rm(dataDir, { recursive: true, force: true });
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

export type ScriptedReply =
  { toolCall: { name: string; arguments: Record<string, unknown> } } | { text: string };

export interface ModelServer {
  baseURL: string;
  /** Queues replies for the next chat-completion calls, in order. */
  reply(...replies: ScriptedReply[]): void;
  calls(): number;
  close(): Promise<void>;
}

/** An OpenAI-compatible `/v1/chat/completions` on loopback answering from a script. */
export async function startModelServer(): Promise<ModelServer> {
  const queue: ScriptedReply[] = [];
  let calls = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      calls++;
      const next = queue.shift() ?? { text: 'done' };
      const message =
        'text' in next
          ? { role: 'assistant', content: next.text }
          : {
              role: 'assistant',
              content: null,
              tool_calls: [
                {
                  id: `call_${calls}`,
                  type: 'function',
                  function: { name: next.toolCall.name, arguments: JSON.stringify(next.toolCall.arguments) },
                },
              ],
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
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    reply: (...replies) => queue.push(...replies),
    calls: () => calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export const send = (args: Record<string, unknown>): ScriptedReply => ({
  toolCall: { name: 'send_message', arguments: args },
});
