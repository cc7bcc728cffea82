/**
 * Agent secrets saved by a cluster before its secrets key (sealed with the master key itself) are
 * sealed again under the secrets key when a worker starts, on a real PostgreSQL; a row no key opens
 * stays as it was, and reading it still says so.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useServices } from '../stores/postgres/backend.ts';
import { PgSecretStore, sealSecret } from '../stores/postgres/secrets.ts';
import { startAcceptingWorker } from '../testing/cluster-children.ts';
import { openClusterKeys } from './cluster-keys.ts';
import { useClusterKit } from '../testing/cluster-kit.ts';

const services = useServices();

describe('agent secrets saved before the cluster secrets key', () => {
  const kit = useClusterKit(services);

  it('are sealed again under the secrets key when a worker starts, and decrypt', async () => {
    const { databaseUrl, objectStoreUrl, credentials } = services();
    const fresh = await kit.freshSchema();
    const { db, schema } = fresh;
    const masterKey = randomBytes(32);
    const insert = async (owner: string, name: string, row: { iv: Buffer; tag: Buffer; data: Buffer }) =>
      db.pool.query(
        `INSERT INTO ${db.table('secrets')} (agent_id, name, iv, tag, data) VALUES ($1, $2, $3, $4, $5)`,
        [owner, name, row.iv, row.tag, row.data],
      );
    // As a worker before the secrets key wrote them: the master key itself.
    await insert('agent-1', 'API_TOKEN', sealSecret(masterKey, 'agent-1', 'API_TOKEN', 'tok-old-1'));
    const lost = sealSecret(randomBytes(32), 'agent-1', 'OTHER', 'lost');
    await insert('agent-1', 'OTHER', lost);

    const dataDir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'sendbox-legacy-'));
    kit.defer(() => fs.promises.rm(dataDir, { recursive: true, force: true }));
    const worker = await startAcceptingWorker({
      databaseUrl,
      objectStoreUrl,
      credentials,
      schema,
      masterKey,
      dataDir,
    });
    kit.defer(() => worker.close());

    const keys = await openClusterKeys(db, masterKey);
    const store = new PgSecretStore(db, keys.secretsKey, 'agent-1');
    // A row no key opens is left as it was, and reading it still says what is wrong.
    const other = `SELECT data FROM ${db.table('secrets')} WHERE name = 'OTHER'`;
    expect((await db.pool.query<{ data: Buffer }>(other)).rows[0]!.data).toEqual(lost.data);
    await expect(store.all()).rejects.toThrow(/secret OTHER of agent agent-1 does not decrypt/);
    await db.pool.query(`DELETE FROM ${db.table('secrets')} WHERE name = 'OTHER'`);
    expect((await store.all()).get('API_TOKEN')).toBe('tok-old-1');
  }, 120_000);
});
