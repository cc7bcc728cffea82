/**
 * An agent's UI ledger in PostgreSQL: the rows of `ledger` exactly as store.db holds them (`seq`
 * counting from 1 per agent, `id`, the entry's JSON text), plus the epoch they were written under,
 * and its key-value table in `ledger_kv`. Entries are checked and read back by txcript's ledger code
 * (`validateLedgerEntries`, `ledgerRowsOf`), as the files backend's are.
 *
 * The interface is synchronous, as SQLite's is: calls go through the worker's SyncSql. Each batch is
 * one statement (`append_ledger`, database.ts), its own transaction, behind the agent's fence
 * (leases.ts): a worker whose lease was taken over writes nothing (SupersededError).
 */
import type { LedgerEntry } from '@sendbox/protocol';
import {
  LedgerError,
  ledgerRowsOf,
  validateLedgerEntries,
  type JsonValue,
  type LedgerRead,
  type RawLedgerRow,
} from '@sendbox/txcript';
import { UNIQUE_VIOLATION, type LedgerStore } from '../ledger.ts';
import type { Database } from './database.ts';
import { fencedError, writeLockKey, type AgentFence } from './leases.ts';

/** Tries of `updateKv` before it gives up on a value other writers keep changing. */
const KV_UPDATE_TRIES = 8;

/** A kv row's text decoded from JSON (the raw text when it is not JSON). */
function kvValue(text: string | undefined): JsonValue | undefined {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

export class PgLedger implements LedgerStore {
  /** Names the ledger in warnings and errors. */
  readonly source: string;

  constructor(
    private readonly db: Database,
    private readonly fence: AgentFence,
  ) {
    this.source = `postgres ${db.table('ledger')} agent ${fence.agentId}`;
  }

  private get agentId(): string {
    return this.fence.agentId;
  }

  appendEntries(entries: readonly LedgerEntry[]): number[] {
    if (entries.length === 0) return [];
    validateLedgerEntries(entries, this.source);
    let results;
    try {
      // One statement, one round trip: the fence and the rows (database.ts, append_ledger).
      results = this.db
        .sync()
        .query(`SELECT seq FROM ${this.db.schema}.append_ledger($1, $2, $3, $4, $5) AS seq`, [
          writeLockKey(this.db, this.agentId),
          this.agentId,
          this.fence.epoch,
          entries.map((entry) => entry.id),
          entries.map((entry) => JSON.stringify(entry)),
        ]);
    } catch (error) {
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) {
        throw new LedgerError(
          `${this.source}: an entry with one of the ids ${entries.map((entry) => entry.id).join(', ')} already exists (ids are unique); nothing was written`,
          this.source,
          UNIQUE_VIOLATION,
        );
      }
      throw fencedError(this.fence, error);
    }
    // seq = the last seq + the entry's position: ascending in the batch's order.
    return results.rows.map((row) => Number(row.seq)).sort((a, b) => a - b);
  }

  readLedgerEntries(): LedgerRead {
    return this.readEntriesAfter(0);
  }

  readEntriesAfter(seq: number): LedgerRead {
    const { rows } = this.db
      .sync()
      .query(
        `SELECT seq, id, entry FROM ${this.db.table('ledger')} WHERE agent_id = $1 AND seq > $2 ORDER BY seq`,
        [this.agentId, seq],
      );
    return ledgerRowsOf(rows as unknown as RawLedgerRow[], this.source);
  }

  countEntries(): number {
    const { rows } = this.db
      .sync()
      .query(`SELECT count(*) AS n FROM ${this.db.table('ledger')} WHERE agent_id = $1`, [this.agentId]);
    return Number(rows[0]!.n);
  }

  getKv(key: string): JsonValue | undefined {
    return kvValue(this.readKv(key));
  }

  /**
   * Compare-and-set on the value's text: written only where the row still holds what `update` was
   * given (or, when there was none, where there still is none); else read again and retried. Each
   * try is one statement; a writer between the read and the write costs a retry, never its change.
   */
  updateKv(key: string, update: (current: JsonValue | undefined) => JsonValue): JsonValue {
    const table = this.db.table('ledger_kv');
    for (let attempt = 1; ; attempt++) {
      const stored = this.readKv(key);
      const next = update(kvValue(stored));
      const { rows } = this.db.sync().query(
        stored === undefined
          ? `INSERT INTO ${table} (agent_id, key, value) VALUES ($1, $2, $3)
             ON CONFLICT (agent_id, key) DO NOTHING RETURNING 1 AS written`
          : `UPDATE ${table} SET value = $3 WHERE agent_id = $1 AND key = $2 AND value = $4 RETURNING 1 AS written`,
        stored === undefined
          ? [this.agentId, key, JSON.stringify(next)]
          : [this.agentId, key, JSON.stringify(next), stored],
      );
      if (rows.length > 0) return next;
      if (attempt >= KV_UPDATE_TRIES) {
        throw new Error(
          `${this.source}: kv "${key}" changed under each of ${KV_UPDATE_TRIES} updates (another writer keeps writing it); it was left as the other writer wrote it`,
        );
      }
    }
  }

  /** The raw text of a kv row; undefined when absent. */
  private readKv(key: string): string | undefined {
    const { rows } = this.db
      .sync()
      .query(`SELECT value FROM ${this.db.table('ledger_kv')} WHERE agent_id = $1 AND key = $2`, [
        this.agentId,
        key,
      ]);
    const value = rows[0]?.value;
    return typeof value === 'string' ? value : undefined;
  }

  setKv(key: string, value: JsonValue): void {
    this.db.sync().query(
      `INSERT INTO ${this.db.table('ledger_kv')} (agent_id, key, value) VALUES ($1, $2, $3)
       ON CONFLICT (agent_id, key) DO UPDATE SET value = EXCLUDED.value`,
      [this.agentId, key, JSON.stringify(value)],
    );
  }

  close(): void {
    // The connection is the worker's, shared by every agent: closed with the database.
  }
}
