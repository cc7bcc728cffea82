/**
 * When each worker of a cluster was last seen alive (`worker_heartbeats`): a worker writes its row
 * every third of the TTL while it runs and removes it when it closes. What lives only in a worker's
 * processes (its agents' background tasks: task-book.ts) is lost once its row is older than the TTL
 * (SIGKILL, a lost machine, or a pause longer than the TTL, as its leases would be).
 */
import type { Database } from './database.ts';
import { LEASE_TTL_MS } from './leases.ts';

/** A worker not seen for this long is dead: the lease TTL, so its tasks lapse when its leases do. */
export const WORKER_TTL_MS = LEASE_TTL_MS;

export interface Heartbeat {
  /** Stops beating and removes the worker's row (it is closing: its tasks ended). */
  stop(): Promise<void>;
}

export async function startHeartbeat(
  db: Database,
  worker: string,
  ttlMs = WORKER_TTL_MS,
): Promise<Heartbeat> {
  const table = db.table('worker_heartbeats');
  const beat = () =>
    db.pool.query(
      `INSERT INTO ${table} (worker, seen_at) VALUES ($1, now())
       ON CONFLICT (worker) DO UPDATE SET seen_at = now()`,
      [worker],
    );
  await beat();
  // A row left by a worker dead for a day tells nothing a missing row does not (dead either way).
  await db.pool.query(`DELETE FROM ${table} WHERE seen_at < now() - interval '1 day'`);
  const timer = setInterval(() => void beat().catch(() => undefined), Math.max(100, Math.floor(ttlMs / 3)));
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await db.pool.query(`DELETE FROM ${table} WHERE worker = $1`, [worker]).catch(() => undefined);
    },
  };
}
