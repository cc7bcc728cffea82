/**
 * A box-wide document of a cluster (`sealed_documents` table): its JSON sealed with AES-256-GCM
 * under the cluster's secrets key, its name as associated data (a row copied to another name does
 * not decrypt). Every read goes to the database (another worker may have changed it); a change
 * holds a per-name advisory lock for its transaction, so changes from any worker never interleave.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { StoredDocument } from '../documents.ts';
import type { Database } from './database.ts';
import { fenceCall, fencedError, type AgentFence } from './leases.ts';

/** The sealed documents of one agent (deleted with it): its approval grants and its own memory. */
export function agentDocumentNames(agentId: string): { approvals: string; memory: string } {
  return { approvals: `approvals:${agentId}`, memory: `memory:${agentId}` };
}

/** The user's memory, one for every agent of the cluster. */
export const USER_MEMORY_DOCUMENT = 'box:memory-user';

interface Row {
  iv: Buffer;
  tag: Buffer;
  data: Buffer;
}

export class PgSealedDocument implements StoredDocument {
  constructor(
    private readonly db: Database,
    private readonly key: Buffer,
    readonly name: string,
    /**
     * A turn's lease fence: each change commits only while the lease has the turn's epoch (checked in
     * its transaction); absent or a null epoch, unfenced (a gateway's writes).
     */
    private readonly fence?: AgentFence,
  ) {
    if (key.length !== 32) throw new Error(`the secrets key must be 32 bytes, found ${key.length}`);
  }

  async read(): Promise<unknown> {
    const { rows } = await this.db.pool.query<Row>(
      `SELECT iv, tag, data FROM ${this.db.table('sealed_documents')} WHERE name = $1`,
      [this.name],
    );
    return rows[0] ? this.open(rows[0]) : undefined;
  }

  async update<T>(change: (current: unknown) => { value: unknown; result: T }): Promise<T> {
    const table = this.db.table('sealed_documents');
    const client = await this.db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`SELECT pg_advisory_xact_lock(hashtext('sendbox-document:' || $1))`, [this.name]);
      const fence = fenceCall(this.db, this.fence, 1);
      if (fence) await client.query(`SELECT ${fence.sql}`, fence.values);
      const { rows } = await client.query<Row>(`SELECT iv, tag, data FROM ${table} WHERE name = $1`, [
        this.name,
      ]);
      const next = change(rows[0] ? this.open(rows[0]) : undefined);
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', this.key, iv);
      cipher.setAAD(Buffer.from(this.name));
      const data = Buffer.concat([cipher.update(JSON.stringify(next.value), 'utf8'), cipher.final()]);
      await client.query(
        `INSERT INTO ${table} (name, iv, tag, data) VALUES ($1, $2, $3, $4)
         ON CONFLICT (name) DO UPDATE SET iv = EXCLUDED.iv, tag = EXCLUDED.tag, data = EXCLUDED.data`,
        [this.name, iv, cipher.getAuthTag(), data],
      );
      await client.query('COMMIT');
      return next.result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw this.fence ? fencedError(this.fence, error) : error;
    } finally {
      client.release();
    }
  }

  private open(row: Row): unknown {
    const decipher = createDecipheriv('aes-256-gcm', this.key, row.iv);
    decipher.setAAD(Buffer.from(this.name));
    decipher.setAuthTag(row.tag);
    let plain: string;
    try {
      plain = Buffer.concat([decipher.update(row.data), decipher.final()]).toString('utf8');
    } catch (error) {
      throw new Error(
        `${this.db.table('sealed_documents')} ${this.name} does not decrypt: the cluster's secrets key ` +
          'differs from the one that wrote it (was the row copied from another cluster?)',
        { cause: error },
      );
    }
    return JSON.parse(plain) as unknown;
  }
}
