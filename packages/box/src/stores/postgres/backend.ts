/**
 * For the cluster backend's contract runs: the real services (testing/services.ts), and per test a
 * new schema, a new agent id (its own key prefix in the bucket) and a temp folder for the worker's
 * local copies, all removed after it (the objects under the prefix too).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { S3Client } from '@aws-sdk/client-s3';
import { removeObjects } from '../../testing/bucket.ts';
import { testServices, type TestServices } from '../../testing/services.ts';
import type { Backend, BackendHarness } from '../contract.ts';
import { openDatabase, type Database } from './database.ts';
import { s3ClientFor } from './attachments.ts';
import { parseObjectStoreUrl } from './object-store-url.ts';
import { startTurnQueue } from './turn-queue.ts';
import type { PgBoss } from 'pg-boss';

export interface ClusterHome {
  db: Database;
  s3: S3Client;
  bucket: string;
  agentId: string;
  /** A folder for a worker's local copies. */
  dir: string;
  /** The turn queue in this test's schema (started on first use, stopped after the test). */
  turnQueue(): Promise<PgBoss>;
}

/** In a test file: the services for its tests (started here when the environment has none). */
export function useServices(): () => TestServices {
  let services: TestServices | undefined;
  beforeAll(async () => {
    services = await testServices();
  }, 180_000);
  afterAll(async () => {
    await services?.release();
  }, 60_000);
  return () => {
    if (!services) throw new Error('the services did not start (see the beforeAll error)');
    return services;
  };
}

/** A schema of a test's own (created by opening it): its database, its name, and how to drop it with pg-boss's beside it. */
export async function openTestSchema(
  databaseUrl: string,
): Promise<{ db: Database; schema: string; drop(): Promise<void> }> {
  const schema = `test_${randomBytes(6).toString('hex')}`;
  const db = await openDatabase(databaseUrl, { schema, max: 4 });
  return {
    db,
    schema,
    async drop() {
      await db.pool.query(`DROP SCHEMA IF EXISTS "${schema}_jobs" CASCADE`);
      await db.pool.query(`DROP SCHEMA IF EXISTS ${db.schema} CASCADE`);
      await db.close();
    },
  };
}

export function clusterBackend<S>(
  services: () => TestServices,
  open: (home: ClusterHome) => BackendHarness<S>,
): Backend<S> {
  let home: ClusterHome | undefined;
  let stopBoss = (): Promise<void> => Promise.resolve();
  return {
    async setUp() {
      const { databaseUrl, objectStoreUrl, credentials } = services();
      const schema = `test_${randomBytes(6).toString('hex')}`;
      const location = parseObjectStoreUrl(objectStoreUrl);
      let boss: Promise<PgBoss> | undefined;
      stopBoss = async () => {
        const started = await boss?.catch(() => undefined);
        await started?.stop({ graceful: false, close: true });
      };
      home = {
        turnQueue: () => (boss ??= startTurnQueue(databaseUrl, schema)),
        db: await openDatabase(databaseUrl, { schema, max: 4 }),
        s3: s3ClientFor(location, credentials),
        bucket: location.bucket,
        agentId: randomUUID(),
        dir: await mkdtemp(path.join(os.tmpdir(), 'sendbox-cluster-')),
      };
      return open(home);
    },
    async tearDown() {
      if (!home) return;
      await stopBoss();
      await home.db.pool.query(`DROP SCHEMA IF EXISTS ${home.db.schema.slice(0, -1)}_jobs" CASCADE`);
      await home.db.pool.query(`DROP SCHEMA ${home.db.schema} CASCADE`);
      await home.db.close();
      await removeObjects(home.s3, home.bucket, `${home.agentId}/`).catch(() => undefined);
      home.s3.destroy();
      await rm(home.dir, { recursive: true, force: true });
      home = undefined;
    },
  };
}
