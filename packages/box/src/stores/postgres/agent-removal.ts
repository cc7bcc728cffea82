/**
 * Deleting an agent in a cluster (issue 25), as file mode's `deleteAgent` removes its folders: every
 * row of the agent (each table of the schema with an `agent_id` column, so a table added later is
 * covered too, and its sealed approval grants and memory) and every object under `<agentId>/` in the bucket
 * (attachments, sandbox snapshot blobs and manifests).
 *
 * One transaction holds the agent's lease row FOR UPDATE from the first delete to the commit (a row
 * is made when there is none), so no worker claims the agent meanwhile; an agent whose lease is held
 * by a worker running its turn is refused (409), as file mode refuses a working agent. The objects go
 * before the rows commit: when the bucket fails, nothing is committed, and the delete can be asked
 * again. Other workers remove their local copies when the roster event reaches them (worker.ts).
 * What stays: the pg-boss jobs of the agent's inputs (one that runs later finds no agent and fails),
 * and the local copies of a worker that was down when the event went out.
 */
import { DeleteObjectsCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { HostError } from '../../agent/errors.ts';
import type { Database } from './database.ts';
import { agentDocumentNames } from './sealed-documents.ts';

export interface RemovedAgent {
  rows: number;
  objects: number;
}

export async function removeClusterAgent(
  db: Database,
  s3: S3Client,
  bucket: string,
  agentId: string,
): Promise<RemovedAgent> {
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(
      `INSERT INTO ${db.table('leases')} (agent_id, owner, epoch, expires_at) VALUES ($1, 'deleting', 0, now())
       ON CONFLICT (agent_id) DO NOTHING`,
      [agentId],
    );
    const { rows: lease } = await client.query<{ owner: string; held: boolean }>(
      `SELECT owner, expires_at > now() AS held FROM ${db.table('leases')} WHERE agent_id = $1 FOR UPDATE`,
      [agentId],
    );
    if (lease[0]?.held) {
      throw new HostError(
        `agent ${agentId} is working on cluster worker ${lease[0].owner}; delete it when its turn has ended`,
        409,
      );
    }
    const { rows: tables } = await client.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.columns
       WHERE table_schema = $1 AND column_name = 'agent_id' AND table_name <> 'leases'
       ORDER BY table_name`,
      [db.schema.slice(1, -1)],
    );
    let rows = 0;
    for (const { table_name: table } of tables) {
      rows +=
        (await client.query(`DELETE FROM ${db.table(table)} WHERE agent_id = $1`, [agentId])).rowCount ?? 0;
    }
    rows +=
      (
        await client.query(`DELETE FROM ${db.table('sealed_documents')} WHERE name = ANY($1)`, [
          Object.values(agentDocumentNames(agentId)),
        ])
      ).rowCount ?? 0;
    const objects = await removeObjects(s3, bucket, `${agentId}/`);
    rows +=
      (await client.query(`DELETE FROM ${db.table('leases')} WHERE agent_id = $1`, [agentId])).rowCount ?? 0;
    await client.query('COMMIT');
    return { rows, objects };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    if (error instanceof HostError) throw error;
    throw new Error(
      `could not delete agent ${agentId} from the cluster: ${(error as Error).message}; nothing was deleted from PostgreSQL, so delete it again once the database and the bucket answer`,
      { cause: error },
    );
  } finally {
    client.release();
  }
}

/** Removes every object whose key starts with `prefix` (a page of up to 1,000 at a time); how many. */
export async function removeObjects(s3: S3Client, bucket: string, prefix: string): Promise<number> {
  let removed = 0;
  for (;;) {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
    const keys = (page.Contents ?? []).flatMap((object) => (object.Key ? [{ Key: object.Key }] : []));
    if (keys.length === 0) return removed;
    const answer = await s3.send(
      new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys, Quiet: true } }),
    );
    const failed = answer.Errors?.[0];
    if (failed) throw new Error(`s3://${bucket}/${failed.Key} was not deleted: ${failed.Message}`);
    removed += keys.length;
  }
}
