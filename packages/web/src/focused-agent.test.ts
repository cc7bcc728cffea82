import { describe, expect, it } from 'vitest';
import { createApiClient } from './api/client.ts';
import { agentIdFromHash, prefetchLedger } from './focused-agent.ts';

describe('agentIdFromHash', () => {
  it('reads #agent=<id>, decoding it, and nothing else', () => {
    expect(agentIdFromHash('#agent=a1')).toBe('a1');
    expect(agentIdFromHash('#agent=a%2Db')).toBe('a-b');
    expect(agentIdFromHash('#agent=%E0%A4%A')).toBeNull();
    expect(agentIdFromHash('#other=a1')).toBeNull();
    expect(agentIdFromHash('')).toBeNull();
  });
});

describe('prefetchLedger', () => {
  it('asks openAgent at once and hands the answer out once, to that agent only', async () => {
    const bodies: string[] = [];
    const client = createApiClient({
      baseUrl: 'http://127.0.0.1:9',
      fetch: (_url, init) => {
        bodies.push(typeof init?.body === 'string' ? init.body : '(not a string)');
        return Promise.resolve(Response.json({ entries: [{ id: 'n1', seq: 1, kind: 'notice', text: 'x' }] }));
      },
    });
    const prefetch = prefetchLedger(client, 'a1');
    expect(bodies).toEqual(['{"id":"a1"}']);
    expect(prefetch.take('a2')).toBeNull();
    const taken = prefetch.take('a1');
    expect(taken).not.toBeNull();
    expect(await taken).toEqual({
      entries: [{ id: 'n1', seq: 1, kind: 'notice', text: 'x' }],
      todos: [],
      secretRequestsNotHeld: [],
    });
    expect(prefetch.take('a1')).toBeNull();
  });

  it('swallows the failure of a prefetch nobody takes (an agent deleted since)', async () => {
    const client = createApiClient({
      baseUrl: 'http://127.0.0.1:9',
      fetch: () => Promise.resolve(Response.json({ error: 'unknown agent' }, { status: 404 })),
    });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      prefetchLedger(client, 'gone');
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
