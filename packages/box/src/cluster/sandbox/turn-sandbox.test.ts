/**
 * An agent's files moving between cluster workers, over a real PostgreSQL and Ceph RGW: a file its
 * turn wrote on one worker is in its sandbox on the worker that runs its next turn (snapshotted at
 * the turn end and during the turn, restored before the next worker's first tool call), and an
 * attachment uploaded through one worker's gateway is served whole by another's.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { agentFiles, boxAgentFolders } from '../../gateway/files.ts';
import { startGateway } from '../../gateway/server.ts';
import { makeWebRoot } from '../../gateway/test-support.ts';
import type { ModelProvider } from '../../providers/types.ts';
import { scriptedProvider, type ScriptedStep } from '../../providers/scripted.ts';
import { agentPaths } from '../../stores/files/layout.ts';
import { useServices } from '../../stores/postgres/backend.ts';
import { s3ClientFor } from '../../stores/postgres/attachments.ts';
import { parseObjectStoreUrl } from '../../stores/postgres/object-store-url.ts';
import { lastToolOutputs, sendText } from '../../testing/host-fixture.ts';
import { until } from '../../testing/processes.ts';
import { removeObjects } from '../../testing/bucket.ts';
import { useClusterKit } from '../../testing/cluster-kit.ts';
import type { ClusterWorker } from '../worker.ts';
import { parseManifest } from './manifest.ts';
import { SnapshotStore } from './snapshot-store.ts';

const services = useServices();
const masterKey = randomBytes(32);

describe('an agent’s files across cluster workers', () => {
  const kit = useClusterKit(services);

  function newCluster() {
    const schema = kit.schemaName();
    let count = 0;
    return async (provider: ModelProvider | null, takeTurns: boolean, env: NodeJS.ProcessEnv = {}) => {
      const name = `worker-${count++}`;
      return kit.startWorker({
        dataDirName: name,
        schema,
        masterKey,
        env,
        provider: provider ?? scriptedProvider(() => ({ error: new Error('this worker runs no turn') })),
        workerName: name,
        takeTurns,
        onTurnError: (agentId, error) => errors.push(`${agentId}: ${(error as Error).message}`),
      });
    };
  }
  const errors: string[] = [];

  /** The agent's objects (attachments, snapshots) leave the shared bucket after the test. */
  function removeAgentObjects(agentId: string): void {
    const location = parseObjectStoreUrl(services().objectStoreUrl);
    kit.deferLast(async () => {
      const s3 = s3ClientFor(location, services().credentials);
      await removeObjects(s3, location.bucket, `${agentId}/`);
      s3.destroy();
    });
  }

  /** A gateway over `worker`'s host, and a call to its API with the cluster's token. */
  async function httpGateway({ worker, dataDir }: { worker: ClusterWorker; dataDir: string }) {
    const webRoot = await makeWebRoot();
    kit.defer(() => rm(webRoot, { recursive: true, force: true }));
    const gateway = await startGateway({
      host: worker.host,
      files: agentFiles(worker.host, boxAgentFolders(dataDir)),
      dataDir,
      webRoot,
      version: '0.0.0-test',
      port: 0,
    });
    kit.defer(() => gateway.close());
    const call = (method: string, init: RequestInit = {}) =>
      fetch(new URL(`api/${method}`, gateway.url), {
        ...init,
        headers: { Authorization: `Bearer ${gateway.token}`, ...(init.headers as Record<string, string>) },
      });
    return { gateway, call };
  }

  async function ledgerIds(worker: ClusterWorker, agentId: string): Promise<string[]> {
    const { rows } = await worker.db.pool.query<{ id: string }>(
      `SELECT id FROM ${worker.db.table('ledger')} WHERE agent_id = $1 ORDER BY seq`,
      [agentId],
    );
    return rows.map((row) => row.id);
  }

  it('finds a file written in turn k in turn k+1 after the agent moved to another worker', async () => {
    errors.length = 0;
    const start = newCluster();
    const { worker: gateway } = await start(null, false);
    // Worker B: turn 0 writes a file, then its model thinks for 2 s (snapshots every 200 ms meanwhile).
    const first = scriptedProvider([
      {
        toolCalls: [{ name: 'write', input: { path: 'notes/plan.txt', content: 'written in turn 0 on B' } }],
      },
      sendText('wrote the plan'),
    ]);
    const slow: ModelProvider = {
      ...first,
      step: async (request) => {
        if (first.requests.length === 1) await new Promise((resolve) => setTimeout(resolve, 2000));
        return first.step(request);
      },
    };
    const b = await start(slow, true, { SENDBOX_SNAPSHOT_INTERVAL_MS: '200' });
    const agent = await gateway.host.createAgent({ name: 'Moving agent' });
    removeAgentObjects(agent.id);
    await gateway.host.sendPrompt({ agentId: agent.id, prompt: 'write the plan', clientNonce: 'k0' });

    // During the turn (before its end), a snapshot holds the file already.
    const store = new SnapshotStore(
      s3ClientFor(parseObjectStoreUrl(services().objectStoreUrl), services().credentials),
      parseObjectStoreUrl(services().objectStoreUrl).bucket,
      gateway.db,
    );
    const snapshotPaths = async (): Promise<string[]> => {
      const latest = await store.latest(agent.id);
      if (!latest) return [];
      const text = await store.getManifest(agent.id, latest.manifest);
      return parseManifest(text, agent.id, 'test').entries.map((entry) => entry.path);
    };
    await until(async () => (await snapshotPaths()).includes('notes/plan.txt'), 'a snapshot during the turn');
    expect(await ledgerIds(gateway, agent.id)).not.toContain('t0e');
    await until(async () => (await ledgerIds(gateway, agent.id)).includes('t0e'), 'turn 0 to end');
    await until(async () => {
      const holder = await gateway.leases.holder(agent.id);
      return holder !== undefined && holder.expiresAt <= Date.now() + 1000;
    }, 'B to let the lease go');
    await b.close();

    // Worker C never held the agent: turn 1 reads the file there.
    const second = scriptedProvider([
      { toolCalls: [{ name: 'read', input: { path: 'notes/plan.txt' } }] },
      sendText('read the plan'),
    ] satisfies ScriptedStep[]);
    const c = await start(second, true);
    await gateway.host.sendPrompt({ agentId: agent.id, prompt: 'read the plan', clientNonce: 'k1' });
    await until(async () => (await ledgerIds(gateway, agent.id)).includes('t1e'), 'turn 1 to end');
    expect(lastToolOutputs(second, 1).join('\n')).toContain('written in turn 0 on B');
    expect(await readFile(path.join(agentPaths(c.dataDir, agent.id).sandbox, 'notes/plan.txt'), 'utf8')).toBe(
      'written in turn 0 on B',
    );
    expect(errors).toEqual([]);
  }, 90_000);

  it('snapshots at each turn end, not only when the job lets the lease go', async () => {
    errors.length = 0;
    const start = newCluster();
    const { worker: gateway } = await start(null, false);
    const agent = await gateway.host.createAgent({ name: 'Two turns in one job' });
    removeAgentObjects(agent.id);
    // Both inputs are pending when the worker starts: one job runs both turns.
    await gateway.host.sendPrompt({ agentId: agent.id, prompt: 'write', clientNonce: 'j0' });
    await gateway.host.sendPrompt({ agentId: agent.id, prompt: 'think', clientNonce: 'j1' });
    const model = scriptedProvider([
      { toolCalls: [{ name: 'write', input: { path: 'turn0.txt', content: 'turn 0' } }] },
      sendText('turn 0 done'),
      sendText('turn 1 done'),
    ]);
    const slow: ModelProvider = {
      ...model,
      step: async (request) => {
        // Turn 1's only step comes after 2 s; the interval (60 s default) never fires in this test.
        if (JSON.stringify(request.messages.at(-1)).includes('think'))
          await new Promise((resolve) => setTimeout(resolve, 2000));
        return model.step(request);
      },
    };
    await start(slow, true);
    const location = parseObjectStoreUrl(services().objectStoreUrl);
    const s3 = s3ClientFor(location, services().credentials);
    kit.defer(() => s3.destroy());
    const store = new SnapshotStore(s3, location.bucket, gateway.db);
    await until(async () => (await store.latest(agent.id)) !== undefined, 'the first snapshot');
    const ids = await ledgerIds(gateway, agent.id);
    expect(ids).toContain('t0e');
    expect(ids).not.toContain('t1e');
    const latest = (await store.latest(agent.id))!;
    const manifest = parseManifest(await store.getManifest(agent.id, latest.manifest), agent.id, 'test');
    expect(manifest.entries.map((entry) => entry.path)).toContain('turn0.txt');
    await until(async () => (await ledgerIds(gateway, agent.id)).includes('t1e'), 'turn 1 to end');
    expect(errors).toEqual([]);
  }, 60_000);

  it('places an upload taken in by a gateway that runs no turn into the turn worker’s sandbox, once', async () => {
    errors.length = 0;
    const start = newCluster();
    const a = await start(null, false);
    const toldPaths: string[] = [];
    /** The path the turn's prompt told the model for its upload. */
    const told = (request: { messages: readonly unknown[] }): string => {
      const found = /attached a file: ([^\]"\\]+)/.exec(JSON.stringify(request.messages.at(-1)));
      if (!found) throw new Error('the prompt names no upload');
      toldPaths.push(found[1]!);
      return found[1]!;
    };
    // Worker B: turn 0 reads the upload it was told of; turn 1 deletes that one and replaces the
    // second upload with its own text.
    const onB = scriptedProvider((request, index) => {
      if (index === 0) return { toolCalls: [{ name: 'read', input: { path: told(request) } }] };
      if (index === 2) {
        const second = told(request);
        return {
          toolCalls: [
            { name: 'delete', input: { path: toldPaths[0]! } },
            { name: 'write', input: { path: second, content: 'the model’s own version' } },
          ],
        };
      }
      return sendText(`step ${index} done`);
    });
    const b = await start(onB, true);
    const [viaA, viaB] = [await httpGateway(a), await httpGateway(b)];
    const agent = await a.worker.host.createAgent({ name: 'Upload agent' });
    removeAgentObjects(agent.id);
    const upload = async (name: string, bytes: Uint8Array<ArrayBuffer>, nonce: string) => {
      const response = await viaA.call('uploadFile', {
        method: 'POST',
        headers: { 'X-Agent-Id': agent.id, 'X-File-Name': name, 'X-Client-Nonce': nonce },
        body: bytes,
      });
      expect(response.status).toBe(200);
      return ((await response.json()) as { entry: { id: string } }).entry.id;
    };
    const notes = new TextEncoder().encode(`uploaded through A ${randomBytes(8).toString('hex')}`);
    const notesEntry = await upload('notes.txt', notes, 'up0');
    await a.worker.host.sendPrompt({ agentId: agent.id, prompt: 'read my notes', clientNonce: 'p0' });
    await until(async () => (await ledgerIds(a.worker, agent.id)).includes('t0e'), 'turn 0 to end');
    // B read it at the path it was told, in its own sandbox.
    expect(toldPaths[0]).toBe(path.join(agentPaths(b.dataDir, agent.id).sandbox, 'uploads', 'notes.txt'));
    expect(lastToolOutputs(onB, 1).join('\n')).toContain(new TextDecoder().decode(notes));

    // The upload route serves it whole from either gateway (B holds it only under its hash).
    const sha256 = createHash('sha256').update(notes).digest('hex');
    for (const gateway of [viaA, viaB]) {
      const served = await gateway.call(
        `upload?agentId=${agent.id}&entryId=${encodeURIComponent(notesEntry)}`,
      );
      expect(served.status).toBe(200);
      expect(
        createHash('sha256')
          .update(Buffer.from(await served.arrayBuffer()))
          .digest('hex'),
      ).toBe(sha256);
    }

    // Turn 1 deletes the first upload and replaces the second; the agent then moves to worker C.
    await upload('keep.txt', new TextEncoder().encode('the user’s version'), 'up1');
    await a.worker.host.sendPrompt({ agentId: agent.id, prompt: 'tidy up', clientNonce: 'p1' });
    await until(async () => (await ledgerIds(a.worker, agent.id)).includes('t1e'), 'turn 1 to end');
    await until(async () => {
      const holder = await a.worker.leases.holder(agent.id);
      return holder !== undefined && holder.expiresAt <= Date.now() + 1000;
    }, 'B to let the lease go');
    await b.close();
    const onC = scriptedProvider([
      { toolCalls: [{ name: 'ls', input: { path: 'uploads' } }] },
      sendText('looked'),
    ]);
    const c = await start(onC, true);
    await a.worker.host.sendPrompt({ agentId: agent.id, prompt: 'look', clientNonce: 'p2' });
    await until(async () => (await ledgerIds(a.worker, agent.id)).includes('t2e'), 'turn 2 to end');
    // What turn 1 did stays done: the deleted upload is not put back, the replaced one keeps the model's text.
    const uploadsOnC = path.join(agentPaths(c.dataDir, agent.id).sandbox, 'uploads');
    expect(await readdir(uploadsOnC)).toEqual(['keep.txt']);
    expect(await readFile(path.join(uploadsOnC, 'keep.txt'), 'utf8')).toBe('the model’s own version');
    expect(errors).toEqual([]);
  }, 90_000);

  it('deletes an agent’s rows and bucket objects, and refuses while a worker runs its turn', async () => {
    errors.length = 0;
    const start = newCluster();
    const a = await start(null, false);
    let release = () => undefined as void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const model = scriptedProvider([
      { toolCalls: [{ name: 'write', input: { path: 'made.txt', content: 'by the turn' } }] },
      sendText('done'),
    ]);
    let calls = 0;
    const slow: ModelProvider = {
      ...model,
      step: async (request) => {
        if (++calls === 2) await held;
        return model.step(request);
      },
    };
    const b = await start(slow, true);
    const agent = await a.worker.host.createAgent({ name: 'Doomed agent' });
    removeAgentObjects(agent.id);
    await a.worker.host.uploadFile({
      agentId: agent.id,
      fileName: 'notes.txt',
      bytes: new TextEncoder().encode('x'),
    });
    await a.worker.host.sendPrompt({ agentId: agent.id, prompt: 'make a file', clientNonce: 'd0' });
    await until(() => calls === 2, 'the turn to be on its second step');
    await expect(a.worker.host.deleteAgent(agent.id)).rejects.toThrow(/is working on cluster worker/);

    const db = a.worker.db;
    const counts = async () => {
      const { rows: tables } = await db.pool.query<{ table_name: string }>(
        `SELECT table_name FROM information_schema.columns WHERE table_schema = $1 AND column_name = 'agent_id'`,
        [db.schema.slice(1, -1)],
      );
      const found: Record<string, number> = {};
      for (const { table_name: table } of tables) {
        const { rows } = await db.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM ${db.table(table)} WHERE agent_id = $1`,
          [agent.id],
        );
        if (rows[0]!.n > 0) found[table] = rows[0]!.n;
      }
      return found;
    };
    const location = parseObjectStoreUrl(services().objectStoreUrl);
    const s3 = s3ClientFor(location, services().credentials);
    kit.defer(() => s3.destroy());
    const objects = async () =>
      (await s3.send(new ListObjectsV2Command({ Bucket: location.bucket, Prefix: `${agent.id}/` })))
        .Contents ?? [];
    release();
    await until(async () => (await ledgerIds(a.worker, agent.id)).includes('t0e'), 'the turn to end');
    await until(async () => {
      const holder = await a.worker.leases.holder(agent.id);
      return holder !== undefined && holder.expiresAt <= Date.now();
    }, 'the worker to let the lease go');
    // Refused, nothing went; the agent has rows in several tables and objects of both kinds.
    expect(Object.keys(await counts())).toEqual(
      expect.arrayContaining(['ledger', 'transcript', 'inbox', 'profiles', 'sandbox_snapshots', 'leases']),
    );
    const keys = (await objects()).map((object) => object.Key!);
    expect(keys.some((key) => key.includes('/sandbox/blobs/'))).toBe(true);
    expect(keys.some((key) => /^[^/]+\/[0-9a-f]{64}\.txt$/.test(key))).toBe(true);

    const onB = agentPaths(b.dataDir, agent.id);
    expect(await readdir(onB.sandbox)).toContain('made.txt');
    await a.worker.host.deleteAgent(agent.id);
    expect(await counts()).toEqual({});
    expect(await objects()).toEqual([]);
    // The worker that ran its turn drops its local copies (told through the cluster's events).
    await until(async () => {
      const left = await Promise.all(
        [onB.sandbox, onB.agentDir].map((dir) =>
          readdir(dir).then(
            () => true,
            () => false,
          ),
        ),
      );
      return !left.includes(true);
    }, "B's local copies to go");
    expect(errors).toEqual([]);
  }, 90_000);

  it("serves an attachment uploaded through one worker's gateway from another's, whole", async () => {
    const start = newCluster();
    const one = await start(null, false);
    const two = await start(null, false);
    const gateways = [await httpGateway(one), await httpGateway(two)];
    type Gateway = (typeof gateways)[number];
    const call = (gateway: Gateway, method: string, init: RequestInit = {}) => gateway.call(method, init);
    const agent = await one.worker.host.createAgent({ name: 'Attachment agent' });
    removeAgentObjects(agent.id);
    const bytes = randomBytes(700_000);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const upload = (gateway: Gateway, nonce: string) =>
      call(gateway, 'uploadFile', {
        method: 'POST',
        headers: { 'X-Agent-Id': agent.id, 'X-File-Name': 'photo.png', 'X-Client-Nonce': nonce },
        body: bytes,
      });
    expect((await upload(gateways[0]!, 'u1')).status).toBe(200);

    const fetched = await call(gateways[1]!, `attachment?agentId=${agent.id}&sha256=${sha256}`);
    expect(fetched.status).toBe(200);
    const body = Buffer.from(await fetched.arrayBuffer());
    expect(createHash('sha256').update(body).digest('hex')).toBe(sha256);

    // The same bytes again through the second gateway: the bucket refuses the second put, nothing changes.
    const location = parseObjectStoreUrl(services().objectStoreUrl);
    const s3 = s3ClientFor(location, services().credentials);
    kit.defer(() => s3.destroy());
    const key = { Bucket: location.bucket, Key: `${agent.id}/${sha256}.png` };
    const before = await s3.send(new HeadObjectCommand(key));
    expect((await upload(gateways[1]!, 'u2')).status).toBe(200);
    const after = await s3.send(new HeadObjectCommand(key));
    expect(after.ETag).toBe(before.ETag);
    expect(after.LastModified).toEqual(before.LastModified);
    // A hash the agent has no attachment for is a 404, on either gateway.
    const unknown = createHash('sha256').update('never stored').digest('hex');
    expect((await call(gateways[1]!, `attachment?agentId=${agent.id}&sha256=${unknown}`)).status).toBe(404);
  }, 60_000);
});
