/**
 * The ledger reader worker's entry (see ledger-reads.ts): reads the ledgers
 * it claims and reports their outcomes, then ends. bin/run-entry.mjs bundles
 * it next to the CLI bundle as `txcript-ledger-worker.mjs`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { readLedgerOutcome } from './ledger-facts.ts';
import { serveLedgerReads } from './ledger-reads.ts';

if (parentPort === null) throw new Error('ledger-worker.ts runs as a worker thread (see ledger-reads.ts)');
serveLedgerReads(parentPort, workerData as Int32Array, readLedgerOutcome);
