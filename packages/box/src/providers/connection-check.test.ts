import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startOpenAiTestServer, type OpenAiTestServer } from '../testing/openai-server.ts';
import { checkConnection } from './connection-check.ts';
import { openAiCompatibleProvider } from './index.ts';

let server: OpenAiTestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const providerAt = (baseURL: string, model = 'local-model') =>
  openAiCompatibleProvider({ baseURL, model, timeoutMs: 5_000, maxRetries: 0, logFailure: () => undefined });

/** A loopback port with nothing listening on it (taken, then given back). */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe('Test connection', () => {
  it('says it works, and how long the answer took', async () => {
    server = await startOpenAiTestServer();
    server.reply({ kind: 'message', content: 'OK' });
    const check = await checkConnection(providerAt(server.baseURL), server.baseURL);
    expect(check).toMatchObject({ ok: true, streams: true });
    expect(check.message).toMatch(
      /^Connected: openai-compatible model local-model at http:\/\/127\.0\.0\.1:\d+\/v1 answered in \d+ ms\.$/,
    );
  });

  it('finds an endpoint that does not stream, and says so', async () => {
    server = await startOpenAiTestServer({ streams: 'refuse' });
    server.reply({ kind: 'message', content: 'OK' });
    const check = await checkConnection(providerAt(server.baseURL), server.baseURL);
    expect(check).toMatchObject({ ok: true, streams: false });
    expect(check.message).toMatch(/does not stream: replies will arrive whole/);
  });

  it('names a server that is not running', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/v1`;
    const check = await checkConnection(providerAt(url), url);
    expect(check.ok).toBe(false);
    expect(check.message).toBe(
      `Nothing answers at ${url} (connection refused): is the model server running, and is the port in the base URL right?`,
    );
  });

  it('names a refused key, an unknown model and a wrong base URL', async () => {
    server = await startOpenAiTestServer();
    server.reply(
      { kind: 'status', status: 401, body: { error: { message: 'Incorrect API key provided' } } },
      { kind: 'status', status: 404, body: { error: { message: 'model "nope" not found' } } },
    );
    const key = await checkConnection(providerAt(server.baseURL), server.baseURL);
    expect(key.message).toMatch(/^The endpoint refused the API key \(HTTP 401: Incorrect API key provided\)/);
    const model = await checkConnection(providerAt(server.baseURL, 'nope'), server.baseURL);
    expect(model.message).toMatch(/^The model "nope" is not found at .* check the model id\.$/);
    // The server answers 404 on any path but /v1/chat/completions: a base URL without /v1.
    const bare = server.baseURL.replace(/\/v1$/, '');
    const url = await checkConnection(providerAt(bare), bare);
    expect(url.message).toMatch(
      /chat\/completions is not found \(HTTP 404\): check the base URL \(an OpenAI-compatible one usually ends in \/v1\)/,
    );
  });

  it('gives up after its own deadline, saying so', async () => {
    server = await startOpenAiTestServer();
    server.reply({ kind: 'hang' });
    const check = await checkConnection(providerAt(server.baseURL), server.baseURL, 300);
    expect(check.ok).toBe(false);
    expect(check.message).toBe(`No answer from ${server.baseURL} within 300 ms.`);
  });
});
