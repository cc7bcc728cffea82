/**
 * mcp.json's problems and the settings panel's MCP methods, through the real box and gateway: a bad
 * entry is told on the terminal at start and in getStatus (file, server, field) while the valid
 * servers work; servers are listed with status and tools, added, tested, renamed and removed with
 * the rest of the file kept; the `sessions` switch.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentHost, type LocalAgentHost } from '../host/agent-host.ts';
import { scriptedProvider } from '../providers/scripted.ts';
import { lastToolOutputs } from '../testing/host-fixture.ts';
import { startTestBox, type TestBox } from '../gateway/test-support.ts';
import type { McpSettingsView } from './settings.ts';
import { testServerMounts } from './testing/server-mounts.ts';

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
const serverScript = fileURLToPath(new URL('./testing/stdio-server.mjs', import.meta.url));
const demo = { command: 'node', args: [serverScript], readOnly: testServerMounts(repoRoot) };
const broken = { command: 'node', timeoutMS: 5000 };

let box: TestBox | undefined;
let host: LocalAgentHost | undefined;
let dataDir: string | undefined;
afterEach(async () => {
  await box?.close();
  await host?.close();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
  box = undefined;
  host = undefined;
  dataDir = undefined;
});

describe('a bad mcp.json', () => {
  it('is told on the terminal at start, naming file, server and field, and the valid server still works', async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-mcp-'));
    const file = path.join(dataDir, 'mcp.json');
    await writeFile(file, JSON.stringify({ mcpServers: { broken, demo } }));
    const log: string[] = [];
    const model = scriptedProvider([
      {
        toolCalls: [
          { name: 'mcp', input: { server: 'demo', toolName: 'echo', args: { text: 'still here' } } },
        ],
      },
      { toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'ok' } }] },
      { text: '' },
    ]);
    host = await createAgentHost({
      dataDir,
      provider: model,
      env: {},
      mcp: { log: (line) => log.push(line) },
    });
    expect(log).toEqual([
      expect.stringMatching(
        new RegExp(
          `^sendbox: mcp\\.json: ${file.replace(/[.]/g, '\\.')}: server "broken": field timeoutMS: `,
        ),
      ),
    ]);
    const agent = await host.createAgent({ name: 'a' });
    await host.sendPrompt({ agentId: agent.id, prompt: 'echo', clientNonce: 'n1' });
    await host.idle(agent.id);
    expect(lastToolOutputs(model, 1)).toEqual(['echo: still here']);
  }, 60_000);

  it('is reported by getStatus and listed by getMcpSettings; a fixed file clears it', async () => {
    box = await startTestBox(scriptedProvider([]), { hostOptions: { mcp: { log: () => {} } } });
    const file = path.join(box.dataDir, 'mcp.json');
    await writeFile(file, JSON.stringify({ mcpServers: { broken, demo } }));
    const status = (await box.call('getStatus')).body as { mcp: { file: string; problems: string[] } };
    expect(status.mcp).toEqual({
      file,
      problems: [expect.stringMatching(/server "broken": field timeoutMS: .*Unrecognized key/i)],
    });
    const settings = (await box.call('getMcpSettings')).body as McpSettingsView;
    expect(settings.servers.map((s) => [s.name, s.status, s.transport])).toEqual([
      ['broken', 'invalid', null],
      ['demo', 'stopped', 'stdio'],
    ]);
    expect(settings.servers[0]!.problem).toMatch(/^field timeoutMS: /);
    expect(settings.servers[0]!.entry).toEqual(broken);

    await box.call('removeMcpServer', { name: 'broken' });
    const after = (await box.call('getStatus')).body as { mcp: { problems: string[] } };
    expect(after.mcp.problems).toEqual([]);
  });
});

describe('the MCP settings methods', () => {
  it('add, test, rename and remove servers with the rest of mcp.json kept; the sessions switch', async () => {
    box = await startTestBox(scriptedProvider([]), { hostOptions: { mcp: { log: () => {} } } });
    const file = path.join(box.dataDir, 'mcp.json');
    const other = { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${secret:EX}' } };
    await writeFile(file, JSON.stringify({ $schema: 'x', mcpServers: { other }, note: 'keep me' }));
    const onDisk = async () => JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;

    // A bad entry is refused with the field named, and the file is untouched.
    const bad = await box.call('setMcpServer', { name: 'demo', server: { ...demo, timeoutMs: -1 } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/server \\"demo\\": field timeoutMs/);
    expect(await onDisk()).toEqual({ $schema: 'x', mcpServers: { other }, note: 'keep me' });

    const added = (await box.call('setMcpServer', { name: 'demo', server: demo })).body as McpSettingsView;
    expect(added.servers.map((s) => [s.name, s.status, s.tools])).toEqual([
      ['other', 'stopped', null],
      ['demo', 'stopped', null],
    ]);
    expect(await onDisk()).toEqual({ $schema: 'x', mcpServers: { other, demo }, note: 'keep me' });

    // Test: started confined, its tools listed, and remembered for the list.
    const check = (await box.call('testMcpServer', { name: 'demo', server: demo })).body as {
      ok: boolean;
      message: string;
      tools: Array<{ name: string; description: string }>;
    };
    expect(check).toMatchObject({ ok: true, message: expect.stringContaining('offers') as string });
    expect(check.tools).toContainEqual({ name: 'echo', description: 'Echoes text back.' });
    const listed = (await box.call('getMcpSettings')).body as McpSettingsView;
    expect(listed.servers[1]!.tools).toContainEqual({ name: 'echo', description: 'Echoes text back.' });
    // A server that cannot start says why.
    const failing = (
      await box.call('testMcpServer', {
        name: 'nope',
        server: { command: '/no/such/program' },
      })
    ).body as { ok: boolean; message: string };
    expect(failing.ok).toBe(false);
    expect(failing.message).toMatch(/nope did not start/);

    // Rename keeps the place in the file; a name in use is refused.
    expect(
      (await box.call('setMcpServer', { name: 'other', server: demo, previousName: 'demo' })).status,
    ).toBe(400);
    await box.call('setMcpServer', { name: 'first', server: other, previousName: 'other' });
    expect(Object.keys((await onDisk()).mcpServers as object)).toEqual(['first', 'demo']);

    // The sessions switch.
    const on = (await box.call('setMcpSessions', { enabled: true })).body as McpSettingsView;
    expect(on.sessions).toBe(true);
    expect((await onDisk()).mcpServers).toMatchObject({ sessions: { builtin: 'sessions' } });
    const off = (await box.call('setMcpSessions', { enabled: false })).body as McpSettingsView;
    expect(off.sessions).toBe(false);
    expect(Object.keys((await onDisk()).mcpServers as object)).toEqual(['first', 'demo']);

    expect((await box.call('removeMcpServer', { name: 'ghost' })).status).toBe(404);
    await box.call('removeMcpServer', { name: 'demo' });
    expect(await onDisk()).toEqual({ $schema: 'x', mcpServers: { first: other }, note: 'keep me' });
  }, 60_000);
});
