/** The box's own retries of a model call, against a loopback OpenAI-compatible server. */
import { APICallError } from 'ai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openAiCompatibleProvider } from './index.ts';
import { type ModelRetry, retryDelayMs, withRetries } from './retries.ts';
import { startOpenAiTestServer, type OpenAiTestServer } from '../testing/openai-server.ts';

const apiError = (statusCode: number, headers: Record<string, string> = {}) =>
  new APICallError({
    message: `HTTP ${statusCode}`,
    url: 'http://127.0.0.1/v1/chat/completions',
    requestBodyValues: {},
    statusCode,
    responseHeaders: headers,
    isRetryable: statusCode === 429 || statusCode >= 500,
  });

describe('retryDelayMs', () => {
  it('waits 2 s, then doubles', () => {
    expect([1, 2, 3].map((n) => retryDelayMs(apiError(503), n))).toEqual([2_000, 4_000, 8_000]);
  });
  it("follows the provider's Retry-After up to a minute, and falls back to the schedule past it", () => {
    expect(retryDelayMs(apiError(429, { 'retry-after': '5' }), 1)).toBe(5_000);
    expect(retryDelayMs(apiError(429, { 'retry-after-ms': '1500' }), 2)).toBe(1_500);
    expect(retryDelayMs(apiError(429, { 'retry-after': '3600' }), 2)).toBe(4_000);
  });
});

describe('withRetries', () => {
  it('tells each wait before it starts, and null once a retried call answers', async () => {
    const told: Array<ModelRetry | null> = [];
    const failures = [apiError(429, { 'retry-after-ms': '10' }), apiError(503, { 'retry-after-ms': '20' })];
    const result = await withRetries(
      () => {
        const failure = failures.shift();
        return failure ? Promise.reject(failure) : Promise.resolve('answer');
      },
      { maxRetries: 2, onRetry: (retry) => told.push(retry) },
    );
    expect(result).toBe('answer');
    expect(told).toEqual([
      { attempt: 2, attempts: 3, delayMs: 10, reason: 'HTTP 429' },
      { attempt: 3, attempts: 3, delayMs: 20, reason: 'HTTP 503' },
      null,
    ]);
  });

  it('never retries a failure a later attempt would meet again (a 400), nor past the retries', async () => {
    let calls = 0;
    await expect(
      withRetries(() => (calls++, Promise.reject(apiError(400))), { maxRetries: 2 }),
    ).rejects.toThrow('HTTP 400');
    expect(calls).toBe(1);
    calls = 0;
    const told: Array<ModelRetry | null> = [];
    await expect(
      withRetries(() => (calls++, Promise.reject(apiError(503, { 'retry-after-ms': '1' }))), {
        maxRetries: 1,
        onRetry: (retry) => told.push(retry),
      }),
    ).rejects.toThrow('HTTP 503');
    expect(calls).toBe(2);
    expect(told.at(-1)).toBeNull();
  });

  it('ends a wait at once when the signal aborts', async () => {
    const abort = new AbortController();
    const started = Date.now();
    const run = withRetries(() => Promise.reject(apiError(503)), {
      maxRetries: 2,
      signal: abort.signal,
      onRetry: () => setTimeout(() => abort.abort(new Error('stopped')), 10),
    });
    await expect(run).rejects.toThrow('stopped');
    expect(Date.now() - started).toBeLessThan(1_900);
  });
});

describe('an OpenAI-compatible provider that is refused twice', () => {
  let server: OpenAiTestServer;
  beforeEach(async () => {
    server = await startOpenAiTestServer();
  });
  afterEach(() => server.close());

  for (const stream of [false, true]) {
    it(`retries on the schedule, telling each wait, then answers (${stream ? 'streaming' : 'whole'})`, async () => {
      server.reply(
        { kind: 'status', status: 429, body: { error: { message: 'slow down' } } },
        { kind: 'status', status: 503, body: { error: { message: 'busy' } } },
        { kind: 'message', content: 'at last' },
      );
      const provider = openAiCompatibleProvider({
        baseURL: server.baseURL,
        model: 'local',
        timeoutMs: 10_000,
        maxRetries: 2,
        logFailure: () => undefined,
      });
      const told: Array<{ retry: ModelRetry | null; at: number }> = [];
      const started = Date.now();
      const result = await provider.step({
        system: 'test',
        messages: [{ role: 'user', content: 'hi' }],
        tools: [],
        onRetry: (retry) => told.push({ retry, at: Date.now() - started }),
        ...(stream ? { onSendDraft: () => undefined } : {}),
      });
      expect(result.text).toBe('at last');
      expect(server.requests).toHaveLength(3);
      expect(told.map((t) => t.retry)).toEqual([
        { attempt: 2, attempts: 3, delayMs: 2_000, reason: 'HTTP 429' },
        { attempt: 3, attempts: 3, delayMs: 4_000, reason: 'HTTP 503' },
        null,
      ]);
      // The answer came after both waits, not before.
      expect(told[2]!.at).toBeGreaterThanOrEqual(6_000);
    }, 30_000);
  }

  it('names the attempts when every one failed', async () => {
    server.reply(
      { kind: 'status', status: 503, body: {}, headers: { 'retry-after-ms': '5' } },
      { kind: 'status', status: 503, body: {}, headers: { 'retry-after-ms': '5' } },
    );
    const provider = openAiCompatibleProvider({
      baseURL: server.baseURL,
      model: 'local',
      timeoutMs: 10_000,
      maxRetries: 1,
      logFailure: () => undefined,
    });
    await expect(
      provider.step({ system: 'test', messages: [{ role: 'user', content: 'hi' }], tools: [] }),
    ).rejects.toThrow(/HTTP 503.*, after 2 attempts/);
  });
});
