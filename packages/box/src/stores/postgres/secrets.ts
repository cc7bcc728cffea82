/**
 * An agent's secrets in PostgreSQL (`secrets` table): one row per name, its value encrypted with
 * AES-256-GCM under the cluster's secrets key, the agent id and the name as associated data, so a
 * row copied to another agent or name does not decrypt. Every read goes to the database: another
 * worker may have saved a secret since.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { SECRET_NAME_PATTERN } from '../../secrets/store.ts';
import type { BoxSecretsStore } from '../secrets.ts';
import type { Database } from './database.ts';

interface Row {
  name: string;
  iv: Buffer;
  tag: Buffer;
  data: Buffer;
}

/** One secret's row sealed under `key`, the owner and the name as associated data. */
export function sealSecret(
  key: Buffer,
  owner: string,
  name: string,
  value: string,
): { iv: Buffer; tag: Buffer; data: Buffer } {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(`${owner}\0${name}`));
  const data = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
  return { iv, tag: cipher.getAuthTag(), data };
}

/** The value of a row sealed by sealSecret; throws when `key` (or the owner, the name) is not the one. */
export function openSecret(
  key: Buffer,
  owner: string,
  row: { name: string; iv: Buffer; tag: Buffer; data: Buffer },
): string {
  const decipher = createDecipheriv('aes-256-gcm', key, row.iv);
  decipher.setAAD(Buffer.from(`${owner}\0${row.name}`));
  decipher.setAuthTag(row.tag);
  return Buffer.concat([decipher.update(row.data), decipher.final()]).toString('utf8');
}

export class PgSecretStore implements BoxSecretsStore {
  constructor(
    private readonly db: Database,
    private readonly key: Buffer,
    private readonly agentId: string,
  ) {
    if (key.length !== 32) throw new Error(`the secrets key must be 32 bytes, found ${key.length}`);
  }

  async all(): Promise<ReadonlyMap<string, string>> {
    const { rows } = await this.db.pool.query<Row>(
      `SELECT name, iv, tag, data FROM ${this.db.table('secrets')} WHERE agent_id = $1 ORDER BY name`,
      [this.agentId],
    );
    const out = new Map<string, string>();
    for (const row of rows) {
      try {
        out.set(row.name, openSecret(this.key, this.agentId, row));
      } catch (error) {
        throw new Error(
          `secret ${row.name} of agent ${this.agentId} does not decrypt: the workers' master key differs from the one that saved it`,
          { cause: error },
        );
      }
    }
    return out;
  }

  async set(name: string, value: string): Promise<void> {
    if (!SECRET_NAME_PATTERN.test(name))
      throw new Error(`secret name ${JSON.stringify(name)} is not a valid environment variable name`);
    const { iv, tag, data } = sealSecret(this.key, this.agentId, name, value);
    await this.db.pool.query(
      `INSERT INTO ${this.db.table('secrets')} (agent_id, name, iv, tag, data) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (agent_id, name) DO UPDATE SET iv = EXCLUDED.iv, tag = EXCLUDED.tag, data = EXCLUDED.data`,
      [this.agentId, name, iv, tag, data],
    );
  }

  async delete(name: string): Promise<boolean> {
    const { rowCount } = await this.db.pool.query(
      `DELETE FROM ${this.db.table('secrets')} WHERE agent_id = $1 AND name = $2`,
      [this.agentId, name],
    );
    return rowCount === 1;
  }
}
