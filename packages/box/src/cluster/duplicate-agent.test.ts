/**
 * duplicateAgent in a cluster, over a real PostgreSQL and Ceph RGW: the copy is made through the
 * cluster's stores (its ledger and transcript rows, its attachments in the bucket, its memory rows),
 * so every worker sees it whole. It used to be written to the duplicating worker's local files,
 * which the cluster never reads: the copy had a profile and nothing else.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentPaths } from '../stores/files/layout.ts';
import { scriptedProvider } from '../providers/scripted.ts';
import { useServices } from '../stores/postgres/backend.ts';
import { ledgerIds, useClusterKit } from '../testing/cluster-kit.ts';
import { transcriptRows } from '../testing/cluster-rows.ts';
import { sendText } from '../testing/host-fixture.ts';
import { until } from '../testing/processes.ts';

const services = useServices();
const masterKey = randomBytes(32);

describe('duplicating an agent in a cluster', () => {
  const kit = useClusterKit(services);

  it('copies its entries, transcript, attachments and memory into the cluster, seen by any worker', async () => {
    const schema = kit.schemaName();
    const start = (name: string, takeTurns: boolean, steps: Parameters<typeof scriptedProvider>[0]) =>
      kit.startWorker({
        dataDirName: name,
        schema,
        masterKey,
        env: {},
        provider: scriptedProvider(steps),
        workerName: name,
        takeTurns,
      });
    const { worker: gateway } = await start('gateway', false, () => sendText('not here'));
    await start('turns', true, [
      { toolCalls: [{ name: 'update_state', input: { memory: { action: 'write', text: 'Likes tea' } } }] },
      sendText('noted'),
    ]);
    const agent = await gateway.host.createAgent({ name: 'Original' });
    kit.removeAgentObjects(agent.id);
    const bytes = new Uint8Array(randomBytes(3000));
    await gateway.host.uploadFile({ agentId: agent.id, fileName: 'notes.bin', bytes, clientNonce: 'u0' });
    await gateway.host.sendPrompt({ agentId: agent.id, prompt: 'remember tea', clientNonce: 'p0' });
    await until(async () => (await ledgerIds(gateway.db, agent.id)).includes('t0e'), 'turn 0 to end');

    const copy = await gateway.host.duplicateAgent(agent.id);
    kit.removeAgentObjects(copy.id);
    expect(copy.name).toBe('Original (copy)');
    // The rows: the same entries, the same JSONL lines.
    expect(await ledgerIds(gateway.db, copy.id)).toEqual(await ledgerIds(gateway.db, agent.id));
    const text = async (id: string) => (await transcriptRows(gateway.db, id)).map((row) => row.text).join('');
    expect(await text(copy.id)).toBe(await text(agent.id));
    expect(await text(copy.id)).toContain('remember tea');

    // A worker that never saw either agent: the copy's entries, memory and attachment are there.
    const { worker: fresh, dataDir } = await start('fresh', false, () => sendText('not here'));
    const entries = await fresh.host.openAgent(copy.id);
    expect(entries.map((entry) => entry.id)).toEqual(await ledgerIds(gateway.db, agent.id));
    const memory = await fresh.host.memory(copy.id);
    expect(memory.scopes.find((scope) => scope.scope === 'agent')!.entries.map((e) => e.text)).toEqual([
      'Likes tea',
    ]);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    expect(await fresh.stores.fetchAttachment!(copy.id, sha256)).toBe(true);
    const folder = agentPaths(dataDir, copy.id).attachments;
    const name = (await readdir(folder)).find((file) => file.startsWith(sha256))!;
    expect(
      createHash('sha256')
        .update(await readFile(path.join(folder, name)))
        .digest('hex'),
    ).toBe(sha256);
  }, 90_000);
});
