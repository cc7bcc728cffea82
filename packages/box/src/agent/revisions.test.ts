import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { supersedesMarker, withdrawnIds } from '@sendbox/protocol';
import { createAgentHost } from '../host/agent-host.ts';
import type { ModelProvider, ModelStepRequest, ModelStepResult } from '../providers/types.ts';
import { scriptedProvider } from '../providers/scripted.ts';
import { hostFixture, sendText, type HostFixture } from '../testing/host-fixture.ts';

const TXCRIPT = fileURLToPath(new URL('../../../txcript/bin/txcript.mjs', import.meta.url));

let fx: HostFixture | undefined;
afterEach(async () => {
  await fx?.dispose();
  fx = undefined;
});

/** Everything the model read in a request, as one string. */
const seen = (request: ModelStepRequest | undefined) => JSON.stringify(request?.messages ?? []);

/** A model that holds its steps until `release()`, then answers each: one text bubble, then done. */
function heldModel() {
  const requests: ModelStepRequest[] = [];
  const waiting: Array<() => void> = [];
  let released = false;
  const answer = (request: ModelStepRequest): ModelStepResult => {
    const sent = request.messages.at(-1)?.role === 'tool';
    return {
      text: '',
      reasoning: '',
      toolCalls: sent
        ? []
        : [{ id: `c${requests.length}`, name: 'send_message', input: { type: 'text', content: 'done' } }],
      finishReason: sent ? 'stop' : 'tool-calls',
    };
  };
  const provider: ModelProvider = {
    provider: 'test',
    model: 'held',
    step(request) {
      requests.push(request);
      if (released) return Promise.resolve(answer(request));
      return new Promise((resolve) => waiting.push(() => resolve(answer(request))));
    },
  };
  return {
    provider,
    requests,
    release() {
      released = true;
      for (const go of waiting.splice(0)) go();
    },
  };
}

async function failure(promise: Promise<unknown>): Promise<{ status: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    return { status: (error as { status: number }).status, message: (error as Error).message };
  }
  throw new Error('expected the call to be refused');
}

describe('regenerate and edit the last prompt', () => {
  it('regenerates: a new prompt supersedes the last one in the ledger and the JSONL, and the model never reads the old turn', async () => {
    fx = await hostFixture([
      sendText('first answer'),
      {},
      sendText('second answer'),
      {},
      sendText('third'),
      {},
    ]);
    await fx.prompt('What is a quokka?', 'n1');
    const { host, agentId } = fx;
    expect(await host.revisePrompt({ agentId, clientNonce: 'n2', revision: { kind: 'regenerate' } })).toEqual(
      {
        accepted: true,
        duplicate: false,
      },
    );
    await host.idle(agentId);
    const entries = await fx.entries();
    expect(entries.find((e) => e.id === 't1u')).toMatchObject({
      kind: 'message',
      role: 'user',
      content: 'What is a quokka?',
      clientNonce: 'n2',
      supersedes: 't0u',
    });
    // Append-only: the old turn is still there, withdrawn.
    const withdrawn = withdrawnIds(entries);
    expect(entries.filter((e) => e.id.startsWith('t0')).map((e) => withdrawn.has(e.id))).not.toContain(false);
    expect(withdrawn.has('t1u')).toBe(false);
    const records = await fx.records();
    const t1 = records.find((r) => JSON.stringify(r).includes('[t1u]'));
    expect(t1).toEqual({
      role: 'user',
      message: {
        content: [
          { type: 'text', text: '[t1u]\nWhat is a quokka?' },
          { type: 'text', text: supersedesMarker('t0u') },
        ],
      },
    });
    // The regenerated turn's model call: the prompt once, no first answer, no marker.
    const regenerated = seen(fx.model.requests[2]);
    expect(regenerated).not.toContain('first answer');
    expect(regenerated.match(/What is a quokka/g)).toHaveLength(1);
    expect(regenerated).not.toContain('supersedes');

    // txcript's grok_bot codec reads it back: `view` folds the marker as the host's, naming the turn.
    const view = spawnSync(process.execPath, [TXCRIPT, 'view', agentId, '--from', 'grok_bot'], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: fx.dataDir,
        TXCRIPT_GROK_BOT_ROOT: `${fx.dataDir}/agent-transcripts`,
        TXCRIPT_GROK_BOT_AGENTS: `${fx.dataDir}/agents`,
        TXCRIPT_NO_CACHE: '1',
      },
      encoding: 'utf8',
    });
    expect(view.status, view.stderr).toBe(0);
    expect(view.stdout).toContain('(hidden: supersedes t0u) [SAND_HIDDEN_PROMPT][supersedes t0u]');
    expect(view.stdout).toContain('second answer');

    // After a restart the history is rebuilt from the JSONL the same way.
    await host.close();
    const model = scriptedProvider([sendText('after restart'), {}]);
    const again = await createAgentHost({ dataDir: fx.dataDir, provider: model, env: {} });
    try {
      await again.sendPrompt({ agentId, prompt: 'and then?', clientNonce: 'n3' });
      await again.idle(agentId);
      const after = seen(model.requests[0]);
      expect(after).toContain('second answer');
      expect(after).not.toContain('first answer');
    } finally {
      await again.close();
      fx.host = { close: () => Promise.resolve() } as typeof fx.host;
    }
  });

  it('edits the last prompt: the model reads the new words only; an older prompt or an empty one is refused', async () => {
    fx = await hostFixture([sendText('one'), {}, sendText('two'), {}, sendText('edited reply'), {}]);
    await fx.prompt('first question', 'n1');
    await fx.prompt('second questoin', 'n2');
    const { host, agentId } = fx;
    const older = await failure(
      host.revisePrompt({
        agentId,
        clientNonce: 'e1',
        revision: { kind: 'edit', messageId: 't0u', prompt: 'x' },
      }),
    );
    expect(older).toEqual({
      status: 409,
      message: 'only the last prompt can be edited: t0u is not it (t1u is); send a new prompt instead',
    });
    const empty = await failure(
      host.revisePrompt({
        agentId,
        clientNonce: 'e2',
        revision: { kind: 'edit', messageId: 't1u', prompt: '  ' },
      }),
    );
    expect(empty.status).toBe(400);
    await host.revisePrompt({
      agentId,
      clientNonce: 'e3',
      revision: { kind: 'edit', messageId: 't1u', prompt: 'second question' },
    });
    await host.idle(agentId);
    const request = seen(fx.model.requests[4]);
    expect(request).toContain('second question');
    expect(request).not.toContain('questoin');
    expect(request).not.toContain('"two"');
    expect(request).toContain('first question');
    expect((await fx.entries()).find((e) => e.id === 't2u')).toMatchObject({
      content: 'second question',
      supersedes: 't1u',
    });
    // A repeat of the same nonce is the same edit, not a second one.
    expect(
      await host.revisePrompt({ agentId, clientNonce: 'e3', revision: { kind: 'regenerate' } }),
    ).toMatchObject({ duplicate: true });
  });

  it('refuses while a turn runs or before any prompt', async () => {
    const model = heldModel();
    fx = await hostFixture([], { provider: model.provider });
    const { host, agentId } = fx;
    expect(
      await failure(host.revisePrompt({ agentId, clientNonce: 'r0', revision: { kind: 'regenerate' } })),
    ).toEqual({
      status: 409,
      message: 'cannot regenerate the reply: this agent has no prompt of yours yet',
    });
    await host.sendPrompt({ agentId, prompt: 'long job', clientNonce: 'n1' });
    await expect.poll(() => model.requests.length).toBe(1);
    const running = await failure(
      host.revisePrompt({
        agentId,
        clientNonce: 'e1',
        revision: { kind: 'edit', messageId: 't0u', prompt: 'short' },
      }),
    );
    expect(running).toEqual({
      status: 409,
      message:
        'cannot edit a prompt while a turn runs or prompts wait: press Stop or wait for the agent to finish, then try again',
    });
    model.release();
    await host.idle(agentId);
    expect((await fx.entries()).some((e) => 'supersedes' in e)).toBe(false);
  });
});

describe('remove a queued prompt', () => {
  it('takes back a prompt that waits, for good; refuses one that started, and names an unknown one', async () => {
    const model = heldModel();
    fx = await hostFixture([], { provider: model.provider });
    const { host, agentId } = fx;
    await host.sendPrompt({ agentId, prompt: 'running one', clientNonce: 'n1' });
    await expect.poll(() => model.requests.length).toBe(1);
    await host.sendPrompt({ agentId, prompt: 'queued one', clientNonce: 'n2' });
    expect((await host.pendingInputs(agentId)).map((p) => p.nonce)).toEqual(['n2']);

    expect(await failure(host.removeQueuedPrompt({ agentId, nonce: 'n1' }))).toEqual({
      status: 409,
      message: 'that prompt already started, so it cannot be removed: press Stop to end its turn',
    });
    expect(await failure(host.removeQueuedPrompt({ agentId, nonce: 'nope' }))).toEqual({
      status: 404,
      message: 'no prompt with nonce "nope" was sent to this agent',
    });
    expect(await host.removeQueuedPrompt({ agentId, nonce: 'n2' })).toEqual({ removed: true });
    expect(await host.pendingInputs(agentId)).toEqual([]);
    expect(fx.events.filter((e) => e.type === 'inbox').at(-1)).toMatchObject({ pending: [] });
    // Sent again under the same nonce: the removal stands (a nonce is accepted once).
    expect(await host.sendPrompt({ agentId, prompt: 'queued one', clientNonce: 'n2' })).toMatchObject({
      duplicate: true,
    });

    model.release();
    await host.idle(agentId);
    expect(model.requests.length).toBeGreaterThan(0);
    expect(model.requests.map(seen).join('\n')).not.toContain('queued one');
    expect(JSON.stringify(await fx.entries())).not.toContain('queued one');
    // Nor after a restart.
    await host.close();
    const again = await createAgentHost({ dataDir: fx.dataDir, provider: model.provider, env: {} });
    try {
      expect(await again.pendingInputs(agentId)).toEqual([]);
    } finally {
      await again.close();
      fx.host = { close: () => Promise.resolve() } as typeof fx.host;
    }
  });
});

describe('an untitled agent', () => {
  it('is named from its first prompt, with a name-changed event; later prompts keep the name', async () => {
    fx = await hostFixture([sendText('ok'), {}, sendText('ok'), {}]);
    const { host } = fx;
    const agent = await host.createAgent({});
    expect(agent.name).toBe('');
    await host.sendPrompt({
      agentId: agent.id,
      prompt: '  Plan a weekend\n in   Lisbon with two kids  ',
      clientNonce: 'u1',
    });
    await host.idle(agent.id);
    expect((await host.listAgents()).find((a) => a.id === agent.id)?.name).toBe(
      'Plan a weekend in Lisbon with two kids',
    );
    await host.sendPrompt({ agentId: agent.id, prompt: 'Something else', clientNonce: 'u2' });
    await host.idle(agent.id);
    expect((await host.listAgents()).find((a) => a.id === agent.id)?.name).toBe(
      'Plan a weekend in Lisbon with two kids',
    );
    const events = (await host.entriesAfter(agent.id, 0)).filter((e) => e.kind === 'event');
    expect(events).toMatchObject([
      { event: { type: 'name-changed', from: '', to: 'Plan a weekend in Lisbon with two kids' } },
    ]);
  });
});
