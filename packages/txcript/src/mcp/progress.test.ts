/**
 * Progress of a refresh, told to an MCP client that asked for it: the server
 * in process over the SDK's in-memory transport, on a temp tree of Simple
 * sessions whose reads can be held back.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createContext } from '../cli/context.ts';
import type { Harness } from '../harness/types.ts';
import {
  codingSession,
  searchTree,
  writeSimple,
  type SearchTree,
} from '../../test/fixtures/search/generate.ts';
import { PROGRESS_MS, createMcpServer, withProgress } from './server.ts';

const SESSIONS = 4;
let tree: SearchTree;
let stderr: string;
let closeAll: () => Promise<void>;

/** The server over the tree, each Simple read first waiting `delayMs`, and a client connected to it. */
async function connect(delayMs: number): Promise<Client> {
  const harnesses = tree.harnesses.map((harness): Harness => {
    if (harness.id !== 'simple') return harness;
    return {
      ...harness,
      store: (env) => {
        const store = harness.store!(env);
        return {
          ...store,
          load: async (id) => {
            await new Promise((resolve) => setTimeout(resolve, delayMs));
            return store.load(id);
          },
        };
      },
    };
  });
  const ctx = createContext({
    stdout: { write: () => true },
    stderr: { write: (s: string) => (stderr += s) },
    readStdin: () => Promise.resolve(''),
    env: tree.env,
    now: () => new Date(Date.now() + 10_000),
    harnesses,
  });
  const { server, index } = createMcpServer(ctx);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'progress-test', version: '1.0.0' });
  await client.connect(clientSide);
  closeAll = async () => {
    await client.close();
    await server.close();
    await index.stop();
  };
  return client;
}

beforeEach(async () => {
  tree = searchTree(await mkdtemp(join(tmpdir(), 'txcript-mcp-progress-')));
  stderr = '';
  for (let i = 1; i <= SESSIONS; i++) {
    writeSimple(
      tree,
      codingSession(`s${i}`, { start: `2026-09-0${i}T10:00:00Z`, prompt: `task ${i}`, answer: 'quartz' }),
    );
  }
});

afterEach(async () => {
  await closeAll();
  await rm(tree.home, { recursive: true, force: true });
});

describe('progress of a refresh', () => {
  it('is sent to a client that asks, growing to every source read, and the answer follows', async () => {
    const client = await connect(PROGRESS_MS + 50);
    const seen: Progress[] = [];
    const result = await client.callTool(
      { name: 'search_sessions', arguments: { query: 'quartz' } },
      undefined,
      {
        onprogress: (progress) => seen.push(progress),
      },
    );
    expect(result.isError).toBeFalsy();
    expect(seen.map((p) => p.progress)).toEqual([1, 2, 3, 4]);
    expect(seen.every((p) => p.total === SESSIONS)).toBe(true);
    expect(seen[0]?.message).toBe(`indexing sessions 1/${SESSIONS}`);
    expect(stderr).not.toMatch(/error/i);
  });

  it('is sent at most every PROGRESS_MS, the last always', async () => {
    for (let i = SESSIONS + 1; i <= 20; i++) {
      writeSimple(
        tree,
        codingSession(`s${i}`, { start: '2026-09-09T10:00:00Z', prompt: `task ${i}`, answer: 'x' }),
      );
    }
    const client = await connect(0);
    const seen: number[] = [];
    await client.callTool({ name: 'list_sessions', arguments: {} }, undefined, {
      onprogress: (progress) => seen.push(progress.progress),
    });
    expect(seen[0]).toBe(1);
    expect(seen.at(-1)).toBe(20);
    expect(seen.length).toBeLessThan(20); // unless every one of 19 reads of a small file took 250 ms
  });

  it('keeps growing when the call waits for a second refresh, which counts on from the first', async () => {
    let watcher: (done: number, total: number) => void = () => undefined;
    const sent: Array<{ progress: number; total?: number }> = [];
    await withProgress(
      { watch: (w) => ((watcher = w), () => undefined) },
      {
        _meta: { progressToken: 'p' },
        sendNotification: (notification) => {
          sent.push(notification.params as { progress: number; total?: number });
          return Promise.resolve();
        },
      },
      () => {
        for (const [done, total] of [
          [1, 3],
          [2, 3],
          [3, 3],
          [1, 2],
          [2, 2],
        ] as const)
          watcher(done, total);
        return Promise.resolve();
      },
    );
    // Within PROGRESS_MS only the first and each refresh's last go out.
    expect(sent.map((p) => [p.progress, p.total])).toEqual([
      [1, 3],
      [3, 3],
      [5, 5],
    ]);
  });

  it('is not sent to a client that does not ask', async () => {
    const client = await connect(0);
    const notes: unknown[] = [];
    client.fallbackNotificationHandler = (notification) => Promise.resolve(void notes.push(notification));
    client.onerror = (error) => notes.push(error);
    await client.callTool({ name: 'search_sessions', arguments: { query: 'quartz' } });
    expect(notes).toEqual([]);
  });
});
