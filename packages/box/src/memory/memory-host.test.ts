/** Memory through the real host: in every model call's system prompt, never in the JSONL, after a restart, shared by the user scope. */
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentHost } from '../host/agent-host.ts';
import { scriptedProvider } from '../providers/scripted.ts';
import { agentPaths, userMemoryFile } from '../stores/files/layout.ts';
import { hostFixture, sendText, type HostFixture } from '../testing/host-fixture.ts';
import { MemoryFile } from './memory-file.ts';

let fixture: HostFixture | undefined;
afterEach(async () => {
  await fixture?.dispose();
  fixture = undefined;
});

describe('memory in the model calls', () => {
  it('is in the system prompt of every call, after a restart too, and never in the JSONL', async () => {
    fixture = await hostFixture([sendText('hi'), {}, sendText('again'), {}]);
    const { dataDir, agentId } = fixture;
    await new MemoryFile(agentPaths(dataDir, agentId).memory, 'agent').write('The user is called Ada', 1);
    await new MemoryFile(userMemoryFile(dataDir), 'user').write('The user prefers metric units', 2);
    await fixture.prompt('hello');
    expect(fixture.model.requests).toHaveLength(2);
    for (const request of fixture.model.requests) {
      expect(request.system).toContain(
        '## Agent memory (yours alone): 22 of 8192 bytes\n- The user is called Ada',
      );
      expect(request.system).toContain('- The user prefers metric units');
    }
    expect(await fixture.jsonlText()).not.toContain('Ada');
    expect(await fixture.jsonlText()).not.toContain('metric');

    // A restarted box reads the same memory.
    await fixture.host.close();
    const model = scriptedProvider([sendText('back'), {}]);
    const host = await createAgentHost({ dataDir, provider: model, env: {} });
    try {
      await host.sendPrompt({ agentId, prompt: 'still there?', clientNonce: 'after-restart' });
      await host.idle(agentId);
      expect(model.requests[0]!.system).toContain('- The user is called Ada');
      expect(model.requests[0]!.system).toContain('- The user prefers metric units');
    } finally {
      await host.close();
    }
  });

  it("shares the user scope with a second agent, not the first agent's own", async () => {
    fixture = await hostFixture([sendText('one'), {}, sendText('two'), {}]);
    const { dataDir, agentId, host } = fixture;
    await new MemoryFile(agentPaths(dataDir, agentId).memory, 'agent').write(
      'Only the first agent knows this',
      1,
    );
    await new MemoryFile(userMemoryFile(dataDir), 'user').write('Everyone knows the user is in Lyon', 2);
    const second = await host.createAgent({ name: 'Second' });
    await host.sendPrompt({ agentId: second.id, prompt: 'hi', clientNonce: 'second-1' });
    await host.idle(second.id);
    const system = fixture.model.requests[0]!.system;
    expect(system).toMatch(/^You are Second/);
    expect(system).toContain('- Everyone knows the user is in Lyon');
    expect(system).not.toContain('Only the first agent knows this');
    expect(system).toContain('## Agent memory (yours alone): 0 of 8192 bytes\n(empty)');
  });

  it('lists and deletes entries for the memory view; the next call no longer has them', async () => {
    fixture = await hostFixture([sendText('ok'), {}]);
    const { dataDir, agentId, host } = fixture;
    const own = new MemoryFile(agentPaths(dataDir, agentId).memory, 'agent');
    await own.write('Keep this', 1);
    await own.write('Drop this', 2);
    const view = await host.memory(agentId);
    expect(view.scopes.map((scope) => [scope.scope, scope.entries.map((entry) => entry.text)])).toEqual([
      ['agent', ['Keep this', 'Drop this']],
      ['user', []],
    ]);
    await expect(host.forgetMemory({ agentId, scope: 'agent', text: 'drop this' })).rejects.toMatchObject({
      status: 404,
      message: expect.stringMatching(/Near matches[\s\S]*"Drop this"/) as unknown,
    });
    const after = await host.memory(agentId);
    expect(after.scopes[0]!.entries).toHaveLength(2);
    await host.forgetMemory({ agentId, scope: 'agent', text: 'Drop this' });
    await fixture.prompt('go');
    expect(fixture.model.requests[0]!.system).toContain('- Keep this');
    expect(fixture.model.requests[0]!.system).not.toContain('Drop this');
  });

  it('goes with a duplicated agent, and away with a deleted one', async () => {
    fixture = await hostFixture();
    const { dataDir, agentId, host } = fixture;
    await new MemoryFile(agentPaths(dataDir, agentId).memory, 'agent').write('Copied along', 1);
    const copy = await host.duplicateAgent(agentId);
    expect((await host.memory(copy.id)).scopes[0]!.entries.map((entry) => entry.text)).toEqual([
      'Copied along',
    ]);
    await host.deleteAgent(copy.id);
    await expect(host.memory(copy.id)).rejects.toMatchObject({ status: 404 });
  });
});
