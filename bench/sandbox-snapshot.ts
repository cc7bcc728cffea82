/**
 * Sandbox snapshots (issue 25 §4) on a real PostgreSQL and Ceph RGW: a sandbox of 1,000 files in 20
 * folders, 50 MB of random bytes (50,000 each). Measured: the first snapshot (every file hashed and
 * sent), a snapshot with nothing changed, an incremental one (one file changed), the restore on a
 * worker that never held the agent (every file fetched), and an incremental restore (one file
 * changed since that worker's copy), and the prune of the older snapshots. Everything the run put in the bucket is removed at the end.
 *
 * Uses SENDBOX_TEST_DATABASE_URL / SENDBOX_TEST_OBJECT_STORE_URL when set (.ci/run's services),
 * else starts PostgreSQL and Ceph RGW itself (packages/box/src/testing/services.ts).
 *
 *   npx tsx bench/sandbox-snapshot.ts [rounds=5]
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SandboxSnapshots } from '../packages/box/src/cluster/sandbox/sandbox-snapshots.ts';
import { SnapshotStore } from '../packages/box/src/cluster/sandbox/snapshot-store.ts';
import { s3ClientFor } from '../packages/box/src/stores/postgres/attachments.ts';
import { openDatabase } from '../packages/box/src/stores/postgres/database.ts';
import { Leases } from '../packages/box/src/stores/postgres/leases.ts';
import { parseObjectStoreUrl } from '../packages/box/src/stores/postgres/object-store-url.ts';
import { removeObjects } from '../packages/box/src/testing/bucket.ts';
import { testServices } from '../packages/box/src/testing/services.ts';

const ROUNDS = Number(process.argv[2] ?? 5);
const FILES = 1000;
const FOLDERS = 20;
const FILE_BYTES = 50_000;

const services = await testServices();
const schema = `bench_${randomBytes(4).toString('hex')}`;
const db = await openDatabase(services.databaseUrl, { schema, max: 4 });
const location = parseObjectStoreUrl(services.objectStoreUrl);
const s3 = s3ClientFor(location, services.credentials);
const store = new SnapshotStore(s3, location.bucket, db);
const root = await mkdtemp(path.join(os.tmpdir(), 'sendbox-bench-snapshots-'));
const agentId = randomUUID();
const sandboxOf = (worker: string) => path.join(root, worker, 'sandbox');
const worker = (name: string) => ({
  snapshots: new SandboxSnapshots(store, () => sandboxOf(name)),
  leases: new Leases(db, name),
});

const fileOf = (i: number) => path.join(`dir-${i % FOLDERS}`, `file-${i}.bin`);
const time = async <T>(run: () => Promise<T>): Promise<[number, T]> => {
  const started = performance.now();
  const result = await run();
  return [performance.now() - started, result];
};
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const ms = (n: number) => `${n.toFixed(0)} ms`;

try {
  const a = worker('a');
  for (let folder = 0; folder < FOLDERS; folder++)
    await mkdir(path.join(sandboxOf('a'), `dir-${folder}`), { recursive: true });
  for (let i = 0; i < FILES; i++)
    await writeFile(path.join(sandboxOf('a'), fileOf(i)), randomBytes(FILE_BYTES));
  const lease = (await a.leases.claim(agentId))!;

  const [first, firstFigures] = await time(() => a.snapshots.take(agentId, lease.epoch));
  console.log(
    `first snapshot: ${ms(first)} (${firstFigures.files} files, ${(firstFigures.bytes / 1e6).toFixed(1)} MB; hashed ${firstFigures.hashed}, sent ${firstFigures.uploaded})`,
  );
  const unchanged: number[] = [];
  const incremental: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    unchanged.push((await time(() => a.snapshots.take(agentId, lease.epoch)))[0]);
    await writeFile(path.join(sandboxOf('a'), fileOf(round * 37)), randomBytes(FILE_BYTES));
    const [took, figures] = await time(() => a.snapshots.take(agentId, lease.epoch));
    if (figures.uploaded !== 1 || figures.hashed !== 1)
      throw new Error(`round ${round}: ${JSON.stringify(figures)}`);
    incremental.push(took);
  }
  console.log(
    `unchanged snapshot: median ${ms(median(unchanged))} of ${ROUNDS} (${unchanged.map(ms).join(', ')})`,
  );
  console.log(
    `incremental snapshot (1 file changed, 1 hashed, 1 sent): median ${ms(median(incremental))} of ${ROUNDS} (${incremental.map(ms).join(', ')})`,
  );
  // 1 + ROUNDS snapshots published: all but the latest 3, and the blobs only those used, go.
  const [pruning, pruned] = await time(() => a.snapshots.prune(agentId, lease.epoch));
  console.log(
    `prune: ${ms(pruning)} (deleted ${pruned.deletedManifests} manifests and ${pruned.deletedBlobs} blobs of ${FILES + ROUNDS} blobs)`,
  );
  await a.leases.release(lease);

  const b = worker('b');
  const bLease = (await b.leases.claim(agentId))!;
  const [restore, restored] = await time(() => b.snapshots.restore(agentId));
  console.log(
    `restore on a new worker: ${ms(restore)} (fetched ${restored.fetched}, ${(restored.fetchedBytes / 1e6).toFixed(1)} MB)`,
  );
  await b.leases.release(bLease);

  // Back to A after B changed one file: A fetches that file alone.
  const restores: number[] = [];
  let holder = b;
  let other = a;
  let otherName = 'a';
  for (let round = 0; round < ROUNDS; round++) {
    const held = (await holder.leases.claim(agentId))!;
    const holderName = otherName === 'a' ? 'b' : 'a';
    await writeFile(path.join(sandboxOf(holderName), fileOf(round * 53 + 1)), randomBytes(FILE_BYTES));
    await holder.snapshots.take(agentId, held.epoch);
    await holder.leases.release(held);
    const next = (await other.leases.claim(agentId))!;
    const [took, figures] = await time(() => other.snapshots.restore(agentId));
    if (figures.fetched !== 1) throw new Error(`restore round ${round}: ${JSON.stringify(figures)}`);
    restores.push(took);
    await other.leases.release(next);
    [holder, other] = [other, holder];
    otherName = holderName;
  }
  console.log(
    `incremental restore (1 file changed elsewhere, 1 fetched): median ${ms(median(restores))} of ${ROUNDS} (${restores.map(ms).join(', ')})`,
  );
} finally {
  const removed = await removeObjects(s3, location.bucket, `${agentId}/`);
  console.log(`(removed ${removed} objects from the bucket)`);
  await db.pool.query(`DROP SCHEMA ${db.schema} CASCADE`);
  await db.close();
  s3.destroy();
  await rm(root, { recursive: true, force: true });
  await services.release();
}
