/**
 * The MCP tools through the real box: a real SDK server on stdio (mcp/testing/stdio-server.mjs)
 * run confined as the agent's uid, the scripted model calling `get_mcp_tools` and `mcp`, the JSONL
 * records read back by txcript's grok_bot codec.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { grokBot } from '@sendbox/txcript';
import { afterEach, describe, expect, it } from 'vitest';
import { runProcess } from '../../../../txcript/test/run-process.ts';
import { agentPaths } from '../../stores/files/layout.ts';
import type { SequencedEntry } from '../../stores/ledger.ts';
import { hostFixture, lastToolOutputs, type HostFixture } from '../../testing/host-fixture.ts';
import { createAgentHost } from '../../host/agent-host.ts';
import { testServerMounts } from '../../mcp/testing/server-mounts.ts';
import { addressKind } from '../../net/addresses.ts';
import { scriptedProvider } from '../../providers/scripted.ts';

const repoRoot = fileURLToPath(new URL('../../../../../', import.meta.url));
const serverScript = fileURLToPath(new URL('../../mcp/testing/stdio-server.mjs', import.meta.url));
const txcriptBin = path.join(repoRoot, 'node_modules/.bin/txcript');

let fx: HostFixture | undefined;
afterEach(async () => {
  await fx?.dispose();
  fx = undefined;
});

const call = (name: string, input: Record<string, unknown>) => ({ toolCalls: [{ name, input }] });
const reply = { toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'Done.' } }] };
const end = { text: '' };

/** The test server as mcp.json's `demo` (plus `extra` keys). */
async function writeConfig(
  dataDir: string,
  extra: Record<string, unknown> = {},
  more: Record<string, unknown> = {},
) {
  const demo = { command: 'node', args: [serverScript], readOnly: testServerMounts(repoRoot), ...extra };
  await writeFile(path.join(dataDir, 'mcp.json'), JSON.stringify({ mcpServers: { demo, ...more } }));
}

/** The tool results of the last message of request `index`. */
const toolResults = (fixture: HostFixture, index: number) => {
  const last = fixture.model.requests[index]!.messages.findLast((m) => m.role === 'tool');
  return (last?.role === 'tool' ? last.content : []).flatMap((part) =>
    part.type === 'tool-result' ? [part] : [],
  );
};
/** The text of each tool result in request `index` (a send reminder may follow them). */
const outputs = (fixture: HostFixture, index: number) =>
  toolResults(fixture, index).map((part) => {
    const output = part.output as { type: string; value?: unknown };
    return typeof output.value === 'string' ? output.value : JSON.stringify(output);
  });
type Block = { type: string; name?: string };
const blockOf = (record: Record<string, unknown>) => (record.message as { content: Block[] }).content[0]!;

describe('MCP tools in a real box', () => {
  it('discovers at three levels and records a call as Grok Bot does, read back by txcript', async () => {
    fx = await hostFixture([
      call('get_mcp_tools', {}),
      call('get_mcp_tools', { server: 'demo' }),
      call('get_mcp_tools', { server: 'demo', toolName: 'echo' }),
      {
        toolCalls: [
          { id: 'call-echo', name: 'mcp', input: { server: 'demo', toolName: 'echo', args: { text: 'hi' } } },
        ],
      },
      reply,
      end,
    ]);
    await writeConfig(fx.dataDir, { description: 'The demo server' });
    await fx.prompt('use the demo server');

    const [servers] = lastToolOutputs(fx.model, 1);
    expect(JSON.parse(servers!)).toEqual({
      success: { servers: [{ name: 'demo', description: 'The demo server', state: 'stopped' }] },
    });
    const listed = JSON.parse(lastToolOutputs(fx.model, 2)[0]!) as {
      success: { tools: Array<{ name: string }> };
    };
    expect(listed.success.tools.map((t) => t.name)).toEqual(
      expect.arrayContaining(['echo', 'add', 'fail', 'big', 'hang', 'crash_once']),
    );
    const one = JSON.parse(lastToolOutputs(fx.model, 3)[0]!) as {
      success: { tools: Array<{ name: string; inputSchema: { properties: object } }> };
    };
    expect(one.success.tools).toHaveLength(1);
    expect(one.success.tools[0]).toMatchObject({
      name: 'echo',
      description: 'Echoes text back.',
      inputSchema: { properties: { text: { type: 'string' } } },
    });
    expect(lastToolOutputs(fx.model, 4)).toEqual(['echo: hi']);

    // The JSONL: the call under the tool's bare name, in Grok Bot's dynamic-tool shape.
    const records = await fx.records();
    const echoUse = records.find((r) => blockOf(r).type === 'tool_use' && blockOf(r).name === 'echo');
    expect(echoUse).toEqual({
      role: 'assistant',
      message: {
        content: [
          {
            type: 'tool_use',
            name: 'echo',
            input: {
              name: 'user-demo-echo',
              args: { text: 'hi' },
              providerIdentifier: 'user-demo',
              toolName: 'echo',
              serverIdentifier: 'demo',
              toolCallId: 'call-echo',
            },
          },
        ],
      },
    });
    expect(records).toContainEqual({
      role: 'tool',
      message: {
        content: [
          { type: 'tool_result', name: 'echo', result: { success: { content: [{ text: 'echo: hi' }] } } },
        ],
      },
    });
    expect(records).toContainEqual({
      role: 'assistant',
      message: {
        content: [
          {
            type: 'tool_use',
            name: 'get_mcp_tools',
            input: { server: 'demo', toolName: 'echo', toolCallId: expect.any(String) as string },
          },
        ],
      },
    });
    // txcript reads it back (the common model keeps the call and its result).
    const paths = agentPaths(fx.dataDir, fx.agentId);
    const parsed = grokBot.text.parse(await readFile(paths.jsonl, 'utf8'), paths.jsonl);
    const common = grokBot.codec.toCommon(parsed.records, { sessionId: fx.agentId });
    const blocks = common.messages.flatMap((m) => m.content);
    expect(blocks).toContainEqual(expect.objectContaining({ type: 'tool_use', id: 'call-echo' }));
    expect(blocks).toContainEqual(expect.objectContaining({ type: 'tool_result', tool_use_id: 'call-echo' }));

    // The ledger row: the model's tool, the server and tool in its summary.
    const entries = (await fx.entries()) as Array<SequencedEntry & Record<string, unknown>>;
    expect(entries.find((e) => e.kind === 'tool-call' && e.name === 'mcp')).toMatchObject({
      summary: 'demo/echo',
      status: 'success',
    });

    // `txcript view` shows the call and its result.
    await fx.host.close();
    const view = await runProcess(txcriptBin, ['view', '--from', 'grok_bot', fx.agentId], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: fx.dataDir,
        TXCRIPT_GROK_BOT_ROOT: path.join(fx.dataDir, 'agent-transcripts'),
        TXCRIPT_GROK_BOT_AGENTS: path.join(fx.dataDir, 'agents'),
        NO_COLOR: '1',
        TZ: 'UTC',
      },
      cwd: fx.dataDir,
    });
    expect(view.stderr).toBe('');
    expect(view.stdout).toContain('echo');
    expect(view.stdout).toContain('echo: hi');

    // After a restart, the model reads the history as the `mcp` call it made.
    const model = scriptedProvider([reply, end]);
    const host = await createAgentHost({ dataDir: fx.dataDir, provider: model, env: {} });
    fx = { ...fx, host, dispose: async () => host.close() };
    await host.sendPrompt({ agentId: fx.agentId, prompt: 'again', clientNonce: 'n-2' });
    await host.idle(fx.agentId);
    const history = model.requests[0]!.messages;
    const echoCall = history
      .flatMap((m) => (m.role === 'assistant' && Array.isArray(m.content) ? m.content : []))
      .find((part) => part.type === 'tool-call' && part.toolCallId === 'call-echo');
    expect(echoCall).toMatchObject({
      toolName: 'mcp',
      input: { server: 'demo', toolName: 'echo', args: { text: 'hi' } },
    });
    const echoResult = history
      .flatMap((m) => (m.role === 'tool' ? m.content : []))
      .find((part) => part.type === 'tool-result' && part.toolCallId === 'call-echo');
    expect(echoResult).toMatchObject({ toolName: 'mcp', output: { type: 'text', value: 'echo: hi' } });
  });

  it('an isError result, a schema error repaired on retry, and a 1 MB result spilled to a file', async () => {
    fx = await hostFixture([
      call('mcp', { server: 'demo', toolName: 'fail', args: {} }),
      call('mcp', { server: 'demo', toolName: 'add', args: { a: 1, b: 'two' } }),
      call('mcp', { server: 'demo', toolName: 'add', args: { a: 1, b: 2 } }),
      call('mcp', { server: 'demo', toolName: 'big', args: { bytes: 1024 * 1024 } }),
      reply,
      end,
    ]);
    await writeConfig(fx.dataDir);
    await fx.prompt('go');
    expect(toolResults(fx, 1)[0]).toMatchObject({
      output: { type: 'error-text', value: expect.stringContaining('the widget is out of stock') as string },
    });
    const schemaError = toolResults(fx, 2)[0]!.output as { type: string; value: string };
    expect(schemaError.type).toBe('error-text');
    expect(schemaError.value).toContain('do not match its input schema');
    expect(schemaError.value).toMatch(/\/b|b must be number|must be number/);
    expect(lastToolOutputs(fx.model, 3)).toEqual(['3']);
    const spilled = lastToolOutputs(fx.model, 4)[0]!;
    expect(spilled).toContain('too large to show here');

    const records = await fx.records();
    expect(records).toContainEqual({
      role: 'tool',
      message: {
        content: [
          {
            type: 'tool_result',
            name: 'fail',
            result: {
              success: { isError: true, content: [{ text: { text: 'the widget is out of stock' } }] },
            },
          },
        ],
      },
    });
    const big = records.find((r) => JSON.stringify(r).includes('outputLocation')) as {
      message: {
        content: Array<{
          result: { success: { content: Array<{ outputLocation: Record<string, unknown> }> } };
        }>;
      };
    };
    const location = big.message.content[0]!.result.success.content[0]!.outputLocation;
    expect(location).toEqual({
      filePath: expect.stringMatching(/mcp-results\/demo-big-.*\.txt$/) as string,
      sizeBytes: 1024 * 1024,
      lineCount: Math.ceil((1024 * 1024) / 100),
    });
    expect(path.dirname(path.dirname(location.filePath as string))).toBe(fx.sandbox);
    expect((await stat(location.filePath as string)).size).toBe(1024 * 1024);
    expect(JSON.stringify(records).length).toBeLessThan(64 * 1024);
  });
});

describe('MCP image results', () => {
  it('reach the model as an image, and the JSONL records the image beside', async () => {
    fx = await hostFixture([call('mcp', { server: 'demo', toolName: 'image', args: {} }), reply, end]);
    await writeConfig(fx.dataDir);
    await fx.prompt('show me');
    const PIXEL =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    expect(toolResults(fx, 1)[0]!.output).toEqual({
      type: 'text',
      value: 'a pixel\n[The image is in the next message.]',
    });
    // The wires take tool results as text: the image follows in a user message of the same request.
    const messages = fx.model.requests[1]!.messages;
    const toolAt = messages.findLastIndex((m) => m.role === 'tool');
    const after = JSON.stringify(messages.slice(toolAt + 1));
    expect(after).toContain(PIXEL);
    expect(after).toContain('image/png');
    const records = await fx.records();
    expect(records).toContainEqual({
      role: 'tool',
      message: {
        content: [
          {
            type: 'tool_result',
            name: 'image',
            result: {
              success: { content: [{ text: 'a pixel' }, { image: { data: PIXEL, mimeType: 'image/png' } }] },
            },
          },
        ],
      },
    });
  });
});

describe('confined stdio servers', () => {
  it('a hung call ends at timeoutMs and the turn goes on; a crashed server is started again', async () => {
    fx = await hostFixture([
      call('mcp', { server: 'demo', toolName: 'hang', args: {} }),
      call('mcp', { server: 'demo', toolName: 'crash_once', args: {} }),
      call('mcp', { server: 'demo', toolName: 'echo', args: { text: 'still here' } }),
      reply,
      end,
    ]);
    await writeConfig(fx.dataDir, { timeoutMs: 1500 });
    await fx.prompt('go');
    expect(toolResults(fx, 1)[0]!.output).toEqual({
      type: 'error-text',
      value: expect.stringContaining('did not answer within 1500 ms') as string,
    });
    expect(lastToolOutputs(fx.model, 2)[0]).toMatch(/^recovered, pid \d+$/);
    expect(lastToolOutputs(fx.model, 3)).toEqual(['echo: still here']);
    expect(fx.host.mcp.running()).toEqual([{ agentId: fx.agentId, server: 'demo', state: 'ready' }]);
  });

  it('runs as the agent, cannot read keys/, gateway.json or another agent, nor reach a loopback port', async () => {
    const { createServer } = await import('node:net');
    const listener = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const port = (listener.address() as { port: number }).port;
    try {
      fx = await hostFixture([]);
      const other = await fx.host.createAgent({ name: 'Other' });
      const otherSandbox = agentPaths(fx.dataDir, other.id).sandbox;
      await writeFile(path.join(otherSandbox, 'private.txt'), 'other agent');
      await writeFile(path.join(fx.dataDir, 'gateway.json'), '{"token":"gateway-secret"}');
      await writeFile(path.join(fx.sandbox, 'mine.txt'), 'mine');
      fx.model.push(
        call('mcp', { server: 'demo', toolName: 'whoami', args: {} }),
        call('mcp', {
          server: 'demo',
          toolName: 'read_path',
          args: { path: path.join(fx.dataDir, 'keys/secrets.key') },
        }),
        call('mcp', {
          server: 'demo',
          toolName: 'read_path',
          args: { path: path.join(fx.dataDir, 'gateway.json') },
        }),
        call('mcp', {
          server: 'demo',
          toolName: 'read_path',
          args: { path: path.join(otherSandbox, 'private.txt') },
        }),
        call('mcp', { server: 'demo', toolName: 'read_path', args: { path: 'mine.txt' } }),
        call('mcp', { server: 'demo', toolName: 'connect', args: { host: '127.0.0.1', port } }),
        reply,
        end,
      );
      await writeConfig(fx.dataDir);
      await fx.prompt('probe');
      const who = JSON.parse(lastToolOutputs(fx.model, 1)[0]!) as {
        uid: number;
        home: string;
        cwd: string;
        env: string[];
      };
      expect(who.uid).not.toBe(process.getuid?.());
      expect(who.home).toBe(path.join(fx.dataDir, 'mcp-homes', fx.agentId, 'demo'));
      expect(who.cwd).toBe(fx.sandbox);
      expect(lastToolOutputs(fx.model, 2)[0]).toMatch(/^cannot read: (ENOENT|EACCES)$/);
      expect(lastToolOutputs(fx.model, 3)[0]).toMatch(/^cannot read: (ENOENT|EACCES)$/);
      expect(lastToolOutputs(fx.model, 4)[0]).toMatch(/^cannot read: (ENOENT|EACCES)$/);
      expect(lastToolOutputs(fx.model, 5)).toEqual(['read 4 bytes']);
      expect(outputs(fx, 6)[0]).toMatch(/^cannot connect: /);
    } finally {
      listener.close();
    }
  });

  it('reaches a host in its allowDomains through its own egress proxy, and nothing else', async () => {
    // outside.test plays a public host at 127.0.0.2 (sandboxes never reach this machine, so the
    // box's name resolution is told so, as in the shell's allowlist test); every other name keeps
    // the real rules. The request goes the way a confined server's does: HTTP_PROXY, the socat
    // forwarder inside, the proxy's socket bound into the sandbox, the proxy's allowlist.
    const { createServer } = await import('node:http');
    const outside = createServer((_req, res) => res.end('outside says hi'));
    await new Promise<void>((resolve) => outside.listen(0, '127.0.0.2', resolve));
    const port = (outside.address() as { port: number }).port;
    try {
      fx = await hostFixture([], {
        sandbox: {
          egress: {
            network: {
              resolve: (host) =>
                Promise.resolve([
                  { address: host === 'outside.test' ? '127.0.0.2' : '127.0.0.1', family: 4 },
                ]),
              kindOf: (address) => (address === '127.0.0.2' ? 'public' : addressKind(address)),
            },
          },
        },
      });
      fx.model.push(
        call('mcp', { server: 'demo', toolName: 'http_get', args: { url: `http://outside.test:${port}/` } }),
        call('mcp', {
          server: 'demo',
          toolName: 'http_get',
          args: { url: `http://elsewhere.test:${port}/` },
        }),
        call('mcp', { server: 'demo', toolName: 'connect', args: { host: '127.0.0.2', port } }),
        call('mcp', {
          server: 'closed',
          toolName: 'http_get',
          args: { url: `http://outside.test:${port}/` },
        }),
        reply,
        end,
      );
      await writeConfig(
        fx.dataDir,
        { allowDomains: ['outside.test'] },
        { closed: { command: 'node', args: [serverScript], readOnly: testServerMounts(repoRoot) } },
      );
      await fx.prompt('fetch');
      expect(lastToolOutputs(fx.model, 1)).toEqual(['200 outside says hi']);
      expect(lastToolOutputs(fx.model, 2)[0]).toMatch(
        /^403 sendbox: network access to elsewhere\.test is not allowed/,
      );
      // No way around the proxy.
      expect(lastToolOutputs(fx.model, 3)[0]).toMatch(/^cannot connect: /);
      // A server without allowDomains has no proxy at all.
      expect(lastToolOutputs(fx.model, 4)).toEqual(['no proxy: HTTP_PROXY is not set']);
    } finally {
      outside.close();
    }
  });

  it('fills ${secret:NAME} from the box secrets, scrubs its stderr, and reports a bad mcp.json without losing the good servers', async () => {
    const logged: string[] = [];
    fx = await hostFixture([], { mcp: { log: (line) => logged.push(line) } });
    await fx.host.mcp.boxSecrets.set('API_TOKEN', 'tok-0123456789-secret');
    fx.model.push(
      call('get_mcp_tools', {}),
      call('mcp', { server: 'demo', toolName: 'secret_env', args: {} }),
      reply,
      end,
    );
    await writeConfig(
      fx.dataDir,
      { env: { API_TOKEN: '${secret:API_TOKEN}' } },
      { broken: { command: 'node', timeoutMs: 'soon' }, nothing: { args: [] } },
    );
    await fx.prompt('go');
    const servers = JSON.parse(lastToolOutputs(fx.model, 1)[0]!) as {
      success: { servers: Array<{ name: string }> };
    };
    expect(servers.success.servers.map((s) => s.name)).toEqual(['demo']);
    expect(lastToolOutputs(fx.model, 2)).toEqual(['length 21']);
    const problems = (await fx.host.mcp.config.current()).problems;
    expect(problems).toEqual([
      expect.stringMatching(/mcp\.json: server "broken": field timeoutMs: /),
      expect.stringMatching(/mcp\.json: server "nothing": has neither `command`/),
    ]);
    expect(logged.some((line) => line.includes('server "broken"'))).toBe(true);
    const stderrLine = logged.find((line) => line.includes('token is'));
    expect(stderrLine).toBeDefined();
    expect(stderrLine).not.toContain('tok-0123456789-secret');
    // The secret is in no file of the data dir but the encrypted store.
    expect(await fx.jsonlText()).not.toContain('tok-0123456789-secret');
    expect(await readFile(path.join(fx.dataDir, 'mcp.json'), 'utf8')).not.toContain('tok-0123456789-secret');
  });

  it('stops an idle server, and an agent that is deleted loses its servers and their homes', async () => {
    fx = await hostFixture([], { mcp: { idleMs: 300 } });
    fx.model.push(call('mcp', { server: 'demo', toolName: 'echo', args: { text: 'a' } }), reply, end);
    await writeConfig(fx.dataDir);
    await fx.prompt('go');
    expect(fx.host.mcp.running()).toHaveLength(1);
    await expect.poll(() => fx!.host.mcp.running(), { timeout: 5000 }).toEqual([]);
    fx.model.push(call('mcp', { server: 'demo', toolName: 'echo', args: { text: 'b' } }), reply, end);
    await fx.prompt('again');
    expect(lastToolOutputs(fx.model, 4)).toEqual(['echo: b']);
    const home = path.join(fx.dataDir, 'mcp-homes', fx.agentId);
    await expect(stat(home)).resolves.toBeTruthy();
    await fx.host.deleteAgent(fx.agentId);
    expect(fx.host.mcp.running()).toEqual([]);
    await expect(stat(home)).rejects.toThrow(/ENOENT/);
  });
});
