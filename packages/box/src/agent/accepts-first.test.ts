import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { createAgentHost } from '../host/agent-host.ts';
import type { ModelProvider } from '../providers/types.ts';
import { AcceptsFirst } from './accepts-first.ts';

/** An accept the test finishes by hand. */
function heldAccept(gate: AcceptsFirst): { finish: () => void; done: Promise<string> } {
  let finish = (): void => undefined;
  const done = gate.accepting(
    () =>
      new Promise<string>((resolve) => {
        finish = () => resolve('accepted');
      }),
  );
  return { finish: () => finish(), done };
}

it('lets a turn start at once when nothing is being accepted', () => {
  expect(new AcceptsFirst().quiet()).toBeNull();
});

it('holds a turn while inputs are being accepted, and lets it go once none is', async () => {
  const gate = new AcceptsFirst(60_000);
  const first = heldAccept(gate);
  const second = heldAccept(gate);
  const order: string[] = [];
  const turn = gate.quiet()!.then(() => order.push('turn'));
  first.finish();
  await first.done;
  await new Promise((resolve) => setImmediate(resolve));
  order.push('first accepted');
  second.finish();
  expect(await second.done).toBe('accepted');
  order.push('second accepted');
  await turn;
  expect(order).toEqual(['first accepted', 'second accepted', 'turn']);
  expect(gate.underWay).toBe(0);
});

it('waits for the requests read meanwhile: an accept that starts before the next check holds the turn', async () => {
  const gate = new AcceptsFirst(60_000);
  const first = heldAccept(gate);
  let started = false;
  const turn = gate.quiet()!.then(() => (started = true));
  first.finish();
  await first.done;
  // The next request of the burst, read before the check runs.
  const next = heldAccept(gate);
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  expect(started).toBe(false);
  next.finish();
  await next.done;
  await turn;
  expect(started).toBe(true);
});

it('holds a turn no longer than its bound while accepts keep coming', async () => {
  const gate = new AcceptsFirst(30);
  const endless = heldAccept(gate);
  await gate.quiet();
  expect(gate.underWay).toBe(1);
  endless.finish();
  await endless.done;
});

it('counts a failed accept out too', async () => {
  const gate = new AcceptsFirst(60_000);
  await expect(gate.accepting(() => Promise.reject(new Error('disk full')))).rejects.toThrow('disk full');
  expect(gate.underWay).toBe(0);
  expect(gate.quiet()).toBeNull();
});

it("a host starts an agent's turn only once the inputs being accepted meanwhile are", async () => {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'sendbox-accepts-first-'));
  const gate = new AcceptsFirst(60_000);
  let steps = 0;
  const model: ModelProvider = {
    provider: 'scripted',
    model: 'm',
    step: () => {
      steps += 1;
      return Promise.resolve({ text: '', reasoning: '', toolCalls: [], finishReason: 'stop' });
    },
  };
  const host = await createAgentHost({ dataDir, provider: model, env: {}, acceptsFirst: gate });
  try {
    const agent = await host.createAgent({ name: 'Held' });
    // Another agent's input, still being committed.
    const other = heldAccept(gate);
    await host.sendPrompt({ agentId: agent.id, prompt: 'hello', clientNonce: 'n1' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(steps).toBe(0);
    other.finish();
    await other.done;
    await host.idle(agent.id);
    expect(steps).toBeGreaterThan(0);
  } finally {
    await host.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});
