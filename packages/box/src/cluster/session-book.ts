/**
 * The browser sessions of every gateway of a cluster (`browser_sessions`), and the login codes
 * redeemed (`login_codes`), so a session signed in through one gateway is accepted by another and a
 * login link works once across all of them. Records hold no credential (a cookie is a MAC of the id
 * under the cluster's session key, gateway/session.ts).
 *
 * The gateway asks `live` on every request, synchronously: a record read from the table is kept for
 * CACHE_MS, so a revocation through another gateway holds here within that time (at once on the
 * gateway that revoked). Reads and writes go through the worker's synchronous connection (one
 * round trip) or its pool.
 */
import {
  MAX_SESSIONS,
  SESSION_IDLE_MS,
  type SessionRecord,
  type SessionRecords,
} from '../gateway/session-book.ts';
import type { Database } from '../stores/postgres/database.ts';

/** How long a session record read from the table is trusted before it is read again. */
export const CACHE_MS = 5_000;

interface Row {
  id: string;
  created: string;
  last_seen: string;
  browser: string;
}

const recordOf = (row: Row): SessionRecord => ({
  id: row.id,
  created: Number(row.created),
  lastSeen: Number(row.last_seen),
  browser: row.browser,
});

export class ClusterSessionBook implements SessionRecords {
  readonly #cache = new Map<string, { record: SessionRecord | null; readAt: number }>();

  constructor(
    private readonly db: Database,
    private readonly now: () => number = () => Date.now(),
  ) {}

  live(id: string): SessionRecord | null {
    const now = this.now();
    let cached = this.#cache.get(id);
    if (!cached || now - cached.readAt >= CACHE_MS) {
      const { rows } = this.db
        .sync()
        .query(
          `SELECT id, created, last_seen, browser FROM ${this.db.table('browser_sessions')} WHERE id = $1`,
          [id],
        );
      const row = rows[0] as Row | undefined;
      cached = { record: row ? recordOf(row) : null, readAt: now };
      this.#cache.set(id, cached);
      if (this.#cache.size > 4 * MAX_SESSIONS) this.#forgetOldest();
    }
    const record = cached.record;
    return record !== null && now < record.lastSeen + SESSION_IDLE_MS ? { ...record } : null;
  }

  list(): SessionRecord[] {
    const { rows } = this.db
      .sync()
      .query(
        `SELECT id, created, last_seen, browser FROM ${this.db.table('browser_sessions')} WHERE last_seen > $1 ORDER BY last_seen DESC`,
        [this.now() - SESSION_IDLE_MS],
      );
    return (rows as unknown as Row[]).map(recordOf);
  }

  async add(record: SessionRecord): Promise<void> {
    const table = this.db.table('browser_sessions');
    await this.db.pool.query(
      `WITH added AS (
         INSERT INTO ${table} (id, created, last_seen, browser) VALUES ($1, $2, $3, $4)
         ON CONFLICT (id) DO NOTHING
       )
       DELETE FROM ${table} WHERE last_seen <= $5 OR id IN (
         SELECT id FROM ${table} ORDER BY last_seen DESC OFFSET $6
       )`,
      [
        record.id,
        record.created,
        record.lastSeen,
        record.browser,
        this.now() - SESSION_IDLE_MS,
        MAX_SESSIONS - 1,
      ],
    );
    this.#cache.set(record.id, { record: { ...record }, readAt: this.now() });
  }

  async touch(id: string): Promise<void> {
    const now = this.now();
    const { rows } = await this.db.pool.query<Row>(
      `UPDATE ${this.db.table('browser_sessions')} SET last_seen = GREATEST(last_seen, $2) WHERE id = $1
       RETURNING id, created, last_seen, browser`,
      [id, now],
    );
    this.#cache.set(id, { record: rows[0] ? recordOf(rows[0]) : null, readAt: now });
  }

  async revoke(ids: readonly string[] | 'all'): Promise<string[]> {
    const table = this.db.table('browser_sessions');
    const { rows } =
      ids === 'all'
        ? await this.db.pool.query<{ id: string }>(`DELETE FROM ${table} RETURNING id`)
        : await this.db.pool.query<{ id: string }>(`DELETE FROM ${table} WHERE id = ANY($1) RETURNING id`, [
            ids,
          ]);
    if (ids === 'all') this.#cache.clear();
    else for (const id of ids) this.#cache.delete(id);
    return rows.map((row) => row.id);
  }

  claimLoginNonce(nonce: string, expires: number): boolean {
    const table = this.db.table('login_codes');
    const [, inserted] = this.db.sync().transaction([
      { text: `DELETE FROM ${table} WHERE expires < $1`, values: [this.now()] },
      {
        text: `INSERT INTO ${table} (nonce, expires) VALUES ($1, $2) ON CONFLICT (nonce) DO NOTHING`,
        values: [nonce, expires],
      },
    ]);
    return inserted!.rowCount === 1;
  }

  #forgetOldest(): void {
    const byAge = [...this.#cache].sort((a, b) => a[1].readAt - b[1].readAt);
    for (const [id] of byAge.slice(0, byAge.length - 2 * MAX_SESSIONS)) this.#cache.delete(id);
  }
}
