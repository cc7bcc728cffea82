/**
 * `sendbox login`, `sessions` and `logout` against a cluster (`--database-url`): the login code is
 * signed with the cluster's session key (cluster_keys, opened with the master key), so the link
 * works on every gateway and once across them; the browser sessions are the cluster's table, so a
 * logout ends a session on every gateway (each refuses it within CACHE_MS, session-book.ts). A
 * worker's data dir holds no session.key nor session book of its own.
 */
import { SESSION_IDLE_MS } from '../gateway/session-book.ts';
import type { SessionRow } from '../cli/browser-sessions.ts';
import { openDatabase, type Database } from '../stores/postgres/database.ts';
import { openClusterKeys } from './cluster-keys.ts';
import { readMasterKey } from './master-key.ts';
import { ClusterSessionBook } from './session-book.ts';

export interface ClusterAccess {
  databaseUrl: string;
  schema: string;
}

async function withCluster<T>(access: ClusterAccess, use: (db: Database) => Promise<T>): Promise<T> {
  const db = await openDatabase(access.databaseUrl, { schema: access.schema, max: 2 });
  try {
    return await use(db);
  } finally {
    await db.close();
  }
}

/** The cluster's session key; refused (changing nothing) when no worker has made the cluster's keys yet. */
export function clusterSessionKey(access: ClusterAccess, masterKeyFile: string | undefined): Promise<Buffer> {
  return withCluster(access, async (db) => {
    const { rows } = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${db.table('cluster_keys')}`,
    );
    if (rows[0]!.n === 0) {
      throw new Error(
        `no worker has started on this cluster yet (${db.table('cluster_keys')} is empty); start one with ` +
          '`sendbox serve --database-url … --object-store-url …`, which prints a login link',
      );
    }
    const masterKey = await readMasterKey(masterKeyFile);
    return (await openClusterKeys(db, masterKey, `the master key ${masterKeyFile}`)).sessionKey;
  });
}

export function listClusterSessions(access: ClusterAccess): Promise<SessionRow[]> {
  return withCluster(access, (db) =>
    Promise.resolve(
      new ClusterSessionBook(db)
        .list()
        .map((record) => ({ ...record, expires: record.lastSeen + SESSION_IDLE_MS })),
    ),
  );
}

/** Ends the sessions named, or all, on every gateway of the cluster; resolves to the ids ended. */
export function endClusterSessions(
  access: ClusterAccess,
  which: 'all' | readonly string[],
): Promise<string[]> {
  return withCluster(access, (db) => new ClusterSessionBook(db).revoke(which));
}
