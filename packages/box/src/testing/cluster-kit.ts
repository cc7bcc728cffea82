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
import { openTestSchema } from '../stores/postgres/backend.ts';
import type { Database } from '../stores/postgres/database.ts';
import type { TestServices } from './services.ts';

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
    },
  ): Promise<{ worker: ClusterWorker; dataDir: string; close(): Promise<void> }>;
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
    async startWorker({ dataDirName, ...options }) {
      const { databaseUrl, objectStoreUrl, credentials } = services();
      const dataDir = await mkdtemp(path.join(os.tmpdir(), `sendbox-${dataDirName}-`));
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
  };
  return kit;
}
