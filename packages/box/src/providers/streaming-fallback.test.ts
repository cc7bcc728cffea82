import { afterEach, describe, expect, it } from 'vitest';
import {
  startOpenAiTestServer,
  type OpenAiTestServer,
  type StreamSupport,
} from '../testing/openai-server.ts';
import { openAiCompatibleProvider } from './index.ts';
import type { ModelStepRequest } from './types.ts';

const drafts: string[] = [];
const request: ModelStepRequest = {
  system: 'You are a test agent.',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
  tools: [],
  // A turn follows send drafts, so a streaming provider streams.
  onSendDraft: ({ text }) => drafts.push(text),
};

let server: OpenAiTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  drafts.length = 0;
});

async function providerOn(streams: StreamSupport, options: { timeoutMs?: number } = {}) {
  server = await startOpenAiTestServer({ streams });
  const logged: string[] = [];
  const provider = openAiCompatibleProvider({
    baseURL: server.baseURL,
    model: 'local-model',
    timeoutMs: options.timeoutMs ?? 5_000,
    maxRetries: 0,
    logFailure: (line) => logged.push(line),
  });
  return { provider, logged, server };
}

describe('an endpoint that cannot stream', () => {
  for (const [kind, said] of [
    ['json', /answered with application\/json, not an event stream/],
    ['refuse', /HTTP 400 naming stream/],
  ] as const) {
    it(`is found on the first failure (${kind}), answered without streaming, said once, and remembered`, async () => {
      const { provider, logged, server } = await providerOn(kind);
      // A JSON endpoint answers the stream request in full; that answer is not read, and asked again.
      if (kind === 'json') server.reply({ kind: 'message', content: 'unread' });
      server.reply({ kind: 'message', content: 'first' }, { kind: 'message', content: 'second' });
      expect(provider.streams()).toBe(true);
      const first = await provider.step(request);
      expect(first.text).toBe('first');
      expect(provider.streams()).toBe(false);
      expect(logged).toHaveLength(1);
      expect(logged[0]).toMatch(said);
      expect(logged[0]).toMatch(/does not stream.*calling it without streaming from now on/);
      const second = await provider.step(request);
      expect(second.text).toBe('second');
      // One stream request only: the first; every call after it asks for a whole answer.
      const streamed = server.requests.map((r) => r.body.stream === true);
      expect(streamed).toEqual([true, false, false]);
      expect(logged).toHaveLength(1);
    });
  }

  it('streams on an endpoint that does, with no line in the terminal', async () => {
    const { provider, logged, server } = await providerOn('stream');
    server.reply({ kind: 'message', content: 'hello there' });
    expect((await provider.step(request)).text).toBe('hello there');
    expect(provider.streams()).toBe(true);
    expect(logged).toEqual([]);
    expect(server.requests[0]?.body.stream).toBe(true);
  });

  it('does not take a 400 about something else for a streaming problem', async () => {
    const { provider, logged, server } = await providerOn('stream');
    server.reply({ kind: 'status', status: 400, body: { error: { message: 'messages: too long' } } });
    await expect(provider.step(request)).rejects.toThrow(/messages: too long/);
    expect(provider.streams()).toBe(true);
    expect(server.requests).toHaveLength(1);
    expect(logged).toEqual([expect.stringMatching(/^model call failed:/)]);
  });
});

describe('the idle timeout', () => {
  it('never cuts a reply that keeps streaming past it', async () => {
    const { provider, server } = await providerOn('stream', { timeoutMs: 400 });
    // 30 words, 60 ms apart: about 1.8 s in all, more than four times the idle timeout.
    const words = Array.from({ length: 30 }, (_, i) => `w${i}`).join(' ');
    server.reply({ kind: 'message', content: words, delayMs: 60 });
    const step = await provider.step(request);
    expect(step.text).toBe(words);
  });

  it('cuts a stream that goes quiet, saying it was the idle timeout', async () => {
    const { provider, logged, server } = await providerOn('stream', { timeoutMs: 300 });
    // Deltas 900 ms apart: the first pause is three idle timeouts.
    server.reply({ kind: 'message', content: 'one two three', delayMs: 900 });
    await expect(provider.step(request)).rejects.toThrow(
      /nothing from the model for 300 ms, the idle timeout/,
    );
    expect(logged[0]).toMatch(/idle timeout \(SENDBOX_MODEL_TIMEOUT_MS\)/);
  });
});
