/**
 * Remote MCP servers through the real box and gateway: real SDK servers on loopback (Streamable
 * HTTP, and the older HTTP+SSE for the fallback), the scripted model calling `mcp`, box secrets set
 * and listed through the gateway and filled into a server's headers.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { TestBox } from '../gateway/test-support.ts';
import { scriptedProvider, type ScriptedProvider } from '../providers/scripted.ts';
import { lastToolOutputs } from '../testing/host-fixture.ts';
import { startHttpServer, type TestHttpServer } from './testing/http-servers.ts';
import { everyFile, remoteBox } from './testing/remote-box.ts';

let box: TestBox | undefined;
let servers: TestHttpServer[] = [];
afterEach(async () => {
  await box?.close();
  box = undefined;
  await Promise.all(servers.map((s) => s.stop()));
  servers = [];
});

const echo = (server: string, text: string) => ({
  toolCalls: [{ name: 'mcp', input: { server, toolName: 'echo', args: { text } } }],
});
const reply = { toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'Done.' } }] };
const end = { text: '' };

async function boxWith(model: ScriptedProvider, mcpServers: Record<string, unknown>) {
  const made = await remoteBox(model, mcpServers);
  box = made.box;
  return made;
}

describe('remote MCP servers', { timeout: 180_000 }, () => {
  it('calls a Streamable HTTP server with a box secret in its headers, set and listed through the gateway', async () => {
    const secret = 'remote-key-7f3a9c21e8';
    const server = await startHttpServer('streamable', { REQUIRED_BEARER: secret });
    servers.push(server);
    const model = scriptedProvider([
      echo('remote', 'before'),
      reply,
      end,
      echo('remote', 'wrong'),
      reply,
      end,
      echo('remote', 'after'),
      reply,
      end,
    ]);
    const { events, prompt } = await boxWith(model, {
      remote: {
        url: server.url,
        headers: { Authorization: 'Bearer ${secret:REMOTE_KEY}' },
        allowPrivateHost: true,
      },
    });
    // Not set yet: a clear problem naming the server and the secret, and listBoxSecrets says so.
    expect((await box!.call('listBoxSecrets')).body).toEqual({
      names: [],
      missing: [{ name: 'REMOTE_KEY', servers: ['remote'] }],
    });
    await prompt('call it');
    expect(lastToolOutputs(model, 1)[0]).toMatch(
      /The MCP server remote needs the box secret REMOTE_KEY, which is not set\. Ask the user/,
    );

    // A wrong value: the server refuses it and echoes it back; the model reads the error without it.
    const wrong = 'wrong-key-5d1e0b77a4';
    await box!.call('setBoxSecret', { name: 'REMOTE_KEY', value: wrong });
    await prompt('try it');
    const [refused] = lastToolOutputs(model, 4);
    expect(refused).toContain('The MCP server remote did not start: HTTP 401: Streamable HTTP error');
    expect(refused).not.toContain(wrong);

    const set = await box!.call('setBoxSecret', { name: 'REMOTE_KEY', value: secret });
    expect(set).toEqual({ status: 200, body: { names: ['REMOTE_KEY'], missing: [] } });
    expect((await box!.call('setBoxSecret', { name: '1bad', value: 'x' })).status).toBe(400);
    await prompt('again');
    expect(lastToolOutputs(model, 7)).toEqual(['streamable echo: after']);

    // The value is nowhere but the sealed store: no file, event or model request holds it.
    for (const { file, text } of await everyFile(box!.dataDir)) {
      expect(text.includes(secret), file).toBe(false);
    }
    expect(JSON.stringify(events)).not.toContain(secret);
    expect(JSON.stringify(model.requests)).not.toContain(secret);
    expect(JSON.stringify(model.requests)).not.toContain(wrong);
    expect((await box!.call('listBoxSecrets')).body).toEqual({ names: ['REMOTE_KEY'], missing: [] });
    expect((await box!.call('deleteBoxSecret', { name: 'REMOTE_KEY' })).body).toEqual({
      names: [],
      missing: [{ name: 'REMOTE_KEY', servers: ['remote'] }],
    });
  });

  it("refuses a loopback server without the operator's allowPrivateHost", async () => {
    const server = await startHttpServer('streamable');
    servers.push(server);
    const model = scriptedProvider([echo('local', 'hi'), reply, end]);
    const { prompt } = await boxWith(model, { local: { url: server.url } });
    await prompt('call it');
    const [output] = lastToolOutputs(model, 1);
    expect(output).toContain('The MCP server local did not start');
    expect(output).toMatch(/refused 127\.0\.0\.1: an address of this machine/);
  });

  it('falls back to the HTTP+SSE transport for an older server (and not when told Streamable HTTP only)', async () => {
    const server = await startHttpServer('sse');
    servers.push(server);
    const model = scriptedProvider([echo('old', 'hello'), echo('strict', 'hello'), reply, end]);
    const { prompt } = await boxWith(model, {
      old: { url: server.url, allowPrivateHost: true },
      strict: { url: server.url, allowPrivateHost: true, transport: 'streamable-http' },
    });
    await prompt('call both');
    expect(lastToolOutputs(model, 1)).toEqual(['sse echo: hello']);
    const [strict] = lastToolOutputs(model, 2);
    expect(strict).toContain('The MCP server strict did not start');
    expect(strict).toContain('this server speaks the HTTP+SSE transport only');
  });
});
