/** An agent's UI ledger (store.db's entries): what a ledger store holds. */
import type { LedgerEntry } from '@sendbox/protocol';

/** A ledger entry as stored: always carries its `seq`. */
export type SequencedEntry = LedgerEntry & { seq: number };
