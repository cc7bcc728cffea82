/** The files backend's ledger: store.db through txcript's ledger writer, its writes made with the store lock released. */
import { openLedgerForWrite } from '@sendbox/txcript';
import type { LedgerStore } from '../ledger.ts';
import type { StoreLock } from './store-lock.ts';

export function openFileLedger(storeDb: string, lock: StoreLock): LedgerStore {
  return lock.guard(openLedgerForWrite(storeDb));
}
