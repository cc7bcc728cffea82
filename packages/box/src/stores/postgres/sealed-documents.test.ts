/**
 * The cluster's sealed documents on a real PostgreSQL: changes from two workers' pools never lose
 * one another's, the row holds no plaintext, and a row opened with another key or under another
 * name fails with what happened instead of reading as empty.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openDatabase, type Database } from './database.ts';
import { useServices } from './backend.ts';
import { PgSealedDocument } from './sealed-documents.ts';
import { useClusterKit } from '../../testing/cluster-kit.ts';

const services = useServices();

describe('sealed documents in PostgreSQL', () => {
  const kit = useClusterKit(services);

  async function twoWorkers(): Promise<[Database, Database]> {
    const fresh = await kit.freshSchema();
    const other = await openDatabase(services().databaseUrl, { schema: fresh.schema, max: 4 });
    kit.defer(() => other.close());
    return [fresh.db, other];
  }

  it('applies every change of two workers once, in turn, and keeps no plaintext', async () => {
    const [one, two] = await twoWorkers();
    const key = randomBytes(32);
    const docs = [
      new PgSealedDocument(one, key, 'approvals:a'),
      new PgSealedDocument(two, key, 'approvals:a'),
    ];
    expect(await docs[0]!.read()).toBeUndefined();
    const add = (doc: PgSealedDocument, item: string) =>
      doc.update((current) => {
        const list = ((current as { alwaysAllow?: string[] } | undefined)?.alwaysAllow ?? []).concat(item);
        return { value: { alwaysAllow: list }, result: list.length };
      });
    const counts = await Promise.all(
      Array.from({ length: 20 }, (_, i) => add(docs[i % 2]!, `mcp:secret-subject/${i}`)),
    );
    expect(counts.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const read = (await docs[1]!.read()) as { alwaysAllow: string[] };
    expect(read.alwaysAllow).toHaveLength(20);
    const { rows } = await one.pool.query<{ data: Buffer }>(
      `SELECT data FROM ${one.table('sealed_documents')} WHERE name = 'approvals:a'`,
    );
    expect(rows[0]!.data.toString('latin1')).not.toContain('secret-subject');
  });

  it('refuses a row sealed under another key or copied to another name, saying so', async () => {
    const [one] = await twoWorkers();
    const key = randomBytes(32);
    await new PgSealedDocument(one, key, 'box:mcp-oauth').update(() => ({
      value: { servers: {} },
      result: 0,
    }));
    await expect(new PgSealedDocument(one, randomBytes(32), 'box:mcp-oauth').read()).rejects.toThrow(
      /box:mcp-oauth does not decrypt: the cluster's secrets key differs/,
    );
    await one.pool.query(
      `INSERT INTO ${one.table('sealed_documents')} (name, iv, tag, data)
       SELECT 'approvals:b', iv, tag, data FROM ${one.table('sealed_documents')} WHERE name = 'box:mcp-oauth'`,
    );
    await expect(new PgSealedDocument(one, key, 'approvals:b').read()).rejects.toThrow(/does not decrypt/);
  });
});
