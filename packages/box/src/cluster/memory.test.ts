/**
 * Agent and user memory across cluster workers, on a real PostgreSQL (issue 25): what an agent saved
 * with `update_state memory` in a turn on one worker is in the system prompt of its next turn on
 * another and in the memory view of a gateway that runs no turn; the user scope is every agent's;
 * writes from two workers at once all land; the cap and the errors are file mode's.
 */
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DocumentMemory } from '../memory/memory-document.ts';
import { MemoryRefusal } from '../memory/memory-store.ts';
import type { ModelProvider } from '../providers/types.ts';
import { scriptedProvider } from '../providers/scripted.ts';
import { useServices } from '../stores/postgres/backend.ts';
import { openDatabase } from '../stores/postgres/database.ts';
import { PgSealedDocument, USER_MEMORY_DOCUMENT } from '../stores/postgres/sealed-documents.ts';
import { lastToolOutputs, sendText } from '../testing/host-fixture.ts';
import { until } from '../testing/processes.ts';
import { ledgerIds, useClusterKit } from '../testing/cluster-kit.ts';
import type { ClusterWorker } from './worker.ts';

const services = useServices();
const masterKey = randomBytes(32);
const remember = (text: string, scope?: 'user') => ({
  toolCalls: [
    { name: 'update_state', input: { memory: { action: 'write', text, ...(scope ? { scope } : {}) } } },
  ],
});

describe('memory across cluster workers', () => {
  const kit = useClusterKit(services);

  function newCluster() {
    const schema = kit.schemaName();
    return (name: string, provider: ModelProvider | null, takeTurns: boolean) =>
      kit.startWorker({
        dataDirName: name,
        schema,
        masterKey,
        env: {},
        provider: provider ?? scriptedProvider(() => ({ error: new Error('this worker runs no turn') })),
        workerName: name,
        takeTurns,
      });
  }

  it('saved in a turn on one worker: in the next turn’s system prompt on another, and on every gateway', async () => {
    const start = newCluster();
    const { worker: gateway } = await start('gateway', null, false);
    const agent = await gateway.host.createAgent({ name: 'Rememberer' });
    kit.removeAgentObjects(agent.id);
    const first = scriptedProvider([
      remember('The user is called Ada'),
      remember('The office is in Lyon', 'user'),
      sendText('noted'),
    ]);
    const a = await start('worker-a', first, true);
    await gateway.host.sendPrompt({ agentId: agent.id, prompt: 'remember me', clientNonce: 'm0' });
    await until(async () => (await ledgerIds(gateway.db, agent.id)).includes('t0e'), 'turn 0 to end on A');
    expect(lastToolOutputs(first, 2).join('\n')).toContain('Remembered in the user memory');
    const released = async () => {
      const holder = await gateway.leases.holder(agent.id);
      return holder === undefined || holder.expiresAt <= Date.now();
    };
    await until(released, 'A to let the lease go');
    await a.close();

    // The gateway that ran no turn shows both scopes.
    const view = await gateway.host.memory(agent.id);
    expect(view.scopes.map((scope) => [scope.scope, scope.entries.map((entry) => entry.text)])).toEqual([
      ['agent', ['The user is called Ada']],
      ['user', ['The office is in Lyon']],
    ]);

    // Worker B never held the agent: its next turn's system prompt has both.
    const second = scriptedProvider([sendText('hello Ada'), {}, sendText('hello there'), {}]);
    const b = await start('worker-b', second, true);
    await gateway.host.sendPrompt({ agentId: agent.id, prompt: 'who am I?', clientNonce: 'm1' });
    await until(async () => (await ledgerIds(gateway.db, agent.id)).includes('t1e'), 'turn 1 to end on B');
    expect(second.requests[0]!.system).toContain('- The user is called Ada');
    expect(second.requests[0]!.system).toContain('- The office is in Lyon');

    // Another agent of the cluster shares the user scope, not the first agent's own.
    const other = await gateway.host.createAgent({ name: 'Other' });
    kit.removeAgentObjects(other.id);
    await gateway.host.sendPrompt({ agentId: other.id, prompt: 'hi', clientNonce: 'o0' });
    await until(
      async () => (await ledgerIds(gateway.db, other.id)).includes('t0e'),
      'the other agent’s turn',
    );
    const others = second.requests.filter((request) => request.system.startsWith('You are Other'));
    expect(others.length).toBeGreaterThan(0);
    for (const request of others) {
      expect(request.system).toContain('- The office is in Lyon');
      expect(request.system).not.toContain('Ada');
    }

    // An entry deleted in B's memory view is gone from the other gateway's.
    await b.worker.host.forgetMemory({ agentId: agent.id, scope: 'agent', text: 'The user is called Ada' });
    expect((await gateway.host.memory(agent.id)).scopes[0]!.entries).toEqual([]);
    // Deleting the agent removes its memory row, not the user's.
    await until(released, 'B to let the lease go');
    const names = async () =>
      (
        await gateway.db.pool.query<{ name: string }>(
          `SELECT name FROM ${gateway.db.table('sealed_documents')}`,
        )
      ).rows.map((row) => row.name);
    expect(await names()).toContain(`memory:${agent.id}`);
    await gateway.host.deleteAgent(agent.id);
    expect(await names()).not.toContain(`memory:${agent.id}`);
    expect(await names()).toContain(USER_MEMORY_DOCUMENT);
    // No memory text is readable in the row.
    const { rows } = await gateway.db.pool.query<{ data: Buffer }>(
      `SELECT data FROM ${gateway.db.table('sealed_documents')} WHERE name = $1`,
      [USER_MEMORY_DOCUMENT],
    );
    expect(rows[0]!.data.toString('latin1')).not.toContain('Lyon');
  }, 90_000);

  it('keeps every write two workers make at once; refuses past the cap and misses as file mode does', async () => {
    const { db, schema } = await kit.freshSchema();
    const other = await openDatabase(services().databaseUrl, { schema, max: 4 });
    kit.defer(() => other.close());
    const key = randomBytes(32);
    const scope = (database: typeof db, cap?: number) =>
      new DocumentMemory(
        new PgSealedDocument(database, key, USER_MEMORY_DOCUMENT),
        'the user memory row',
        'user',
        cap,
      );
    const [one, two] = [scope(db), scope(other)];
    await Promise.all(
      Array.from({ length: 15 }, (_, i) => [one.write(`fact A${i}`, i), two.write(`fact B${i}`, i)]).flat(),
    );
    const texts = (await one.entries()).map((entry) => entry.text);
    expect(texts).toHaveLength(30);
    expect(new Set(texts).size).toBe(30);
    const sealedRow = async () =>
      (
        await db.pool.query<{ iv: Buffer; data: Buffer }>(
          `SELECT iv, data FROM ${db.table('sealed_documents')} WHERE name = $1`,
          [USER_MEMORY_DOCUMENT],
        )
      ).rows[0];
    const before = await sealedRow();
    expect((await two.write('fact A3', 99)).added).toBe(false);
    // The duplicate left the row as it was (a rewrite seals it again with a new IV).
    expect(await sealedRow()).toEqual(before);
    await one.write('The user drinks green tea', 31);

    const small = scope(db, texts.join('\n').length + 'The user drinks green tea'.length + 5);
    const refused = small.write('one more fact', 100);
    await expect(refused).rejects.toBeInstanceOf(MemoryRefusal);
    await expect(refused).rejects.toThrow(/past its cap of \d+.*Condense it first: forget/s);
    expect(await one.entries()).toHaveLength(31);
    const miss = two.forget('user drinks tea');
    await expect(miss).rejects.toBeInstanceOf(MemoryRefusal);
    await expect(miss).rejects.toThrow(
      /no entry that is exactly "user drinks tea"\. Near matches[\s\S]*"The user drinks green tea"/,
    );
    expect((await two.forget('fact A3')).removed).toBe(1);
    expect(await one.entries()).toHaveLength(30);

    // A row that does not hold memory is named, and never written over.
    await new PgSealedDocument(db, key, USER_MEMORY_DOCUMENT).update(() => ({ value: [1], result: null }));
    await expect(one.entries()).rejects.toThrow(/the user memory row: the user memory is not \{"entries"/);
    await expect(one.write('new', 1)).rejects.toThrow(/the user memory is not/);
    expect(await new PgSealedDocument(db, key, USER_MEMORY_DOCUMENT).read()).toEqual([1]);
  }, 60_000);

  it('takes a single box’s user memory into a cluster that has none, and leaves a later one’s unread', async () => {
    const schema = kit.schemaName();
    const logged: string[] = [];
    // A worker of the cluster in `inSchema` whose data dir holds a single box's memory.json.
    const start = async (name: string, memory: string, inSchema = schema) =>
      (
        await kit.startWorker({
          dataDirName: name,
          prepare: (dataDir) => writeFile(path.join(dataDir, 'memory.json'), memory),
          schema: inSchema,
          masterKey,
          env: {},
          provider: scriptedProvider([]),
          workerName: name,
          takeTurns: false,
          mcp: { log: (line) => logged.push(line) },
        })
      ).worker;
    const first = await start(
      'single-box',
      JSON.stringify({ entries: [{ text: 'The user is Ada', createdAt: 1 }] }),
    );
    expect(logged.join('\n')).toContain("memory.json is now this cluster's user memory");
    const agent = await first.host.createAgent({ name: 'Moved' });
    const user = async (worker: ClusterWorker) =>
      (await worker.host.memory(agent.id)).scopes.find((scope) => scope.scope === 'user')!;
    expect((await user(first)).entries.map((entry) => entry.text)).toEqual(['The user is Ada']);

    logged.length = 0;
    const second = await start('later', JSON.stringify({ entries: [{ text: 'Another box', createdAt: 2 }] }));
    expect(logged.join('\n')).toMatch(
      /memory\.json is not read: this cluster's user memory is in .*box:memory-user/,
    );
    expect((await user(second)).entries.map((entry) => entry.text)).toEqual(['The user is Ada']);

    // A file that cannot be read is named, and the worker starts all the same.
    logged.length = 0;
    await start('broken', '{not json', kit.schemaName());
    expect(logged.join('\n')).toMatch(
      /memory\.json was not taken as this cluster's user memory: .*not valid JSON/,
    );
  }, 60_000);
});
