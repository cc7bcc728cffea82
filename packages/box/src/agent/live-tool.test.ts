import { afterEach, describe, expect, it } from 'vitest';
import { hostFixture, type HostFixture } from '../testing/host-fixture.ts';
import type { ToolEvent } from './live-tool.ts';

let fx: HostFixture | undefined;
afterEach(async () => {
  await fx?.dispose();
  fx = undefined;
});

const toolEvents = (f: HostFixture) => f.events.filter((e): e is ToolEvent => e.type === 'tool');

describe('a running tool, live', () => {
  it('is told while it runs: its line, when it started, and the tail of its output; then that it ended', async () => {
    fx = await hostFixture([
      {
        toolCalls: [
          {
            id: 'c1',
            name: 'shell',
            input: {
              command: 'for i in 1 2 3; do echo line$i; sleep 0.4; done',
              description: 'Count to three',
            },
          },
        ],
      },
      {},
    ]);
    await fx.prompt('count');
    const events = toolEvents(fx);
    expect(events[0]).toMatchObject({
      toolCallId: 'c1',
      name: 'shell',
      title: 'Count to three',
      running: true,
      tail: '',
    });
    // A tail while it still ran, with the first line and not yet the last.
    const midway = events.find((e) => e.running && e.tail.includes('line1') && !e.tail.includes('line3'));
    expect(midway).toBeDefined();
    expect(events.at(-1)).toMatchObject({ running: false, tail: 'line1\nline2\nline3\n' });
    const entry = (await fx.entries()).find((e) => e.kind === 'tool-call');
    expect(entry).toMatchObject({ status: 'success' });
    expect(entry).not.toHaveProperty('stopped');
  });

  it('marks a tool Stop ended as stopped, not failed', async () => {
    fx = await hostFixture([
      { toolCalls: [{ id: 'c1', name: 'shell', input: { command: 'echo started; sleep 30' } }] },
    ]);
    await fx.host.sendPrompt({ agentId: fx.agentId, prompt: 'wait', clientNonce: 'n1' });
    await expect
      .poll(() => toolEvents(fx!).some((e) => e.tail.includes('started')), { timeout: 10_000 })
      .toBe(true);
    await fx.host.cancelTurn(fx.agentId);
    await fx.host.idle(fx.agentId);
    const entry = (await fx.entries()).find((e) => e.kind === 'tool-call');
    expect(entry).toMatchObject({ stopped: true });
    expect(toolEvents(fx).at(-1)).toMatchObject({ running: false });
  });
});
