import { execFileSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import type { ModelProvider, ModelStepRequest, ModelStepResult } from '../providers/types.ts';
import { hostFixture, type HostFixture } from '../testing/host-fixture.ts';
import { grokBot } from '@sendbox/txcript';
import { TURN_TEXTS } from './agent-session.ts';

let fx: HostFixture | undefined;
afterEach(async () => {
  await fx?.dispose();
  fx = undefined;
});

/** A model driven by the test: each step waits for `next` to be called, or rejects on abort. */
function heldModel() {
  const requests: ModelStepRequest[] = [];
  let answer: ((step: ModelStepResult) => void) | null = null;
  const provider: ModelProvider = {
    provider: 'test',
    model: 'held',
    step(request) {
      requests.push(request);
      return new Promise((resolve, reject) => {
        answer = resolve;
        request.abortSignal?.addEventListener('abort', () => reject(new Error('aborted by the signal')), {
          once: true,
        });
      });
    },
  };
  return {
    provider,
    requests,
    async next(step: Partial<ModelStepResult>) {
      await expect.poll(() => answer !== null).toBe(true);
      const resolve = answer!;
      answer = null;
      resolve({ text: '', reasoning: '', toolCalls: [], finishReason: 'stop', ...step });
    },
  };
}

const requestText = (request: ModelStepRequest | undefined) => JSON.stringify(request?.messages ?? []);

describe('cancelTurn', () => {
  it('aborts the model call, ends the turn with a notice, and tells the model next time', async () => {
    const model = heldModel();
    fx = await hostFixture([], { provider: model.provider });
    await fx.host.sendPrompt({ agentId: fx.agentId, prompt: 'think long', clientNonce: 'n1' });
    await expect.poll(() => model.requests.length).toBe(1);
    expect(model.requests[0]?.abortSignal?.aborted).toBe(false);
    expect(await fx.host.cancelTurn(fx.agentId)).toEqual({ cancelled: true });
    await fx.host.idle(fx.agentId);
    expect(model.requests[0]?.abortSignal?.aborted).toBe(true);
    const entries = await fx.entries();
    const notice = entries.find((e) => e.kind === 'notice');
    expect(notice).toMatchObject({ text: TURN_TEXTS.stoppedNotice, reason: 'stopped' });
    expect(entries.at(-1)?.kind).toBe('turn-ended');
    expect(await fx.host.cancelTurn(fx.agentId)).toEqual({ cancelled: false });

    await fx.host.sendPrompt({ agentId: fx.agentId, prompt: 'next', clientNonce: 'n2' });
    await expect.poll(() => model.requests.length).toBe(2);
    expect(requestText(model.requests[1])).toContain('The user pressed Stop');
    await fx.host.cancelTurn(fx.agentId);
    await fx.host.idle(fx.agentId);
  });

  it('kills the running tool process group and gives the model an interrupted result', async () => {
    const model = heldModel();
    fx = await hostFixture([], { provider: model.provider });
    await fx.host.sendPrompt({ agentId: fx.agentId, prompt: 'run it', clientNonce: 'n1' });
    const marker = `sleep 47.${process.pid}`;
    await model.next({
      toolCalls: [
        { id: 'c1', name: 'shell', input: { command: `${marker} & ${marker}; echo never` } },
        { id: 'c2', name: 'shell', input: { command: 'echo second' } },
      ],
      finishReason: 'tool-calls',
    });
    const running = () => {
      try {
        return execFileSync('pgrep', ['-f', marker], { encoding: 'utf8' }).trim() !== '';
      } catch {
        return false;
      }
    };
    await expect.poll(running, { timeout: 10_000 }).toBe(true);
    await fx.host.cancelTurn(fx.agentId);
    await fx.host.idle(fx.agentId);
    await expect.poll(running, { timeout: 5_000 }).toBe(false);

    await fx.host.sendPrompt({ agentId: fx.agentId, prompt: 'after', clientNonce: 'n2' });
    await expect.poll(() => model.requests.length).toBe(2);
    const seen = requestText(model.requests[1]);
    // Both calls have a result: the killed one and the one never started read as interrupted.
    expect(seen.split(TURN_TEXTS.interruptedResult).length - 1).toBe(2);
    await fx.host.cancelTurn(fx.agentId);
    await fx.host.idle(fx.agentId);
  });

  it('keeps what was streamed: the partial send delivered marked stopped, and the model told what the user saw', async () => {
    const model = heldModel();
    fx = await hostFixture([], { provider: model.provider });
    await fx.host.sendPrompt({ agentId: fx.agentId, prompt: 'write a poem', clientNonce: 'n1' });
    await expect.poll(() => model.requests.length).toBe(1);
    // The model is writing a send: the user has seen this much of it.
    model.requests[0]!.onSendDraft?.({ toolCallId: 'call_poem', text: 'Roses are red, violets' });
    await fx.host.cancelTurn(fx.agentId);
    await fx.host.idle(fx.agentId);

    const entries = await fx.entries();
    const sends = entries.filter((e) => e.kind === 'send-message');
    expect(sends).toHaveLength(1);
    expect(sends[0]).toMatchObject({
      kind: 'send-message',
      stopped: true,
      message: { type: 'text', content: 'Roses are red, violets' },
    });
    expect(entries.map((e) => e.kind).slice(-3)).toEqual(['send-message', 'notice', 'turn-ended']);

    // Grok Bot's shapes on disk, read back by txcript's grok_bot codec: the send and its result.
    const parsed = grokBot.text.parse(await fx.jsonlText(), 'agent.jsonl');
    const transcript = grokBot.codec.toCommon(parsed.records, { sessionId: fx.agentId });
    const blocks = transcript.messages.flatMap((m) => m.content);
    const use = blocks.find((b) => b.type === 'tool_use');
    expect(JSON.stringify(use)).toContain('Roses are red, violets');
    expect(blocks.some((b) => b.type === 'tool_result')).toBe(true);

    // The next turn's model reads what the user saw.
    await fx.host.sendPrompt({ agentId: fx.agentId, prompt: 'go on', clientNonce: 'n2' });
    await expect.poll(() => model.requests.length).toBe(2);
    const seen = requestText(model.requests[1]);
    expect(seen).toContain('they saw it cut off, exactly as follows: \\"\\"\\"Roses are red, violets');
    expect(seen).toContain('call_poem');
    await fx.host.cancelTurn(fx.agentId);
    await fx.host.idle(fx.agentId);
  });

  it('delivers nothing for a stop before any text was streamed', async () => {
    const model = heldModel();
    fx = await hostFixture([], { provider: model.provider });
    await fx.host.sendPrompt({ agentId: fx.agentId, prompt: 'hm', clientNonce: 'n1' });
    await expect.poll(() => model.requests.length).toBe(1);
    model.requests[0]!.onSendDraft?.({ toolCallId: 'call_empty', text: '' });
    await fx.host.cancelTurn(fx.agentId);
    await fx.host.idle(fx.agentId);
    expect((await fx.entries()).filter((e) => e.kind === 'send-message')).toEqual([]);
  });
});
