/** The seams capabilities plug into (docs/runtime.md, "Where a capability plugs in"), through the real host. */
import { access } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hostFixture, type HostFixture } from '../testing/host-fixture.ts';
import { errorOutcome } from '../tools/types.ts';
import type { GatedCall, ToolGate } from './tool-dispatch.ts';
import type { AgentExtension } from './extension.ts';
import { stepBudget } from './turn.ts';
import { hiddenPrompt } from '@sendbox/protocol';

let fixture: HostFixture | undefined;
afterEach(async () => {
  await fixture?.dispose();
  fixture = undefined;
});

const send = { id: 's1', name: 'send_message', input: { type: 'text', content: 'done' } };

describe('a tool gate', () => {
  it('sees each checked call before it runs, and its answer replaces the run', async () => {
    const seen: GatedCall[] = [];
    const gate: ToolGate = {
      name: 'test approvals',
      beforeRun: (call) => {
        seen.push(call);
        return Promise.resolve(
          call.tool.name === 'shell' ? errorOutcome('The user declined this shell call.') : null,
        );
      },
    };
    fixture = await hostFixture(
      [
        { toolCalls: [{ id: 'c1', name: 'shell', input: { command: 'touch made-by-shell' } }] },
        { toolCalls: [{ id: 'c2', name: 'write', input: { path: 'made-by-write', content: 'x' } }] },
        { toolCalls: [{ id: 'c3', name: 'shell', input: { command: 42 } }] },
        { toolCalls: [send] },
        {},
      ],
      { toolGates: [gate] },
    );
    await fixture.prompt('go');
    // The bad input never reached the gate: the input check comes first.
    expect(seen.map((call) => [call.toolCallId, call.tool.name, call.agentId])).toEqual([
      ['c1', 'shell', fixture.agentId],
      ['c2', 'write', fixture.agentId],
    ]);
    await expect(access(path.join(fixture.sandbox, 'made-by-shell'))).rejects.toThrow();
    await access(path.join(fixture.sandbox, 'made-by-write'));
    // The call is recorded, then the gate's answer as its result; the model reads it.
    const records = JSON.stringify(await fixture.records());
    expect(records).toContain('"touch made-by-shell"');
    expect(records).toContain('The user declined this shell call.');
    const toolMessages = JSON.stringify(fixture.model.requests[1]!.messages);
    expect(toolMessages).toContain('The user declined this shell call.');
    const calls = (await fixture.entries()).filter((entry) => entry.kind === 'tool-call');
    expect(calls.map((entry) => (entry as { status?: string }).status)).toEqual([
      'error',
      'success',
      'error',
    ]);
  });
});

describe('a context layer', () => {
  it('adds to every model call’s view and nothing to the transcript', async () => {
    const agents: string[] = [];
    fixture = await hostFixture([{ toolCalls: [send] }, {}], {
      contextLayers: ({ id }) => {
        agents.push(id);
        return [{ name: 'memory', system: () => 'Remembered: the user likes tea.' }];
      },
    });
    await fixture.prompt('hello');
    expect(agents).toEqual([fixture.agentId]);
    for (const request of fixture.model.requests) {
      expect(request.system).toMatch(
        /^You are Test agent[\s\S]*\n\nRemembered: the user likes tea\.(\n\n|$)/,
      );
    }
    expect(await fixture.jsonlText()).not.toContain('likes tea');
  });
});

describe('the per-agent lifecycle', () => {
  it('tells its listeners of a cancelled turn, a deleted agent and the host closing', async () => {
    const heard: string[] = [];
    let release: () => void = () => undefined;
    const stalled = new Promise<void>((resolve) => (release = resolve));
    fixture = await hostFixture([], {
      provider: {
        provider: 'test',
        model: 'held',
        // The turn's model call waits until it is aborted, so the turn is running when it is cancelled.
        step: (request) =>
          new Promise((_resolve, reject) => {
            request.abortSignal?.addEventListener('abort', () => reject(new Error('aborted')), {
              once: true,
            });
            release();
          }),
      },
    });
    const { host, agentId } = fixture;
    host.lifecycle.add({
      turnCancelled: (id) => void heard.push(`cancelled ${id}`),
      agentDeleted: async (id, paths) => {
        await expect(access(paths.agentDir)).rejects.toThrow(); // after its files are gone
        heard.push(`deleted ${id}`);
      },
      hostClosed: () => void heard.push('closed'),
    });
    await host.sendPrompt({ agentId, prompt: 'wait', clientNonce: 'w1' });
    await stalled;
    expect(await host.cancelTurn(agentId)).toEqual({ cancelled: true });
    await host.idle(agentId);
    expect(await host.cancelTurn(agentId)).toEqual({ cancelled: false }); // nothing runs: nothing told
    await host.deleteAgent(agentId);
    await host.close();
    expect(heard).toEqual([`cancelled ${agentId}`, `deleted ${agentId}`, 'closed']);
  });
});

describe('an agent extension', () => {
  it('writes its note once when the agent opens, gives each call its services, and budgets each turn', async () => {
    const services: Array<{ turn: number; toolCallId: string }> = [];
    let opened = 0;
    const extension = (): AgentExtension => ({
      opened: () => Promise.resolve(opened++ === 0 ? hiddenPrompt('[event]\nnoted on open') : null),
      toolServices: (call) => {
        services.push(call);
        return {};
      },
      turnBudget: () => stepBudget(2),
    });
    fixture = await hostFixture(
      [
        { toolCalls: [{ id: 'c1', name: 'write', input: { path: 'a', content: 'x' } }] },
        { toolCalls: [{ id: 'c2', name: 'write', input: { path: 'b', content: 'x' } }] },
        { toolCalls: [send] },
      ],
      { extensions: () => [extension()] },
    );
    await fixture.prompt('go');
    // The note is in the JSONL before the first turn, and the model read it.
    const records = await fixture.records();
    expect(JSON.stringify(records[0])).toContain('noted on open');
    expect(JSON.stringify(fixture.model.requests[0]!.messages)).toContain('noted on open');
    expect(services).toEqual([
      { turn: 0, toolCallId: 'c1' },
      { turn: 0, toolCallId: 'c2' },
    ]);
    // Two steps of budget: the third (the send) never ran.
    const entries = await fixture.entries();
    expect(entries.filter((entry) => entry.kind === 'notice').map((entry) => entry.reason)).toEqual([
      'turn-budget',
    ]);
    expect(fixture.model.requests).toHaveLength(2);
  });

  it('hears its session close, once', async () => {
    let closed = 0;
    fixture = await hostFixture([{ toolCalls: [send] }, {}], {
      extensions: () => [{ closed: () => void closed++ }],
    });
    await fixture.prompt('go');
    expect(closed).toBe(0);
    await fixture.host.close();
    expect(closed).toBe(1);
  });
});
