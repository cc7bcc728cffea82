/**
 * `txcript mcp` as an agent meets it: the real process over stdio, driven by
 * the MCP SDK's own client, against real Claude Code, Codex and Grok Bot
 * stores in a temp HOME (its own cache folder).
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeCode } from '../harness/claude-code/index.ts';
import { codex } from '../harness/codex/index.ts';
import { grokBot } from '../harness/grok-bot/index.ts';
import {
  type SearchTree,
  codingSession,
  saveSession,
  searchTree,
} from '../../test/fixtures/search/generate.ts';
import { indexFile } from '../search/index-db.ts';
import { PAGE_CHARS, sessionUri } from './server.ts';

const bin = fileURLToPath(new URL('../../bin/txcript.mjs', import.meta.url));
const CLAUDE = '33333333-3333-4333-8333-333333333333';
const CODEX = '44444444-4444-4444-8444-444444444444';
let tree: SearchTree;
let client: Client;
let stderr = '';

beforeAll(async () => {
  tree = searchTree(await mkdtemp(join(tmpdir(), 'txcript-mcp-')));
  await saveSession(
    tree,
    claudeCode,
    codingSession(CLAUDE, {
      start: '2026-09-01T10:00:00Z',
      cwd: '/work/shop',
      prompt: 'why does the invoice total drift?',
      command: 'grep -rn rounding src/',
      output: 'src/invoice.ts:12: Math.round(total * 100) / 100',
      answer: 'The invoice rounds each line before summing.',
    }),
  );
  const long = codingSession(CODEX, {
    start: '2026-09-02T10:00:00Z',
    cwd: '/work/infra',
    prompt: 'summarise the deploy log',
    command: 'cat deploy.log',
    output: Array.from({ length: 800 }, (_, i) => `line ${i} of the deploy log`).join('\n'),
    answer: Array.from({ length: 1500 }, (_, i) => `paragraph ${i}: the deploy went fine here.`).join('\n'),
  });
  await saveSession(tree, codex, long);
  await saveSession(
    tree,
    grokBot,
    codingSession('agent-helper', {
      start: '2026-09-03T10:00:00Z',
      prompt: 'plan the invoice redesign',
      answer: 'ok',
    }),
  );
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, 'mcp'],
    env: { PATH: process.env.PATH ?? '', ...tree.env },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  client = new Client({ name: 'txcript-test', version: '1.0.0' });
  await client.connect(transport);
}, 120_000);

afterAll(async () => {
  await client?.close();
  await rm(tree.home, { recursive: true, force: true });
});

function textOf(result: unknown): string {
  const r = result as CallToolResult;
  return r.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
}

/** Sessions in the server's index file, read beside it (0 while there is no file yet). */
function indexedSessions(): number {
  const file = indexFile(tree.env);
  if (!existsSync(file)) return 0;
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM sessions').get() as { n: number }).n;
  } catch {
    return 0; // the schema is still being made
  } finally {
    db.close();
  }
}

describe('txcript mcp', () => {
  it('builds its index at start, before any call', async () => {
    await expect.poll(indexedSessions, { timeout: 20_000 }).toBe(3);
  });

  it('offers the three read-only tools', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['list_sessions', 'read_session', 'search_sessions']);
    for (const t of tools) expect(t.annotations?.readOnlyHint).toBe(true);
  });

  it('lists sessions, newest first, filtered by harness and folder', async () => {
    const all = textOf(await client.callTool({ name: 'list_sessions', arguments: {} }));
    const lines = all.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^agent-helper {2}grok_bot/);
    expect(lines[2]).toContain(`${CLAUDE}  claude_code  4 messages`);
    const shop = textOf(await client.callTool({ name: 'list_sessions', arguments: { cwd: '/work/shop' } }));
    expect(shop.split('\n').map((l) => l.split('  ')[0])).toEqual([CLAUDE]);
    const codexOnly = textOf(
      await client.callTool({ name: 'list_sessions', arguments: { from: 'codex', limit: 5 } }),
    );
    expect(codexOnly).toContain(CODEX);
    expect(codexOnly).not.toContain(CLAUDE);
  });

  it('searches, giving references read_session accepts', async () => {
    const found = textOf(
      await client.callTool({ name: 'search_sessions', arguments: { query: 'invoice -redesign' } }),
    );
    expect(found).toContain(`${CLAUDE}#1  claude_code  user text`);
    expect(found).toContain('[invoice]');
    expect(found).not.toContain('agent-helper');
    const ref = `${CLAUDE}#2-3`;
    expect(
      textOf(await client.callTool({ name: 'search_sessions', arguments: { query: 'Math.round' } })),
    ).toContain(ref);
    const read = textOf(await client.callTool({ name: 'read_session', arguments: { id: ref } }));
    expect(read).toContain('grep -rn rounding');
    expect(read).toContain('#3');
    expect(read).not.toContain('── #1 ');
  });

  it('reads a long session in pages', async () => {
    const page = async (n: number) =>
      textOf(await client.callTool({ name: 'read_session', arguments: { id: CODEX, page: n } }));
    const first = await page(1);
    expect(first).toContain('summarise the deploy log');
    expect(first.length).toBeLessThan(PAGE_CHARS + 100);
    const footer = /\[page 1 of (\d+); call read_session again with page: 2\]$/.exec(first);
    expect(footer).not.toBeNull();
    const pages = Number(footer![1]);
    expect(pages).toBeGreaterThan(2);
    const last = await page(pages);
    expect(last).toMatch(
      new RegExp(`paragraph 1499: the deploy went fine here\\.\\n+\\[page ${pages} of ${pages}\\]$`),
    );
    const past = (await client.callTool({
      name: 'read_session',
      arguments: { id: CODEX, page: pages + 1 },
    })) as CallToolResult;
    expect(past.isError).toBe(true);
    expect(textOf(past)).toContain(`page ${pages + 1} is past the end: the session has ${pages} pages`);
  });

  it('answers bad input with a tool error and keeps serving', async () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['read_session', { id: 'no-such-session' }, /no session matches "no-such-session"/],
      ['read_session', { id: CLAUDE, range: '9-3' }, /range #9-3 runs backwards/],
      ['read_session', { id: CLAUDE, range: 'abc' }, /"#abc" is not a message range — write #7/],
      ['search_sessions', { query: '"unclosed' }, /unclosed "/],
      ['search_sessions', { query: 42 }, /Input validation error/],
      ['list_sessions', { from: 'nowhere' }, /unknown harness "nowhere"/],
      ['list_sessions', { since: 'yesterday-ish' }, /is not a time/],
    ];
    for (const [name, args, message] of cases) {
      const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
      expect(r.isError, name).toBe(true);
      expect(textOf(r)).toMatch(message);
    }
    const still = await client.callTool({ name: 'list_sessions', arguments: { limit: 1 } });
    expect(textOf(still)).toMatch(/^agent-helper/);
  });

  it('serves every session as a resource', async () => {
    const { resources } = await client.listResources();
    const uri = sessionUri('claude_code', CLAUDE);
    expect(resources.map((r) => r.uri)).toContain(uri);
    const { contents } = await client.readResource({ uri });
    expect((contents[0] as { text: string }).text).toContain('why does the invoice total drift?');
    expect(stderr).toBe('');
  });
});
