/**
 * Cluster tests' worker processes (cluster-worker-child.ts) and the rows they write, read straight
 * from PostgreSQL. Never used outside tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Database } from '../stores/postgres/database.ts';
import { until } from './processes.ts';

const CHILD = fileURLToPath(new URL('./cluster-worker-child.ts', import.meta.url));

export interface WorkerCluster {
  databaseUrl: string;
  objectStoreUrl: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  schema: string;
  key: Buffer;
}

export interface WorkerProcess {
  name: string;
  child: ChildProcess;
  dataDir: string;
  /** Its gateway, when started with one. */
  url?: string;
  token?: string;
  output(): string;
}

/** Starts a worker process on a fresh data dir under `root`; resolves once it takes jobs. */
export async function startWorkerProcess(
  cluster: WorkerCluster,
  root: string,
  name: string,
  options: { gateway?: boolean } = {},
): Promise<WorkerProcess> {
  const dataDir = await mkdtemp(path.join(root, `${name}-`));
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      CHILD,
      JSON.stringify({
        databaseUrl: cluster.databaseUrl,
        objectStoreUrl: cluster.objectStoreUrl,
        credentials: cluster.credentials,
        schema: cluster.schema,
        keyHex: cluster.key.toString('hex'),
        dataDir,
        name,
        gateway: options.gateway === true,
      }),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await until(() => /^ready/m.test(output) || child.exitCode !== null, `${name} to start`, 60_000);
  const ready = /^ready(?: (\S+) (\S+))?$/m.exec(output);
  if (!ready) throw new Error(`${name} did not start:\n${output}`);
  return {
    name,
    child,
    dataDir,
    ...(ready[1] ? { url: ready[1], token: ready[2]! } : {}),
    output: () => output,
  };
}

export interface LedgerRow {
  seq: number;
  id: string;
  entry: Record<string, unknown>;
  epoch: number | null;
}

export interface TranscriptRow {
  seq: number;
  text: string;
  epoch: number | null;
}

/** The agent's ledger rows in seq order, with the lease epoch each was written under. */
export async function ledgerRows(db: Database, agentId: string): Promise<LedgerRow[]> {
  const result = await db.pool.query<{ seq: string; id: string; entry: string; epoch: string | null }>(
    `SELECT seq, id, entry, epoch FROM ${db.table('ledger')} WHERE agent_id = $1 ORDER BY seq`,
    [agentId],
  );
  return result.rows.map((row) => ({
    seq: Number(row.seq),
    id: row.id,
    entry: JSON.parse(row.entry) as Record<string, unknown>,
    epoch: row.epoch === null ? null : Number(row.epoch),
  }));
}

/** The agent's transcript rows (each the exact JSONL lines of one append) in seq order. */
export async function transcriptRows(db: Database, agentId: string): Promise<TranscriptRow[]> {
  const result = await db.pool.query<{ seq: string; text: string; epoch: string | null }>(
    `SELECT seq, text, epoch FROM ${db.table('transcript')} WHERE agent_id = $1 ORDER BY seq`,
    [agentId],
  );
  return result.rows.map((row) => ({
    seq: Number(row.seq),
    text: row.text,
    epoch: row.epoch === null ? null : Number(row.epoch),
  }));
}

/** A temp folder for a test's data dirs. */
export function clusterTempRoot(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), 'sendbox-cluster-'));
}
