/**
 * One cluster test's set-up on the real services (useServices): what it makes is removed after it,
 * newest first, whatever failed (temp folders, a schema of its own with pg-boss's beside it, the
 * in-process workers over it). Registered as the file's `afterEach`; call `useClusterKit` once, in the
 * describe block (or at the top of the file).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import { startClusterWorker, type ClusterWorker, type ClusterWorkerOptions } from '../cluster/worker.ts';
import { agentFiles, boxAgentFolders } from '../gateway/files.ts';
import type { RunningGateway } from '../gateway/server.ts';
import { makeWebRoot, startGatewayOn } from '../gateway/test-support.ts';
import { s3ClientFor } from '../stores/postgres/attachments.ts';
import { openTestSchema } from '../stores/postgres/backend.ts';
import { parseObjectStoreUrl } from '../stores/postgres/object-store-url.ts';
import { removeObjects } from './bucket.ts';
import type { Database } from '../stores/postgres/database.ts';
import type { TestServices } from './services.ts';
import {
  startAcceptingWorker,
  WorkerProcesses,
  type WorkerProcess,
  type WorkerProcessConfig,
} from './cluster-children.ts';

/**
 * A cluster of the test's own on the real services: a schema (dropped after the test) and a master
 * key, and what its tests start on them, all stopped after the test.
 */
export interface TestCluster {
  db: Database;
  schema: string;
  masterKey: Buffer;
  /**
   * The gateway a client talks to: an in-process worker that accepts inputs and runs no turn
   * (cluster-children.ts), served over HTTP on loopback as `sendbox serve` serves it (the cluster's
   * token and session key, the agents' files and uploads).
   */
  acceptingGateway(
    options?: Pick<ClusterWorkerOptions, 'mcp'> & { name?: string },
  ): Promise<{ worker: ClusterWorker; http: RunningGateway; dataDir: string }>;
  /** A worker process that runs turns (its own gateway with `gateway: true`), SIGKILLed after the test. */
  workerProcess(name: string, options?: Pick<WorkerProcessConfig, 'gateway' | 'env'>): Promise<WorkerProcess>;
}

export interface ClusterKit {
  /** Runs `cleanup` after the test, before what was deferred earlier. */
  defer(cleanup: () => Promise<unknown> | void): void;
  /** Runs `cleanup` after the test once everything else is cleaned up (workers closed). */
  deferLast(cleanup: () => Promise<unknown> | void): void;
  /** A new temp folder, removed after the test. */
  tempDir(name: string): Promise<string>;
  /** A schema of the test's own, opened (its tables made), dropped after the test with pg-boss's. */
  freshSchema(): Promise<{ db: Database; schema: string }>;
  /** A schema name of the test's own for workers to make, dropped after the test with pg-boss's. */
  schemaName(): string;
  /**
   * An in-process worker of the cluster in `schema` on a new data dir (`dataDirName`), closed and its
   * folder removed after the test; `close` does it earlier (once).
   */
  startWorker(
    options: Omit<ClusterWorkerOptions, 'databaseUrl' | 'objectStoreUrl' | 'credentials' | 'dataDir'> & {
      dataDirName: string;
      /** Fills the new data dir before the worker starts (a single box's files it takes in). */
      prepare?: (dataDir: string) => Promise<void>;
    },
  ): Promise<{ worker: ClusterWorker; dataDir: string; close(): Promise<void> }>;
  /** Removes the agent's objects from the bucket after the test, once its workers are closed. */
  removeAgentObjects(agentId: string): void;
  /** A cluster of the test's own: a fresh schema, a master key, its gateway and worker processes. */
  cluster(): Promise<TestCluster>;
}

export function useClusterKit(services: () => TestServices): ClusterKit {
  const cleanups: Array<() => Promise<unknown> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse())
      await Promise.resolve(cleanup()).catch(() => undefined);
  });
  const kit: ClusterKit = {
    defer: (cleanup) => void cleanups.push(cleanup),
    deferLast: (cleanup) => void cleanups.unshift(cleanup),
    async tempDir(name) {
      const dir = await mkdtemp(path.join(os.tmpdir(), `sendbox-${name}-`));
      kit.defer(() => rm(dir, { recursive: true, force: true }));
      return dir;
    },
    async freshSchema() {
      const fresh = await openTestSchema(services().databaseUrl);
      kit.defer(() => fresh.drop());
      return fresh;
    },
    schemaName() {
      const schema = `test_${randomBytes(6).toString('hex')}`;
      kit.defer(async () => {
        const { default: pg } = await import('pg');
        const client = new pg.Client({ connectionString: services().databaseUrl });
        await client.connect();
        try {
          await client.query(`DROP SCHEMA IF EXISTS "${schema}_jobs" CASCADE`);
          await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        } finally {
          await client.end();
        }
      });
      return schema;
    },
    async startWorker({ dataDirName, prepare, ...options }) {
      const { databaseUrl, objectStoreUrl, credentials } = services();
      const dataDir = await mkdtemp(path.join(os.tmpdir(), `sendbox-${dataDirName}-`));
      try {
        await prepare?.(dataDir);
      } catch (error) {
        await rm(dataDir, { recursive: true, force: true });
        throw error;
      }
      const worker = await startClusterWorker({
        databaseUrl,
        objectStoreUrl,
        credentials,
        dataDir,
        ...options,
      });
      let closed: Promise<void> | undefined;
      const close = () =>
        (closed ??= (async () => {
          await worker.close();
          await rm(dataDir, { recursive: true, force: true });
        })());
      kit.defer(close);
      return { worker, dataDir, close };
    },
    removeAgentObjects(agentId) {
      const location = parseObjectStoreUrl(services().objectStoreUrl);
      kit.deferLast(async () => {
        const s3 = s3ClientFor(location, services().credentials);
        try {
          await removeObjects(s3, location.bucket, `${agentId}/`);
        } finally {
          s3.destroy();
        }
      });
    },
    async cluster() {
      const { databaseUrl, objectStoreUrl, credentials } = services();
      const { db, schema } = await kit.freshSchema();
      const masterKey = randomBytes(32);
      const processes = new WorkerProcesses();
      kit.defer(() => processes.stopAll());
      return {
        db,
        schema,
        masterKey,
        async acceptingGateway({ name = 'gateway', ...options } = {}) {
          const dataDir = await kit.tempDir(name);
          const worker = await startAcceptingWorker({
            databaseUrl,
            objectStoreUrl,
            credentials,
            schema,
            masterKey,
            dataDir,
            ...options,
          });
          kit.defer(() => worker.close());
          const webRoot = await makeWebRoot();
          kit.defer(() => rm(webRoot, { recursive: true, force: true }));
          const http = await startGatewayOn(worker.host, dataDir, {
            webRoot,
            files: agentFiles(worker.host, boxAgentFolders(dataDir)),
            shared: worker.shared,
            sessionFiles: worker.sessionFiles,
          });
          kit.defer(() => http.close());
          return { worker, http, dataDir };
        },
        async workerProcess(name, options = {}) {
          return processes.start({
            databaseUrl,
            objectStoreUrl,
            credentials,
            schema,
            keyHex: masterKey.toString('hex'),
            dataDir: await kit.tempDir(name),
            name,
            ...options,
          });
        },
      };
    },
  };
  return kit;
}

/** The ids of the agent's ledger entries, in order (what turns and gateways wrote so far). */
export async function ledgerIds(db: Database, agentId: string): Promise<string[]> {
  const { rows } = await db.pool.query<{ id: string }>(
    `SELECT id FROM ${db.table('ledger')} WHERE agent_id = $1 ORDER BY seq`,
    [agentId],
  );
  return rows.map((row) => row.id);
}
