export * from './stored.ts';
export * from './ledger.ts';
