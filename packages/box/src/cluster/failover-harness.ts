/**
 * The failover tests' cluster (tests only): one schema and master key of the test's own over the real
 * PostgreSQL and Ceph RGW, an observing worker in the test's process that accepts and serves and runs
 * no turn (the rows are read through it), and worker processes that run turns and are SIGKILLed by
 * the test. Everything it made is removed by `close` (the schema and pg-boss's, the folders, the
 * processes). `explain` says where an agent stands, for a wait that timed out: its turn jobs, its
 * lease, its inbox and ledger, and what each worker printed.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { agentPaths } from '../stores/files/layout.ts';
import { startAcceptingWorker, WorkerProcesses, type WorkerProcess } from '../testing/cluster-children.ts';
import { ledgerRows, transcriptRows } from '../testing/cluster-rows.ts';
import type { TestServices } from '../testing/services.ts';
import { until } from '../testing/processes.ts';
import type { ClusterWorker } from './worker.ts';

export interface FailoverCluster {
  schema: string;
  /** The worker in the test's process: it accepts inputs and serves, and runs no turn. */
  observer: ClusterWorker;
  /** The observer's data dir. */
  observerDir: string;
  /** A new folder under the cluster's temp root. */
  dir(name: string): Promise<string>;
  /** A worker process that runs turns (with its own gateway on loopback when `gateway`). */
  startWorker(name: string, options?: { gateway?: boolean }): Promise<WorkerProcess>;
  /** Waits for `check`; a timeout's error says where `agentId` stands (`explain`). */
  until(check: () => Promise<boolean> | boolean, what: string, ms: number, agentId: string): Promise<void>;
  explain(agentId: string): Promise<string>;
  close(): Promise<void>;
}

export function alive(worker: WorkerProcess): boolean {
  return worker.child.exitCode === null && worker.child.signalCode === null;
}

export async function startFailoverCluster(
  services: Omit<TestServices, 'release'>,
  name: string,
): Promise<FailoverCluster> {
  const { databaseUrl, objectStoreUrl, credentials } = services;
  const schema = `test_${randomBytes(6).toString('hex')}`;
  const key = randomBytes(32);
  const root = await mkdtemp(path.join(os.tmpdir(), `sendbox-${name}-`));
  const dir = (label: string) => mkdtemp(path.join(root, `${label}-`));
  const processes = new WorkerProcesses();
  const workers: WorkerProcess[] = [];
  const observerDir = await dir('observer');
  let observer: ClusterWorker;
  try {
    observer = await startAcceptingWorker({
      databaseUrl,
      objectStoreUrl,
      credentials,
      schema,
      masterKey: key,
      dataDir: observerDir,
    });
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw error;
  }
  const explain = async (agentId: string): Promise<string> => {
    const rows = async (sql: string) =>
      JSON.stringify(
        (await observer.db.pool.query(sql, [agentId]).catch((e: Error) => ({ rows: e.message }))).rows,
      );
    const lines = [
      `where agent ${agentId} stands (${new Date().toISOString()}):`,
      `turn jobs: ${await rows(
        `SELECT id, state, retry_count, created_on, started_on, completed_on, start_after, heartbeat_on, output
         FROM "${schema}_jobs".job WHERE singleton_key = $1 ORDER BY created_on`,
      )}`,
      `lease: ${await rows(`SELECT owner, epoch, expires_at, now() AS now FROM "${schema}".leases WHERE agent_id = $1`)}`,
      `inbox: ${await rows(`SELECT seq, nonce, state, turn, detail FROM "${schema}".inbox WHERE agent_id = $1 ORDER BY seq`)}`,
      `ledger: ${JSON.stringify((await ledgerRows(observer.db, agentId)).map((row) => [row.id, row.epoch]))}`,
      // What its tools answered last (an error of a shell call shows here).
      `transcript, its end: ${(await transcriptRows(observer.db, agentId))
        .map((row) => row.text)
        .join('')
        .slice(-4000)}`,
    ];
    for (const worker of workers) {
      const log = path.join(agentPaths(worker.dataDir, agentId).sandbox, 'log.txt');
      lines.push(
        `--- ${worker.name} (${alive(worker) ? 'running' : 'dead'}), log.txt: ${
          existsSync(log) ? JSON.stringify(readFileSync(log, 'utf8')) : 'none'
        }`,
        worker.output(),
      );
    }
    return lines.join('\n');
  };
  return {
    schema,
    observer,
    observerDir,
    dir,
    async startWorker(label, options = {}) {
      const worker = await processes.start({
        databaseUrl,
        objectStoreUrl,
        credentials,
        schema,
        keyHex: key.toString('hex'),
        dataDir: await dir(label),
        name: label,
        ...options,
      });
      workers.push(worker);
      return worker;
    },
    async until(check, what, ms, agentId) {
      await until(check, what, ms).catch(async (error: unknown) => {
        throw new Error(`${(error as Error).message}\n${await explain(agentId)}`);
      });
    },
    explain,
    async close() {
      // A killed worker's confined commands die with it (bubblewrap's --die-with-parent).
      processes.stopAll();
      await observer.db.pool.query(`DROP SCHEMA IF EXISTS "${schema}_jobs" CASCADE`).catch(() => undefined);
      await observer.db.pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
      await observer.close().catch(() => undefined);
      await rm(root, { recursive: true, force: true });
    },
  };
}
