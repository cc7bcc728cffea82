/**
 * txcript and sendbox where users run them: the repository installed globally (`npm install -g`
 * into a temp prefix, as `npm install -g .` does at the root), then run from a folder outside the
 * checkout, and txcript's MCP server started through that install by the MCP SDK's client.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeCode } from '../harness/claude-code/index.ts';
import {
  codingSession,
  saveSession,
  searchTree,
  type SearchTree,
} from '../../test/fixtures/search/generate.ts';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../../../', import.meta.url));
const SESSION = '55555555-5555-4555-8555-555555555555';
let prefix: string;
let elsewhere: string;
let tree: SearchTree;

/** The environment of a user's shell: the global bin first on PATH, none of npm's own folders. */
function userEnv(): NodeJS.ProcessEnv {
  const path = (process.env.PATH ?? '')
    .split(':')
    .filter((d) => !d.endsWith('node_modules/.bin'))
    .join(':');
  return { ...tree.env, PATH: `${join(prefix, 'bin')}:${path}`, NO_COLOR: '1' };
}

beforeAll(async () => {
  prefix = await mkdtemp(join(tmpdir(), 'txcript-prefix-'));
  elsewhere = await mkdtemp(join(tmpdir(), 'txcript-elsewhere-'));
  tree = searchTree(await mkdtemp(join(tmpdir(), 'txcript-global-')));
  await saveSession(
    tree,
    claudeCode,
    codingSession(SESSION, {
      start: '2026-09-01T10:00:00Z',
      cwd: '/work/shop',
      prompt: 'why is the global install slow?',
      command: 'npm ls -g',
      output: 'sendbox@0.1.0',
      answer: 'It links the checkout instead of copying it.',
    }),
  );
  await run('npm', ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', root], {
    cwd: elsewhere,
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
}, 120_000);

afterAll(async () => {
  for (const dir of [prefix, elsewhere, tree?.home])
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('a global install', () => {
  it('puts txcript and sendbox on PATH, linked to this checkout', async () => {
    expect(await realpath(join(prefix, 'bin', 'txcript'))).toBe(
      join(root, 'packages/txcript/bin/txcript.mjs'),
    );
    expect(await realpath(join(prefix, 'bin', 'sendbox'))).toBe(join(root, 'packages/box/bin/sendbox.mjs'));
  });

  it('runs txcript from a folder outside the checkout', async () => {
    const manifest = JSON.parse(await readFile(join(root, 'packages/txcript/package.json'), 'utf8')) as {
      version: string;
    };
    const version = await run('txcript', ['--version'], { cwd: elsewhere, env: userEnv() });
    expect(version.stdout).toBe(`${manifest.version}\n`);
    const list = await run('txcript', ['list', '--json', '--from', 'claude_code'], {
      cwd: elsewhere,
      env: userEnv(),
    });
    expect((JSON.parse(list.stdout) as { id: string }[]).map((s) => s.id)).toContain(SESSION);
    const sendbox = await run('sendbox', ['--version'], { cwd: elsewhere, env: userEnv() });
    expect(sendbox.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  }, 60_000);

  it('starts the MCP server for the SDK client by its bare name', async () => {
    const transport = new StdioClientTransport({
      command: 'txcript',
      args: ['mcp'],
      cwd: elsewhere,
      env: userEnv() as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'global-install-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name)).toContain('search_sessions');
      const found = await client.callTool({
        name: 'search_sessions',
        arguments: { query: 'global install' },
      });
      expect(JSON.stringify(found.content)).toContain(SESSION);
    } finally {
      await client.close();
    }
  }, 60_000);
});
