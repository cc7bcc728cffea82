/**
 * Sandbox snapshots against a real PostgreSQL and Ceph RGW: two workers (two sandbox folders, one
 * bucket), the agent's lease moving from one to the other. What one snapshots the other restores
 * whole (bytes, modes, links, empty folders); a second snapshot sends only what changed; a manifest
 * that would write outside the sandbox is refused before anything is written; a superseded worker's
 * snapshot is refused.
 */
import { randomBytes } from 'node:crypto';
import { chmod, chown, lstat, mkdir, readFile, readlink, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import type { SequencedEntry } from '../../stores/ledger.ts';
import { describe, expect, it } from 'vitest';
import { useBackend } from '../../stores/contract.ts';
import { clusterBackend, useServices, type ClusterHome } from '../../stores/postgres/backend.ts';
import { Leases, SupersededError } from '../../stores/postgres/leases.ts';
import { MANIFEST_FORMAT, ManifestError, sha256Hex } from './manifest.ts';
import { readSandboxTree, FileHashes } from './sandbox-tree.ts';
import { SandboxSnapshots } from './sandbox-snapshots.ts';
import { SnapshotStore } from './snapshot-store.ts';
import { until } from '../../testing/processes.ts';

const services = useServices();

interface Worker {
  name: string;
  sandbox: string;
  snapshots: SandboxSnapshots;
  leases: Leases;
}

/** The PutObject keys the S3 client sent, in order. */
function countPuts(home: ClusterHome): string[] {
  const keys: string[] = [];
  home.s3.middlewareStack.add(
    (next, context) => (args) => {
      if (context.commandName === 'PutObjectCommand') keys.push((args.input as { Key: string }).Key);
      return next(args);
    },
    { step: 'initialize', name: `count-puts-${randomBytes(4).toString('hex')}` },
  );
  return keys;
}

describe('sandbox snapshots across workers', () => {
  const open = useBackend(
    clusterBackend(services, (home) => {
      let workers = 0;
      return {
        open: () => {
          const name = `worker-${++workers}`;
          const sandbox = path.join(home.dir, name, 'sandbox');
          const store = new SnapshotStore(home.s3, home.bucket, home.db);
          const worker: Worker = {
            name,
            sandbox,
            snapshots: new SandboxSnapshots(store, () => sandbox),
            leases: new Leases(home.db, name),
          };
          return { home, worker, store };
        },
        close: () => undefined,
      };
    }),
  );

  /** What a folder holds, as a snapshot would name it (no link followed). */
  async function treeOf(dir: string) {
    return (await readSandboxTree(dir, new FileHashes())).entries;
  }

  it('restores on another worker exactly what one snapshotted: bytes, modes, mtimes, links and empty folders', async () => {
    const { home, worker: a } = await open();
    const { worker: b } = await open();
    const agentId = home.agentId;
    await mkdir(path.join(a.sandbox, 'src', 'lib'), { recursive: true });
    await mkdir(path.join(a.sandbox, 'empty', 'deeper'), { recursive: true });
    await writeFile(path.join(a.sandbox, 'notes.txt'), 'written in turn 1\n');
    await writeFile(path.join(a.sandbox, 'src', 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
    await writeFile(path.join(a.sandbox, 'src', 'lib', 'big.bin'), randomBytes(9 << 20)); // streamed, not buffered
    await chmod(path.join(a.sandbox, 'empty'), 0o750);
    await symlink('src/run.sh', path.join(a.sandbox, 'run'));
    await symlink('/etc/hostname', path.join(a.sandbox, 'outside-link'));
    const lease = (await a.leases.claim(agentId))!;
    const taken = await a.snapshots.take(agentId, lease.epoch);
    expect(taken).toMatchObject({ files: 3, uploaded: 3, unchanged: false });
    await a.leases.release(lease);

    // B has stale files of its own: what the snapshot lacks goes, what it holds comes.
    await mkdir(path.join(b.sandbox, 'src'), { recursive: true });
    await writeFile(path.join(b.sandbox, 'stale.txt'), 'from an older stint');
    await writeFile(path.join(b.sandbox, 'src', 'run.sh'), 'old contents');
    await symlink('elsewhere', path.join(b.sandbox, 'notes.txt'));
    const bLease = (await b.leases.claim(agentId))!;
    const restored = await b.snapshots.restore(agentId);
    expect(restored).toMatchObject({ manifest: taken.manifest, fetched: 3, current: false });
    expect(await treeOf(b.sandbox)).toEqual(await treeOf(a.sandbox));
    expect((await stat(path.join(b.sandbox, 'src', 'run.sh'))).mode & 0o777).toBe(0o755);
    expect((await stat(path.join(b.sandbox, 'empty'))).mode & 0o777).toBe(0o750);
    expect(await readlink(path.join(b.sandbox, 'outside-link'))).toBe('/etc/hostname');
    expect(await readFile(path.join(b.sandbox, 'notes.txt'), 'utf8')).toBe('written in turn 1\n');
    await expect(lstat(path.join(b.sandbox, 'stale.txt'))).rejects.toThrow(/ENOENT/);
    // Restoring again finds the folder current and touches nothing; a snapshot now reads and sends nothing.
    expect(await b.snapshots.restore(agentId)).toMatchObject({ current: true, fetched: 0 });
    expect(await b.snapshots.take(agentId, bLease.epoch)).toMatchObject({
      unchanged: true,
      hashed: 0,
      uploaded: 0,
    });
  }, 60_000);

  it('places no upload without waiting for the snapshot or placement in progress when none is new', async () => {
    const { worker } = await open();
    await mkdir(worker.sandbox, { recursive: true });
    const upload = {
      seq: 1,
      id: 'u1',
      kind: 'user-attachment',
      file_name: 'a.txt',
      sandbox_path: 'uploads/a.txt',
      sha256: 'a'.repeat(64),
    } as unknown as SequencedEntry;
    const message = { seq: 2, id: 't0u', kind: 'message', role: 'user' } as unknown as SequencedEntry;
    // A placement that cannot finish until told (its copy does not come) holds the agent's queue.
    let release: (copy: string | null) => void = () => undefined;
    let heldResult: { failed: unknown[] } | undefined;
    const asked = new Promise<void>((asking) => {
      void worker.snapshots
        .placeUploads('agent', [upload], () => {
          asking();
          return new Promise<string | null>((resolve) => (release = resolve));
        })
        .then((placement) => (heldResult = placement));
    });
    await asked;
    // A turn whose entries hold no upload after the last placed one is not held behind it.
    const none = await worker.snapshots.placeUploads('agent', [message], () => Promise.resolve(null));
    expect(none).toEqual({ placed: [], present: [], failed: [] });
    expect(heldResult).toBeUndefined();
    release(null);
    await until(() => heldResult !== undefined, 'the held placement to end');
    expect(heldResult!.failed).toHaveLength(1);
  });

  // Owning files by another uid takes root; not as root, everything is the box's own uid anyway.
  it.runIf(process.getuid?.() === 0)(
    "gives what it restores to the sandbox folder's owner (the agent's uid, once the box prepared it)",
    async () => {
      const { home, worker: a } = await open();
      const { worker: b } = await open();
      const agentId = home.agentId;
      await mkdir(path.join(a.sandbox, 'notes'), { recursive: true });
      await writeFile(path.join(a.sandbox, 'notes', 'log.txt'), 'turn 0\n');
      await writeFile(path.join(a.sandbox, 'kept.txt'), 'same on both\n');
      await symlink('notes/log.txt', path.join(a.sandbox, 'log'));
      const lease = (await a.leases.claim(agentId))!;
      await a.snapshots.take(agentId, lease.epoch);
      await a.leases.release(lease);

      // B's host opened the agent before: its sandbox belongs to the agent's uid already.
      const agentUid = 41_234;
      await mkdir(b.sandbox, { recursive: true });
      await writeFile(path.join(b.sandbox, 'kept.txt'), 'same on both\n');
      await chown(b.sandbox, agentUid, agentUid);
      await chown(path.join(b.sandbox, 'kept.txt'), agentUid, agentUid);
      await b.leases.claim(agentId);
      expect(await b.snapshots.restore(agentId)).toMatchObject({ fetched: 1, kept: 1 });
      for (const rel of ['notes', 'notes/log.txt', 'log', 'kept.txt']) {
        const { uid, gid } = await lstat(path.join(b.sandbox, rel));
        expect([rel, uid, gid]).toEqual([rel, agentUid, agentUid]);
      }
    },
    60_000,
  );

  it('sends a file once: an unchanged sandbox sends nothing, one changed file sends one blob', async () => {
    const { home, worker: a } = await open();
    const { worker: b } = await open();
    const { worker: c } = await open();
    const agentId = home.agentId;
    const puts = countPuts(home);
    await mkdir(a.sandbox, { recursive: true });
    for (let i = 0; i < 20; i++) await writeFile(path.join(a.sandbox, `f${i}.txt`), `file ${i}\n`);
    let lease = (await a.leases.claim(agentId))!;
    expect(await a.snapshots.take(agentId, lease.epoch)).toMatchObject({ uploaded: 20, hashed: 20 });
    const blobPuts = () => puts.filter((key) => key.includes('/sandbox/blobs/')).length;
    expect(blobPuts()).toBe(20);

    const again = await a.snapshots.take(agentId, lease.epoch);
    expect(again).toMatchObject({ unchanged: true, uploaded: 0, hashed: 0 });
    expect(blobPuts()).toBe(20);

    await writeFile(path.join(a.sandbox, 'f7.txt'), 'changed in turn 2\n');
    const changed = await a.snapshots.take(agentId, lease.epoch);
    expect(changed).toMatchObject({ unchanged: false, uploaded: 1, hashed: 1, files: 20 });
    expect(blobPuts()).toBe(21);
    await a.leases.release(lease);

    // A worker that restored it sends nothing for the same files.
    lease = (await b.leases.claim(agentId))!;
    expect(await b.snapshots.restore(agentId)).toMatchObject({ fetched: 20 });
    await writeFile(path.join(b.sandbox, 'new.txt'), 'one more');
    expect(await b.snapshots.take(agentId, lease.epoch)).toMatchObject({ uploaded: 1, hashed: 1, files: 21 });
    expect(blobPuts()).toBe(22);
    await b.leases.release(lease);

    // Nor does a worker new to the agent holding the same bytes (it learns the last manifest's blobs).
    lease = (await c.leases.claim(agentId))!;
    await c.snapshots.restore(agentId);
    const fresh = new SandboxSnapshots(new SnapshotStore(home.s3, home.bucket, home.db), () => c.sandbox);
    await writeFile(path.join(c.sandbox, 'f7.txt'), 'changed in turn 3\n');
    expect(await fresh.take(agentId, lease.epoch)).toMatchObject({ uploaded: 1, hashed: 21 });
    expect(blobPuts()).toBe(23);
  }, 60_000);

  it('refuses a hostile manifest before writing anything: .., an absolute path, a file behind a link', async () => {
    const { home, worker: b, store } = await open();
    const agentId = home.agentId;
    const lease = (await b.leases.claim(agentId))!;
    await mkdir(b.sandbox, { recursive: true });
    await writeFile(path.join(b.sandbox, 'mine.txt'), 'the local copy');
    const payload = Buffer.from('planted by a hostile manifest');
    const sha256 = sha256Hex(payload);
    await home.s3.send(
      new PutObjectCommand({ Bucket: home.bucket, Key: store.blobKey(agentId, sha256), Body: payload }),
    );
    const file = (at: string) => ({
      path: at,
      type: 'file',
      mode: 0o644,
      size: payload.length,
      mtimeMs: 0,
      sha256,
    });
    const escapeTarget = path.join(path.dirname(b.sandbox), 'escaped.txt');
    const hostile: Array<[unknown[], RegExp]> = [
      [[file('../escaped.txt')], /"\.\." component/],
      [[{ path: 'sub', type: 'dir', mode: 0o755 }, file('sub/../../escaped.txt')], /"\.\." component/],
      [[file(escapeTarget)], /is absolute/],
      [
        [{ path: 'link', type: 'symlink', target: path.dirname(b.sandbox) }, file('link/escaped.txt')],
        /does not give as a folder/,
      ],
      [[file('twice.txt'), file('twice.txt')], /given twice/],
    ];
    for (const [entries, refusal] of hostile) {
      const text = JSON.stringify({ format: MANIFEST_FORMAT, version: 1, agentId, entries });
      const manifest = await store.putManifest(agentId, text);
      await store.publish(agentId, {
        manifest,
        epoch: lease.epoch,
        takenAt: Date.now(),
        files: 1,
        bytes: 1,
        uploadsSeq: 0,
      });
      const attempt = b.snapshots.restore(agentId);
      await expect(attempt).rejects.toBeInstanceOf(ManifestError);
      await expect(attempt).rejects.toThrow(refusal);
      await expect(lstat(escapeTarget)).rejects.toThrow(/ENOENT/);
      expect(await readFile(path.join(b.sandbox, 'mine.txt'), 'utf8')).toBe('the local copy');
      expect((await treeOf(b.sandbox)).map((entry) => entry.path)).toEqual(['mine.txt']);
    }
    // A manifest whose bytes are not the ones its name says is refused too.
    const name = sha256Hex('a manifest never stored');
    await home.s3.send(
      new PutObjectCommand({ Bucket: home.bucket, Key: store.manifestKey(agentId, name), Body: '{}' }),
    );
    await store.publish(agentId, {
      manifest: name,
      epoch: lease.epoch,
      takenAt: Date.now(),
      uploadsSeq: 0,
      files: 0,
      bytes: 0,
    });
    await expect(b.snapshots.restore(agentId)).rejects.toThrow(/changed outside the box/);
  }, 60_000);

  it("refuses a superseded worker's snapshot: the latest stays the new holder's", async () => {
    const { home, worker: a } = await open();
    const { worker: b } = await open();
    const agentId = home.agentId;
    await mkdir(a.sandbox, { recursive: true });
    await writeFile(path.join(a.sandbox, 'a.txt'), 'from a');
    const old = (await a.leases.claim(agentId))!;
    await a.snapshots.take(agentId, old.epoch);
    await home.db.pool.query(`UPDATE ${home.db.table('leases')} SET expires_at = now() WHERE agent_id = $1`, [
      agentId,
    ]);
    const taken = (await b.leases.claim(agentId))!;
    await b.snapshots.restore(agentId);
    await writeFile(path.join(b.sandbox, 'b.txt'), 'from b');
    const mine = await b.snapshots.take(agentId, taken.epoch);
    await writeFile(path.join(a.sandbox, 'late.txt'), 'written by the paused worker');
    await expect(a.snapshots.take(agentId, old.epoch)).rejects.toBeInstanceOf(SupersededError);
    const store = new SnapshotStore(home.s3, home.bucket, home.db);
    expect(await store.latest(agentId)).toMatchObject({ manifest: mine.manifest, epoch: taken.epoch });
  }, 60_000);
  /** The agent's snapshot keys in the bucket: manifests and blobs by hash. */
  async function bucketKeys(home: ClusterHome) {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await home.s3.send(
        new ListObjectsV2Command({
          Bucket: home.bucket,
          Prefix: `${home.agentId}/sandbox/`,
          ...(token ? { ContinuationToken: token } : {}),
        }),
      );
      keys.push(...(page.Contents ?? []).map((object) => object.Key!));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    const under = (folder: string) =>
      keys.filter((key) => key.includes(`/sandbox/${folder}/`)).map((key) => path.basename(key, '.json'));
    return { manifests: under('manifests').sort(), blobs: under('blobs').sort() };
  }

  it('prunes to the latest three snapshots and their blobs; a file back at old bytes is sent again', async () => {
    const { home, worker: a } = await open();
    const { worker: b } = await open();
    const agentId = home.agentId;
    await mkdir(a.sandbox, { recursive: true });
    await writeFile(path.join(a.sandbox, 'same.txt'), 'in every snapshot');
    const lease = (await a.leases.claim(agentId))!;
    const manifests: string[] = [];
    for (const version of ['v1', 'v2', 'v3', 'v4']) {
      await writeFile(path.join(a.sandbox, 'notes.txt'), version);
      manifests.push((await a.snapshots.take(agentId, lease.epoch)).manifest);
    }
    const pruned = await a.snapshots.prune(agentId, lease.epoch);
    expect(pruned).toMatchObject({
      kept: manifests.slice(1).reverse(),
      deletedManifests: 1,
      deletedBlobs: 1,
    });
    const left = await bucketKeys(home);
    expect(left.manifests).toEqual(manifests.slice(1).sort());
    expect(left.blobs).toEqual(['in every snapshot', 'v2', 'v3', 'v4'].map((text) => sha256Hex(text)).sort());
    // Nothing more to prune until a fourth snapshot is published again.
    expect(await a.snapshots.prune(agentId, lease.epoch)).toMatchObject({
      deletedManifests: 0,
      deletedBlobs: 0,
    });

    // v1's blob is gone: going back to v1 sends it again, and another worker restores it.
    await writeFile(path.join(a.sandbox, 'notes.txt'), 'v1');
    expect(await a.snapshots.take(agentId, lease.epoch)).toMatchObject({ uploaded: 1 });
    await a.leases.release(lease);
    await b.leases.claim(agentId);
    await b.snapshots.restore(agentId);
    expect(await readFile(path.join(b.sandbox, 'notes.txt'), 'utf8')).toBe('v1');
  }, 60_000);

  it('prunes only under the lease: a superseded worker deletes nothing, a takeover waits for a prune', async () => {
    const { home, worker: a, store } = await open();
    const { worker: b } = await open();
    const agentId = home.agentId;
    await mkdir(a.sandbox, { recursive: true });
    const shortLeases = new Leases(home.db, a.name, 300);
    const lease = (await shortLeases.claim(agentId))!;
    for (const version of ['v1', 'v2', 'v3', 'v4', 'v5']) {
      await writeFile(path.join(a.sandbox, 'notes.txt'), version);
      await a.snapshots.take(agentId, lease.epoch);
    }
    // A prune in progress holds the lease row: B's takeover of the lapsed lease waits for its end.
    await new Promise((resolve) => setTimeout(resolve, 400));
    let pruneEnded = 0;
    const slowPrune = store
      .prune(agentId, lease.epoch, 4, async () => {
        await new Promise((resolve) => setTimeout(resolve, 1500));
        return new Set(['v2', 'v3', 'v4', 'v5'].map((text) => sha256Hex(text)));
      })
      .then((figures) => {
        pruneEnded = Date.now();
        return figures;
      });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const bLease = (await b.leases.claim(agentId))!;
    expect(bLease.epoch).toBe(lease.epoch + 1);
    expect(pruneEnded).toBeGreaterThan(0);
    expect((await slowPrune).deletedBlobs).toBe(1);

    // Superseded, A prunes nothing (four snapshots are left, one more than a prune keeps); a snapshot it takes sends its blob but is refused.
    await writeFile(path.join(a.sandbox, 'notes.txt'), 'a superseded write');
    await expect(a.snapshots.take(agentId, lease.epoch)).rejects.toBeInstanceOf(SupersededError);
    expect((await bucketKeys(home)).blobs).toContain(sha256Hex('a superseded write'));
    const before = await bucketKeys(home);
    await expect(a.snapshots.prune(agentId, lease.epoch)).rejects.toBeInstanceOf(SupersededError);
    expect(await bucketKeys(home)).toEqual(before);

    // The holder's next prune sweeps the blob no published snapshot uses.
    await b.snapshots.restore(agentId);
    await writeFile(path.join(b.sandbox, 'notes.txt'), 'v6');
    await b.snapshots.take(agentId, bLease.epoch);
    await b.snapshots.prune(agentId, bLease.epoch);
    const after = await bucketKeys(home);
    expect(after.blobs).not.toContain(sha256Hex('a superseded write'));
    expect(after.blobs).toEqual(['v4', 'v5', 'v6'].map((text) => sha256Hex(text)).sort());
    expect(after.manifests).toHaveLength(3);
  }, 60_000);
  it('prunes by itself behind the snapshots a turn job takes', async () => {
    const { home, worker: a } = await open();
    const agentId = home.agentId;
    await mkdir(a.sandbox, { recursive: true });
    const lease = (await a.leases.claim(agentId))!;
    const failures: unknown[] = [];
    const held = a.snapshots.hold(agentId, lease.epoch, (error) => failures.push(error));
    for (const version of ['v1', 'v2', 'v3', 'v4']) {
      await writeFile(path.join(a.sandbox, 'notes.txt'), version);
      held.turnEnded();
      await until(async () => (await bucketKeys(home)).blobs.includes(sha256Hex(version)), `${version} sent`);
    }
    await writeFile(path.join(a.sandbox, 'notes.txt'), 'v5');
    await held.finish(false);
    await a.snapshots.settled();
    const left = await bucketKeys(home);
    expect(left.blobs).toEqual(['v3', 'v4', 'v5'].map((text) => sha256Hex(text)).sort());
    expect(left.manifests).toHaveLength(3);
    expect(failures).toEqual([]);
  }, 60_000);
});
