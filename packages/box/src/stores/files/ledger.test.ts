import path from 'node:path';
import { ledgerContract } from '../ledger.contract.ts';
import { filesBackend } from './backend.ts';
import { openFileLedger } from './ledger.ts';
import { StoreLock } from './store-lock.ts';

ledgerContract(
  'files',
  filesBackend((home) => {
    const file = path.join(home, 'store.db');
    return { open: () => openFileLedger(file, new StoreLock(file)), close: (ledger) => ledger.close() };
  }),
);
