/**
 * An agent's UI ledger: the entries the user's conversation is made of, append-only, each batch
 * committed whole (the commit point of every input and send, docs/runtime.md "Invariants"), and a
 * small key-value table (`metadata`, `unreadState`). The files backend is the agent's store.db
 * through txcript's ledger writer (stores/files/ledger.ts).
 */
import type { LedgerEntry } from '@sendbox/protocol';
import { LedgerError, type JsonValue, type LedgerRead } from '@sendbox/txcript';

/** A ledger entry as stored: always carries its `seq`. */
export type SequencedEntry = LedgerEntry & { seq: number };

export interface LedgerStore {
  /** Validates and appends entries in one transaction, all or nothing; returns their seqs, ascending. */
  appendEntries(entries: readonly LedgerEntry[]): number[];
  /** Every valid entry by seq, and a warning for each row a reader skips. */
  readLedgerEntries(): LedgerRead;
  /** Entries with seq greater than `seq`, by seq. */
  readEntriesAfter(seq: number): LedgerRead;
  /** Rows held, those readers skip included (cheap: compared to learn whether another writer appended). */
  countEntries(): number;
  getKv(key: string): JsonValue | undefined;
  setKv(key: string, value: JsonValue): void;
  /**
   * Changes a kv value with no other writer's change lost: `update` gets the value as stored and
   * its result is written only if nobody wrote meanwhile (else it runs again on the newer value).
   * Returns the value written.
   */
  updateKv(key: string, update: (current: JsonValue | undefined) => JsonValue): JsonValue;
  close(): void;
}

/**
 * Whether a failed append failed because one of its ids is in the ledger already (ids are unique):
 * another writer of the agent appended it first. The files backend's SQLite and PostgreSQL both
 * refuse it through txcript's LedgerError, whatever wraps it (StoreWriteError).
 */
export function isIdTaken(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (!(cause instanceof LedgerError)) continue;
    return cause.code === UNIQUE_VIOLATION || cause.code?.startsWith('SQLITE_CONSTRAINT') === true;
  }
  return false;
}

/** PostgreSQL's SQLSTATE for a unique violation (the ledger's `(agent_id, id)`). */
export const UNIQUE_VIOLATION = '23505';
