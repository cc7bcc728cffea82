/**
 * The roster: after a restart `listAgents` answers from roster.db without opening any agent,
 * with the rows the box listed before it stopped; an agent whose files changed meanwhile (or
 * a roster that is damaged or gone) is read from its files instead, never shown stale.
 */
import { rm, writeFile } from 'node:fs/promises';
import { openLedgerForWrite } from '@sendbox/txcript';
import { afterEach, describe, expect, it } from 'vitest';
import { hostFixture, type HostFixture } from '../testing/host-fixture.ts';
import { agentPaths, rosterDb } from '../stores/files/layout.ts';
import { scriptedProvider } from '../providers/scripted.ts';
import { createAgentHost, type LocalAgentHost } from './agent-host.ts';
import { AgentRoster } from './agent-roster.ts';

let fx: HostFixture | undefined;
let again: LocalAgentHost | undefined;
afterEach(async () => {
  await again?.close();
  again = undefined;
  await fx?.dispose();
  fx = undefined;
});

const send = (content: string) => ({ name: 'send_message', input: { type: 'text', content } });

/** Three agents with conversations, one of them read, listed, then the box stopped. */
async function threeAgents(): Promise<{ fx: HostFixture; before: unknown[]; ids: string[] }> {
  const fixture = await hostFixture([{ toolCalls: [send('first reply')] }, {}]);
  const { host } = fixture;
  await fixture.prompt('hello');
  const second = await host.createAgent({ name: 'Second', description: 'two' });
  fixture.model.push({ toolCalls: [send('second reply')] }, {});
  await host.sendPrompt({ agentId: second.id, prompt: 'hi', clientNonce: 's1' });
  await host.idle(second.id);
  const third = await host.createAgent({ name: 'Third' });
  await host.openAgent(fixture.agentId);
  const before = await host.listAgents();
  await host.close();
  return { fx: fixture, before, ids: [fixture.agentId, second.id, third.id] };
}

const restart = async (dataDir: string) =>
  (again = await createAgentHost({
    dataDir,
    provider: scriptedProvider([]),
    env: {},
  }));

describe('the roster', () => {
  it('lists every agent after a restart as before, without opening any of them', async () => {
    const seeded = await threeAgents();
    fx = seeded.fx;
    const host = await restart(fx.dataDir);
    expect(await host.listAgents()).toEqual(seeded.before);
    expect(host.openAgents).toBe(0);
    expect(seeded.before).toContainEqual(
      expect.objectContaining({ name: 'Second', lastEntry: { kind: 'send-message', text: 'second reply' } }),
    );
  });

  it('reads an agent whose files another writer changed while the box was stopped, and only that one', async () => {
    const seeded = await threeAgents();
    fx = seeded.fx;
    const [, second] = seeded.ids;
    const ledger = openLedgerForWrite(agentPaths(fx.dataDir, second!).storeDb);
    ledger.appendEntries([
      { id: 't1u', kind: 'message', role: 'user', content: 'from elsewhere', timestampMs: 5 },
    ]);
    ledger.close();
    const host = await restart(fx.dataDir);
    const rows = await host.listAgents();
    expect(rows.find((row) => row.id === second)?.lastEntry).toEqual({
      kind: 'message',
      text: 'from elsewhere',
    });
    expect(host.openAgents).toBe(1);
    // Read once, then listed from the live agent.
    await host.listAgents();
    expect(host.openAgents).toBe(1);
  });

  it('rebuilds a damaged or missing roster from the agents’ files', async () => {
    const seeded = await threeAgents();
    fx = seeded.fx;
    await writeFile(rosterDb(fx.dataDir), 'not a database');
    await rm(`${rosterDb(fx.dataDir)}-wal`, { force: true });
    let host = await restart(fx.dataDir);
    expect(await host.listAgents()).toEqual(seeded.before);
    await host.close();
    // Written again as it read them: the next start opens none.
    host = await restart(fx.dataDir);
    expect(await host.listAgents()).toEqual(seeded.before);
    expect(host.openAgents).toBe(0);
  });

  it('drops a deleted agent and shows a new one, across a restart', async () => {
    const seeded = await threeAgents();
    fx = seeded.fx;
    let host = await restart(fx.dataDir);
    await host.deleteAgent(seeded.ids[2]!);
    const fourth = await host.createAgent({ name: 'Fourth' });
    await host.close();
    host = await restart(fx.dataDir);
    const names = (await host.listAgents()).map((row) => row.name).sort();
    expect(names).toEqual(['Fourth', 'Second', 'Test agent']);
    expect(host.openAgents).toBe(0);
    expect(fourth.name).toBe('Fourth');
  });
});

describe('the roster under a burst', () => {
  it('reads and writes a row once for the changes reported together, not once per change', async () => {
    fx = await hostFixture([]);
    const { host } = fx;
    const row = (await host.listAgents()).find((agent) => agent.id === fx!.agentId)!;
    let reads = 0;
    const roster = new AgentRoster(
      fx.dataDir,
      (id) => {
        reads += 1;
        return Promise.resolve(id === row.id ? row : undefined);
      },
      60_000,
    );
    try {
      // A burst: every accepted input is a change, a few milliseconds apart; settled() writes them.
      for (let i = 0; i < 20; i++) {
        roster.changed(row.id);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      await roster.settled();
      expect(reads).toBe(1);
      expect(roster.cached(row.id)).toEqual(row);
    } finally {
      roster.close();
    }
  });
});
