import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startOpenAiTestServer, type OpenAiTestServer } from '../testing/openai-server.ts';
import { DEFAULT_XAI_MODEL, openAiCompatibleProvider, providerFromEnv } from './index.ts';
import { ModelCallError, type ModelStepRequest } from './types.ts';

const request: ModelStepRequest = {
  system: 'You are a test agent.',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
  tools: [
    {
      name: 'shell',
      description: 'Run a command',
      inputSchema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
    },
  ],
};

describe('OpenAI-compatible provider over a loopback server', () => {
  let server: OpenAiTestServer;
  beforeEach(async () => {
    server = await startOpenAiTestServer();
  });
  afterEach(async () => {
    await server.close();
  });

  let logged: string[] = [];
  const provider = (timeoutMs = 5_000) =>
    openAiCompatibleProvider({
      baseURL: server.baseURL,
      apiKey: 'test-key',
      model: 'local-model',
      timeoutMs,
      maxRetries: 0,
      logFailure: (line) => logged.push(line),
    });

  it('sends system, messages and tools, and returns text and tool calls', async () => {
    server.reply({
      kind: 'message',
      content: 'thinking out loud',
      toolCalls: [{ id: 'call_a', name: 'shell', arguments: '{"command":"ls"}' }],
    });
    const step = await provider().step(request);
    expect(step.text).toBe('thinking out loud');
    expect(step.toolCalls).toEqual([{ id: 'call_a', name: 'shell', input: { command: 'ls' } }]);
    const sent = server.requests[0]!;
    expect(sent.headers.authorization).toBe('Bearer test-key');
    expect(sent.body.model).toBe('local-model');
    const messages = sent.body.messages as Array<{ role: string; content: unknown }>;
    expect(messages[0]).toEqual({ role: 'system', content: 'You are a test agent.' });
    const tools = sent.body.tools as Array<{ function: { name: string } }>;
    expect(tools.map((t) => t.function.name)).toEqual(['shell']);
  });

  it('passes tool results back on the next step', async () => {
    server.reply({ kind: 'message', content: 'done' });
    await provider().step({
      ...request,
      messages: [
        ...request.messages,
        {
          role: 'assistant',
          content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'shell', input: { command: 'ls' } }],
        },
        {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: 'c1',
              toolName: 'shell',
              output: { type: 'text', value: 'a.txt' },
            },
          ],
        },
      ],
    });
    const messages = server.requests[0]!.body.messages as Array<Record<string, unknown>>;
    expect(messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'c1', content: 'a.txt' });
    expect(messages.at(-2)).toMatchObject({ role: 'assistant' });
  });

  it('reports malformed tool-call JSON as a parse error, not a crash', async () => {
    server.reply({
      kind: 'message',
      toolCalls: [{ id: 'call_bad', name: 'shell', arguments: '{"command": "ls"' }],
    });
    const step = await provider().step(request);
    expect(step.toolCalls).toHaveLength(1);
    expect(step.toolCalls[0]!.id).toBe('call_bad');
    expect(step.toolCalls[0]!.name).toBe('shell');
    expect(step.toolCalls[0]!.parseError).toEqual(expect.any(String));
  });

  it('turns an HTTP 500 into a ModelCallError naming the status', async () => {
    server.reply({ kind: 'status', status: 500, body: { error: { message: 'upstream exploded' } } });
    const error = await provider()
      .step(request)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelCallError);
    expect((error as Error).message).toContain('500');
    expect((error as Error).message).toContain('upstream exploded');
  });

  it('logs one line per failed model call, naming provider, model and status, never the key', async () => {
    logged = [];
    server.reply({ kind: 'status', status: 503, body: { error: { message: 'overloaded' } } });
    await provider()
      .step(request)
      .catch(() => undefined);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/^model call failed: openai-compatible model local-model: .*503/);
    expect(logged[0]).not.toContain('test-key');
    // A stopped turn is not a failure.
    const abort = new AbortController();
    server.reply({ kind: 'hang' });
    const step = provider().step({ ...request, abortSignal: abort.signal });
    abort.abort();
    await step.catch(() => undefined);
    expect(logged).toHaveLength(1);
  });

  it('times out a step that never answers', async () => {
    server.reply({ kind: 'hang' });
    const error = await provider(300)
      .step(request)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelCallError);
    expect((error as Error).message).toMatch(/abort|timeout|timed out/i);
  });
});

describe('providerFromEnv', () => {
  it('is not configured without keys, and says exactly what to set', () => {
    const { provider, status } = providerFromEnv({});
    expect(provider).toBeNull();
    expect(status.configured).toBe(false);
    expect(status.howToConfigure).toContain('XAI_API_KEY');
    expect(status.howToConfigure).toContain('OPENAI_BASE_URL');
    expect(status.howToConfigure).toContain('SENDBOX_MODEL');
  });

  it('defaults to xAI with the default model', () => {
    const { provider, status } = providerFromEnv({ XAI_API_KEY: 'k' });
    expect(provider?.provider).toBe('xai');
    expect(status).toMatchObject({ configured: true, provider: 'xai', model: DEFAULT_XAI_MODEL });
  });

  it('takes SENDBOX_MODEL and prefers xAI unless SENDBOX_PROVIDER says otherwise', () => {
    const env = { XAI_API_KEY: 'k', OPENAI_BASE_URL: 'http://127.0.0.1:1/v1', SENDBOX_MODEL: 'm' };
    expect(providerFromEnv(env).status).toMatchObject({ provider: 'xai', model: 'm' });
    expect(providerFromEnv({ ...env, SENDBOX_PROVIDER: 'openai-compatible' }).status).toMatchObject({
      provider: 'openai-compatible',
      model: 'm',
    });
  });

  it('needs a model id for an OpenAI-compatible endpoint', () => {
    const { provider, status } = providerFromEnv({ OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' });
    expect(provider).toBeNull();
    expect(status.howToConfigure).toMatch(/SENDBOX_MODEL \(the model id\) is not/);
  });
});
