/** updateAgent through the real host: profile.json, the rename event, the next call's prompt and model. */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readLedgerFile } from '@sendbox/txcript';
import { agentPaths } from '../stores/files/layout.ts';
import { hostFixture, sendText, type HostFixture } from '../testing/host-fixture.ts';
import { agentUpdateSchema } from './agent-update.ts';

let fixture: HostFixture | undefined;
afterEach(async () => {
  await fixture?.dispose();
  fixture = undefined;
});

describe('updateAgent', () => {
  it('renames: profile.json rewritten atomically, a name-changed event in the ledger, the roster told', async () => {
    fixture = await hostFixture();
    const { host, agentId, dataDir } = fixture;
    const paths = agentPaths(dataDir, agentId);
    const { updatedAt: _was, ...before } = JSON.parse(await readFile(paths.profile, 'utf8')) as Record<
      string,
      unknown
    >;
    fixture.events.length = 0;
    const settings = await host.updateAgent(agentId, { name: 'Ada', description: 'Keeps the books' });
    expect(settings).toMatchObject({ id: agentId, name: 'Ada', description: 'Keeps the books', model: null });
    const profile = JSON.parse(await readFile(paths.profile, 'utf8')) as Record<string, unknown>;
    expect(profile).toMatchObject({ ...before, name: 'Ada', description: 'Keeps the books' });
    expect(profile.updatedAt).toEqual(expect.any(Number));
    expect(await readdir(paths.agentDir)).not.toContainEqual(expect.stringMatching(/\.tmp$/));
    // The event Grok Bot writes for a name change (grok-bot-format.md §7), read back by txcript.
    const read = readLedgerFile(paths.storeDb);
    expect(read.warnings).toEqual([]);
    const onDisk = read.rows.map((row) => row.entry).filter((entry) => entry.kind === 'event');
    expect(onDisk).toEqual([
      expect.objectContaining({
        kind: 'event',
        event: { type: 'name-changed', from: 'Test agent', to: 'Ada' },
      }),
    ]);
    expect(fixture.events).toContainEqual({ type: 'roster', agentId, change: 'updated' });
    expect(fixture.events).toContainEqual(
      expect.objectContaining({
        type: 'entry',
        agentId,
        entry: expect.objectContaining({ kind: 'event' }) as unknown,
      }),
    );
    expect((await host.listAgents()).find((row) => row.id === agentId)).toMatchObject({
      name: 'Ada',
      description: 'Keeps the books',
    });
    // A change the user made is no notice; a description alone writes no event.
    await host.updateAgent(agentId, { description: 'Keeps all the books' });
    const entries = await fixture.entries();
    expect(entries.filter((entry) => entry.kind === 'event')).toHaveLength(1);
    expect(entries.filter((entry) => entry.kind === 'notice')).toHaveLength(0);
    // Nothing changed: nothing written.
    const count = entries.length;
    await host.updateAgent(agentId, { name: 'Ada' });
    expect(await fixture.entries()).toHaveLength(count);
  });

  it("puts the name and instructions into the next call's system prompt, and the model id into its request", async () => {
    fixture = await hostFixture([sendText('one'), {}, sendText('two'), {}, sendText('three'), {}]);
    const { host, agentId } = fixture;
    await fixture.prompt('first');
    expect(fixture.model.requests[0]!.system).not.toContain('# Your instructions');
    await host.updateAgent(agentId, {
      name: 'Ada',
      instructions: 'Answer in French.\nSign every message "A."',
      model: 'scripted-large',
    });
    await fixture.prompt('second');
    const system = fixture.model.requests[2]!.system;
    expect(system).toMatch(/^You are Ada, an agent running in sendbox\./);
    expect(system).toContain('# Your instructions\nAnswer in French.\nSign every message "A."');
    expect(fixture.model.models).toEqual([
      'scripted-model',
      'scripted-model',
      'scripted-large',
      'scripted-large',
    ]);
    // Cleared: the box's model and no instructions again.
    const cleared = await host.updateAgent(agentId, { instructions: '', model: null });
    expect(cleared).toMatchObject({ instructions: '', model: null, defaultModel: 'scripted-model' });
    await fixture.prompt('third');
    expect(fixture.model.requests[4]!.system).not.toContain('# Your instructions');
    expect(fixture.model.models.slice(4)).toEqual(['scripted-model', 'scripted-model']);
  });

  it('sets the network allowlist the tools get', async () => {
    fixture = await hostFixture();
    const { host, agentId } = fixture;
    const settings = await host.updateAgent(agentId, { allowDomains: ['Example.com', '*.github.com'] });
    expect(settings.allowDomains).toEqual(['example.com', '*.github.com']);
    expect(await (await host.sessionOf(agentId)).allowDomains()).toEqual(['example.com', '*.github.com']);
  });

  it('limits the MCP servers the agent may use (profile mcp.servers); null gives it all of them again', async () => {
    fixture = await hostFixture();
    const { host, agentId, dataDir } = fixture;
    await writeFile(
      path.join(dataDir, 'mcp.json'),
      JSON.stringify({
        mcpServers: {
          docs: { url: 'https://docs.example/mcp' },
          issues: { url: 'https://issues.example/mcp' },
        },
      }),
    );
    const names = async () => (await host.mcp.access(agentId).servers()).map((server) => server.name);
    expect(await names()).toEqual(['docs', 'issues']);
    expect((await host.agentSettings(agentId)).mcpServers).toBeNull();

    expect(await host.updateAgent(agentId, { mcpServers: ['issues', 'issues'] })).toMatchObject({
      mcpServers: ['issues'],
    });
    const profileFile = agentPaths(dataDir, agentId).profile;
    expect(JSON.parse(await readFile(profileFile, 'utf8'))).toMatchObject({ mcp: { servers: ['issues'] } });
    expect(await names()).toEqual(['issues']);
    // An empty list: none.
    await host.updateAgent(agentId, { mcpServers: [] });
    expect(await names()).toEqual([]);

    const all = await host.updateAgent(agentId, { mcpServers: null });
    expect(all.mcpServers).toBeNull();
    expect(JSON.parse(await readFile(profileFile, 'utf8'))).not.toHaveProperty('mcp');
    expect(await names()).toEqual(['docs', 'issues']);
    expect(agentUpdateSchema.safeParse({ mcpServers: ['../x'] }).error?.issues[0]?.message).toMatch(
      /not a server name/,
    );
  });

  it('turns web_fetch off and on: profile.json web.fetch, and the tools the next call offers', async () => {
    fixture = await hostFixture([sendText('one'), {}, sendText('two'), {}]);
    const { host, agentId, dataDir } = fixture;
    const offered = (call: number): string[] =>
      (fixture!.model.requests[call]!.tools ?? []).map((tool) => tool.name);
    expect(await host.agentSettings(agentId)).toMatchObject({ webFetch: true });
    const off = await host.updateAgent(agentId, { webFetch: false });
    expect(off.webFetch).toBe(false);
    const profile = JSON.parse(await readFile(agentPaths(dataDir, agentId).profile, 'utf8')) as {
      web?: unknown;
    };
    expect(profile.web).toEqual({ fetch: 'off' });
    await fixture.prompt('first');
    expect(offered(0)).not.toContain('web_fetch');
    expect(offered(0)).toContain('read');
    expect((await host.updateAgent(agentId, { webFetch: true })).webFetch).toBe(true);
    await fixture.prompt('second');
    expect(offered(2)).toContain('web_fetch');
    expect(agentUpdateSchema.safeParse({ webFetch: 'off' }).success).toBe(false);
  });

  it('refuses bad input by field, and a model id without a configured model', async () => {
    const bad = agentUpdateSchema.safeParse({ name: '  ', allowDomains: ['http://x.com/a'], color: 'red' });
    expect(bad.error?.issues.map((issue) => [issue.path.join('.'), issue.message])).toEqual([
      ['name', 'name is empty: give the agent a name'],
      ['allowDomains.0', expect.stringMatching(/not a host name/)],
      ['', expect.stringMatching(/color/)],
    ]);
    fixture = await hostFixture([], { provider: null });
    await expect(fixture.host.updateAgent(fixture.agentId, { model: 'grok-x' })).rejects.toMatchObject({
      status: 409,
      message: expect.stringMatching(/no model is configured/) as unknown,
    });
    await expect(fixture.host.updateAgent('no-such-agent', { name: 'x' })).rejects.toMatchObject({
      status: 404,
    });
  });
});
