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
 * again. The agent's pg-boss jobs (queued, active and failed turn jobs, and their dead-letter copies)
 * go in the same transaction, so none of them runs later; a job a worker fetched before the commit
 * finds no agent and ends without a turn (inbox.ts, agentHasWork). Other workers remove their local
 * copies when the roster event reaches them, and a worker that was down then at its next start
 * (cluster/local-copies.ts).
 */
import type { PoolClient } from 'pg';
import { DeleteObjectsCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { HostError } from '../../agent/errors.ts';
import type { Database } from './database.ts';
import { DEAD_TURN_QUEUE, TURN_QUEUE } from './turn-queue.ts';
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
    rows += await removeTurnJobs(client, db, agentId);
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

/**
 * Deletes the agent's jobs of the turn queue and of its dead letter queue from pg-boss's job table
 * (`<schema>_jobs.job`, the parent of its per-queue tables), in the caller's transaction; how many.
 * None when pg-boss's schema is not there (no worker has started the queue).
 */
async function removeTurnJobs(client: PoolClient, db: Database, agentId: string): Promise<number> {
  const jobs = `"${db.schema.slice(1, -1)}_jobs".job`;
  const { rows } = await client.query<{ present: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS present`, [
    jobs,
  ]);
  if (!rows[0]?.present) return 0;
  const removed = await client.query(`DELETE FROM ${jobs} WHERE name = ANY($1) AND data->>'agentId' = $2`, [
    [TURN_QUEUE, DEAD_TURN_QUEUE],
    agentId,
  ]);
  return removed.rowCount ?? 0;
}
