/**
 * The cluster's keys (issue 25 §1): the secrets key (agents' and box secrets), the session signing
 * key (browser sessions, login codes) and the gateways' bearer token live in PostgreSQL
 * (`cluster_keys`), each sealed with AES-256-GCM under the master key every worker reads from
 * `SENDBOX_MASTER_KEY_FILE`, its name as associated data. The first worker to start makes them
 * (`INSERT … ON CONFLICT DO NOTHING`, so workers starting together agree on one set); every worker
 * reads them back. A master key that does not open them stops the worker and changes nothing.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Database } from '../stores/postgres/database.ts';

export interface ClusterKeys {
  /** 32 bytes: the agents' secrets and the box secrets are sealed with it. */
  secretsKey: Buffer;
  /** 32 bytes: browser sessions and login codes are signed with it (gateway/session.ts). */
  sessionKey: Buffer;
  /** The bearer token of every gateway of the cluster (written to each worker's gateway.json). */
  token: string;
}

const NAMES = ['secrets-key', 'session-key', 'gateway-token'] as const;
type KeyName = (typeof NAMES)[number];

/** The master key does not open the cluster's keys. */
export class MasterKeyMismatch extends Error {
  override readonly name = 'MasterKeyMismatch';
}

/**
 * The cluster's keys, made on first use. `masterKeySource` names where the master key came from
 * (the file), for the error a wrong one gets.
 */
export async function openClusterKeys(
  db: Database,
  masterKey: Buffer,
  masterKeySource = 'the master key',
): Promise<ClusterKeys> {
  if (masterKey.length !== 32) throw new Error(`the master key must be 32 bytes, found ${masterKey.length}`);
  const fresh: Record<KeyName, Buffer> = {
    'secrets-key': randomBytes(32),
    'session-key': randomBytes(32),
    'gateway-token': Buffer.from(randomBytes(32).toString('base64url'), 'utf8'),
  };
  const table = db.table('cluster_keys');
  for (const name of NAMES) {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', masterKey, iv);
    cipher.setAAD(Buffer.from(`sendbox-cluster-key\0${name}`));
    const data = Buffer.concat([cipher.update(fresh[name]), cipher.final()]);
    await db.pool.query(
      `INSERT INTO ${table} (name, iv, tag, data) VALUES ($1, $2, $3, $4) ON CONFLICT (name) DO NOTHING`,
      [name, iv, cipher.getAuthTag(), data],
    );
  }
  const { rows } = await db.pool.query<{ name: KeyName; iv: Buffer; tag: Buffer; data: Buffer }>(
    `SELECT name, iv, tag, data FROM ${table} WHERE name = ANY($1)`,
    [NAMES],
  );
  const opened = new Map<KeyName, Buffer>();
  for (const row of rows) {
    const decipher = createDecipheriv('aes-256-gcm', masterKey, row.iv);
    decipher.setAAD(Buffer.from(`sendbox-cluster-key\0${row.name}`));
    decipher.setAuthTag(row.tag);
    try {
      opened.set(row.name, Buffer.concat([decipher.update(row.data), decipher.final()]));
    } catch (error) {
      throw new MasterKeyMismatch(
        `${masterKeySource} does not open this cluster's keys (${table}): it is not the master key the cluster's ` +
          'first worker started with. Copy that key file to this worker and point SENDBOX_MASTER_KEY_FILE at it; nothing was changed',
        { cause: error },
      );
    }
  }
  const key = (name: KeyName): Buffer => {
    const value = opened.get(name);
    if (!value)
      throw new Error(`${table} has no ${name} row after it was written; is another program changing it?`);
    return value;
  };
  return {
    secretsKey: key('secrets-key'),
    sessionKey: key('session-key'),
    token: key('gateway-token').toString('utf8'),
  };
}
