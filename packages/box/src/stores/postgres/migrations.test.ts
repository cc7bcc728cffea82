/**
 * The cluster's schema when a worker starts (real PostgreSQL): a schema that has this sendbox's
 * steps is left alone, so a start never waits on, or deadlocks with, the queries of the workers
 * already serving; a schema whose stored steps differ (an older sendbox's) gets them all again.
 */
import { describe, expect, it } from 'vitest';
import { useClusterKit } from '../../testing/cluster-kit.ts';
import { useServices } from './backend.ts';
import { openDatabase, type Database } from './database.ts';

const services = useServices();

async function hasColumn(db: Database, schema: string, table: string, column: string): Promise<boolean> {
  const { rowCount } = await db.pool.query(
    `SELECT 1 FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 AND column_name = $3`,
    [schema, table, column],
  );
  return rowCount === 1;
}

describe('the schema at a worker start', () => {
  const kit = useClusterKit(services);

  const open = async (schema: string): Promise<Database> => {
    const db = await openDatabase(services().databaseUrl, { schema, max: 2 });
    kit.defer(() => db.close());
    return db;
  };

  it('takes no lock on a schema that has its steps: a live worker holding its tables does not stall it', async () => {
    const { db, schema } = await kit.freshSchema();
    // A serving worker's transaction has read the card waits and the leases, and is still open.
    const live = await db.pool.connect();
    await live.query('BEGIN');
    await live.query(
      `SELECT 1 FROM ${db.table('approval_waits')} w JOIN ${db.table('leases')} l USING (agent_id)`,
    );
    try {
      const starting = open(schema);
      const answer = await Promise.race([
        starting.then(() => 'started'),
        new Promise((resolve) => setTimeout(() => resolve('stalled behind the live transaction'), 5_000)),
      ]);
      expect(answer).toBe('started');
    } finally {
      await live.query('ROLLBACK');
      live.release();
    }
  });

  it('tries its steps again when PostgreSQL ends them to break a deadlock with a live worker', async () => {
    const { db, schema } = await kit.freshSchema();
    await db.pool.query(`UPDATE ${db.table('schema_digest')} SET digest = 'an older sendbox'`);
    // A live transaction reads the card waits; the steps lock the leases, then wait on the card waits.
    const live = await db.pool.connect();
    await live.query('BEGIN');
    await live.query(`SELECT 1 FROM ${db.table('approval_waits')}`);
    try {
      const starting = open(schema);
      const waiting = async () =>
        (
          await db.pool.query(
            `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%approval_waits%'`,
          )
        ).rowCount! > 0;
      while (!(await waiting())) await new Promise((resolve) => setTimeout(resolve, 10));
      // The live transaction now reads the leases: a deadlock, which PostgreSQL ends on the steps' side.
      await live.query(`SELECT 1 FROM ${db.table('leases')}`);
      await live.query('COMMIT');
      await starting;
    } finally {
      await live.query('ROLLBACK').catch(() => undefined);
      live.release();
    }
    expect((await db.pool.query(`SELECT digest FROM ${db.table('schema_digest')}`)).rows).not.toEqual([
      { digest: 'an older sendbox' },
    ]);
  });

  it('runs no step where a worker starting at the same time ran them while it waited for the lock', async () => {
    const { db, schema } = await kit.freshSchema();
    const { rows } = await db.pool.query<{ digest: string }>(
      `SELECT digest FROM ${db.table('schema_digest')}`,
    );
    await db.pool.query(`UPDATE ${db.table('schema_digest')} SET digest = 'an older sendbox'`);
    // The first worker holds the migration lock; the second finds the older digest and waits for it.
    const first = await db.pool.connect();
    await first.query('BEGIN');
    await first.query(`SELECT pg_advisory_xact_lock(hashtext('sendbox-migrate:' || $1))`, [schema]);
    const second = open(schema);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The first's steps (a column it left out, to tell them apart) and its digest, committed.
    await first.query(`ALTER TABLE ${db.table('tasks')} DROP COLUMN closing`);
    await first.query(`UPDATE ${db.table('schema_digest')} SET digest = $1`, [rows[0]!.digest]);
    await first.query('COMMIT');
    first.release();
    await second;
    expect(await hasColumn(db, schema, 'tasks', 'closing')).toBe(false);
  });

  it('runs every step again on a schema whose stored steps differ (an older sendbox made it)', async () => {
    const { db, schema } = await kit.freshSchema();
    const hasClosing = () => hasColumn(db, schema, 'tasks', 'closing');
    await db.pool.query(`ALTER TABLE ${db.table('tasks')} DROP COLUMN closing`);
    // The same steps stored: nothing runs, the column stays dropped.
    await open(schema);
    expect(await hasClosing()).toBe(false);
    // Other steps stored: they all run.
    await db.pool.query(`UPDATE ${db.table('schema_digest')} SET digest = 'an older sendbox'`);
    await open(schema);
    expect(await hasClosing()).toBe(true);
  });
});
