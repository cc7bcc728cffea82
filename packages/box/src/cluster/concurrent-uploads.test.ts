/**
 * Uploads to one agent through several gateways of a cluster at once, over a real PostgreSQL and
 * Ceph RGW: each gateway's session names the upload's ledger entry (`t<N>ua<k>`) from its own view
 * of the ledger, so two gateways used to pick the same id and the second upload failed (500). Every
 * upload must be accepted under an id of its own, fetchable whole through any gateway, and a retry
 * with the same client nonce must give back the first entry, not a second one.
 */
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { scriptedProvider } from '../providers/scripted.ts';
import { useServices } from '../stores/postgres/backend.ts';
import { useClusterKit, type TestCluster } from '../testing/cluster-kit.ts';
import { sendText } from '../testing/host-fixture.ts';
import { until } from '../testing/processes.ts';

const services = useServices();

describe('uploads to one agent through several gateways at once', () => {
  const kit = useClusterKit(services);

  async function gatewayOn(cluster: TestCluster, name: string) {
    const { worker, http } = await cluster.acceptingGateway({ name });
    const call = (method: string, init: RequestInit = {}) =>
      fetch(new URL(`api/${method}`, http.url), {
        ...init,
        headers: { Authorization: `Bearer ${http.token}`, ...(init.headers as Record<string, string>) },
      });
    return { worker, call };
  }

  it('gives every upload an id of its own, fetchable through any gateway, once per client nonce', async () => {
    const cluster = await kit.cluster();
    const gateways = [
      await gatewayOn(cluster, 'up-a'),
      await gatewayOn(cluster, 'up-b'),
      await gatewayOn(cluster, 'up-c'),
    ];
    // The turns run on a worker of their own.
    await kit.startWorker({
      dataDirName: 'up-turns',
      schema: cluster.schema,
      masterKey: cluster.masterKey,
      provider: scriptedProvider(() => sendText('seen')),
      workerName: 'up-turns',
    });
    const agent = await gateways[0]!.worker.host.createAgent({ name: 'Busy uploads' });
    kit.removeAgentObjects(agent.id);
    // Every gateway has read the agent before the burst (as a browser on each would have).
    for (const { call } of gateways) {
      const opened = await call('openAgent', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ id: agent.id }),
      });
      expect(opened.status).toBe(200);
    }

    const upload = (via: number, name: string, bytes: Uint8Array<ArrayBuffer>, nonce: string) =>
      gateways[via]!.call('uploadFile', {
        method: 'POST',
        headers: { 'X-Agent-Id': agent.id, 'X-File-Name': name, 'X-Client-Nonce': nonce },
        body: bytes,
      });
    const files = Array.from({ length: 24 }, (_, i) => ({
      name: `file-${i}.txt`,
      bytes: new Uint8Array(randomBytes(2_000 + i)),
      nonce: `upload-${i}`,
    }));
    const responses = await Promise.all(
      files.map((file, i) => upload(i % 3, file.name, file.bytes, file.nonce)),
    );
    const bodies = await Promise.all(responses.map((response) => response.text()));
    expect(responses.map((response, i) => `${response.status} ${bodies[i]!.slice(0, 200)}`)).toEqual(
      responses.map((_, i) => `200 ${bodies[i]!.slice(0, 200)}`),
    );
    const ids = bodies.map((body) => (JSON.parse(body) as { entry: { id: string } }).entry.id);
    expect(new Set(ids).size).toBe(files.length);
    for (const id of ids) expect(id).toMatch(/^t0ua\d+$/);
    // The ledger holds one entry per upload, numbered 0.. with no gap.
    const db = gateways[0]!.worker.db;
    const ledgerIds = async () =>
      (
        await db.pool.query<{ id: string }>(
          `SELECT id FROM ${db.table('ledger')} WHERE agent_id = $1 AND id LIKE 't%ua%' ORDER BY seq`,
          [agent.id],
        )
      ).rows.map((row) => row.id);
    expect((await ledgerIds()).sort()).toEqual(files.map((_, k) => `t0ua${k}`).sort());

    // Each is served whole through a gateway other than the one that took it.
    for (const [i, file] of files.entries()) {
      const served = await gateways[(i + 1) % 3]!.call(
        `upload?agentId=${agent.id}&entryId=${encodeURIComponent(ids[i]!)}`,
      );
      expect(served.status).toBe(200);
      const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
      expect(sha256(new Uint8Array(await served.arrayBuffer()))).toBe(sha256(file.bytes));
    }

    // A retry of one upload, through another gateway and through its own: its first entry, once.
    const retried = files[4]!;
    for (const via of [2, 1]) {
      const again = await upload(via, retried.name, retried.bytes, retried.nonce);
      expect(again.status).toBe(200);
      expect(((await again.json()) as { entry: { id: string } }).entry.id).toBe(ids[4]);
    }
    expect(await ledgerIds()).toHaveLength(files.length);

    // Gateway C has read every upload; a prompt through A then starts turn 0 on the turn worker,
    // which takes them. C's next upload goes with turn 1, not turn 0 (C read the ledger before naming it).
    expect((await upload(2, retried.name, retried.bytes, retried.nonce)).status).toBe(200);
    await gateways[0]!.worker.host.sendPrompt({ agentId: agent.id, prompt: 'look', clientNonce: 'p0' });
    const allIds = async () =>
      (
        await db.pool.query<{ id: string }>(`SELECT id FROM ${db.table('ledger')} WHERE agent_id = $1`, [
          agent.id,
        ])
      ).rows.map((row) => row.id);
    await until(async () => (await allIds()).includes('t0e'), 'turn 0 to end');
    const late = await upload(2, 'late.txt', new Uint8Array(randomBytes(100)), 'late');
    expect(late.status).toBe(200);
    expect(((await late.json()) as { entry: { id: string } }).entry.id).toBe('t1ua0');
  }, 90_000);
});
