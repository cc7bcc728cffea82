/** The synchronous connection (sync-sql.ts) on a real PostgreSQL. */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { until } from '../../testing/processes.ts';
import { useServices } from './backend.ts';
import { SyncSql } from './sync-sql.ts';

const services = useServices();

describe('SyncSql', () => {
  it('opens its connection on connect(), before any statement, and runs statements on it', async () => {
    const { databaseUrl } = services();
    const name = `sendbox sync test ${randomBytes(4).toString('hex')}`;
    const sync = new SyncSql(databaseUrl, 15_000, name);
    const observer = new pg.Client({ connectionString: databaseUrl });
    await observer.connect();
    try {
      const connections = async () =>
        Number(
          (
            await observer.query<{ n: string }>(
              'SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1',
              [name],
            )
          ).rows[0]!.n,
        );
      expect(await connections()).toBe(0);
      sync.connect();
      await until(async () => (await connections()) === 1, 'the connection to open');
      expect(sync.query('SELECT 41 + 1 AS n').rows).toEqual([{ n: 42 }]);
      expect(await connections()).toBe(1);
    } finally {
      sync.close();
      await observer.end();
    }
  });
});
