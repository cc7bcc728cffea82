/**
 * Where sandbox snapshots live: content-addressed in the cluster's bucket, an agent's under its own
 * prefix beside its attachments (`<agentId>/sandbox/blobs/<sha256>` for file bytes,
 * `<agentId>/sandbox/manifests/<sha256>.json` for manifests), both written with `If-None-Match: *`
 * (a key, once there, holds those bytes for good) and checked against their hash when read. Which
 * manifest is the agent's latest is a row of `sandbox_snapshots` in PostgreSQL, written under the
 * lease epoch of the worker that took it: a superseded worker's snapshot is refused, as its ledger
 * writes are.
 *
 * Old snapshots are pruned by the lease holder after it publishes one (`prune`): the latest few
 * manifests of `sandbox_snapshot_history` are kept, and every other manifest and every blob none of
 * the kept manifests uses is deleted. It runs holding the agent's lease row shared, at its own epoch,
 * for the whole sweep: a takeover waits until it is done, and a superseded worker prunes nothing.
 * So no snapshot can be in the making while blobs are deleted, except a superseded worker's, which
 * can never be published (its blobs are garbage, swept by a later prune).
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { Transform, type Readable } from 'node:stream';
import { createHash } from 'node:crypto';
import {
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { PoolClient } from 'pg';
import type { Database } from '../../stores/postgres/database.ts';
import { downloadVerified, refusedAsPresent } from '../../stores/postgres/attachments.ts';
import { SupersededError } from '../../stores/postgres/leases.ts';
import { sha256Hex } from './manifest.ts';

/** Files up to this size are read whole and sent from memory: the bytes sent are the bytes hashed. */
const BUFFERED_BLOB_BYTES = 8 << 20;

/** The agent's latest snapshot, as the database has it. */
export interface SnapshotRow {
  manifest: string;
  epoch: number;
  takenAt: number;
  files: number;
  bytes: number;
  /** The last ledger seq whose user uploads this sandbox took in (agent/upload-placement.ts). */
  uploadsSeq: number;
}

/** What a prune did. */
export interface PruneFigures {
  /** Manifests kept (newest first); empty when there was nothing to prune. */
  kept: string[];
  /** Blobs the kept manifests use (known to be in the bucket). */
  referenced: Set<string>;
  deletedManifests: number;
  deletedBlobs: number;
}

/** At most this many objects are deleted by one prune (one DeleteObjects request); the rest go next time. */
export const MAX_PRUNED_OBJECTS = 1000;

/** A file changed while it was being sent: what was sent is not what was hashed (the object is removed). */
export class ChangedWhileSentError extends Error {}

export class SnapshotStore {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
    private readonly db: Database,
  ) {}

  blobKey(agentId: string, sha256: string): string {
    return `${agentId}/sandbox/blobs/${sha256}`;
  }

  manifestKey(agentId: string, sha256: string): string {
    return `${agentId}/sandbox/manifests/${sha256}.json`;
  }

  /**
   * Sends a sandbox file as the blob of its hash. A small file is read whole and named by the hash of
   * what was read; a large one is streamed and must hash to `sha256` (else ChangedWhileSentError).
   * Returns the hash sent and whether this call created the object (false: it was there already).
   */
  async putBlob(
    agentId: string,
    file: string,
    expected: { sha256: string; size: number },
  ): Promise<{ sha256: string; size: number; created: boolean }> {
    const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      if (expected.size <= BUFFERED_BLOB_BYTES) {
        const bytes = await handle.readFile();
        const sha256 = sha256Hex(bytes);
        const created = await this.putNew(this.blobKey(agentId, sha256), bytes, bytes.byteLength);
        return { sha256, size: bytes.byteLength, created };
      }
      const hash = createHash('sha256');
      const body = handle.createReadStream({ autoClose: false }).pipe(
        new Transform({
          transform(chunk: Buffer, _encoding, done) {
            hash.update(chunk);
            done(null, chunk);
          },
        }),
      );
      const key = this.blobKey(agentId, expected.sha256);
      const created = await this.putNew(key, body, expected.size);
      if (created && hash.digest('hex') !== expected.sha256) {
        await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
        throw new ChangedWhileSentError(`${file} changed while it was being sent`);
      }
      return { ...expected, created };
    } finally {
      await handle.close();
    }
  }

  /** Streams the blob into `target` (created, 0600) and checks its hash; nothing is left there when it fails. */
  async getBlob(agentId: string, sha256: string, target: string): Promise<void> {
    const key = this.blobKey(agentId, sha256);
    await downloadVerified(
      this.s3,
      this.bucket,
      key,
      sha256,
      target,
      "a file of the agent's sandbox snapshot",
    );
  }

  /** Stores a manifest's text under its hash (a no-op when it is there already). */
  async putManifest(agentId: string, text: string): Promise<string> {
    const sha256 = sha256Hex(text);
    const bytes = Buffer.from(text);
    await this.putNew(this.manifestKey(agentId, sha256), bytes, bytes.byteLength);
    return sha256;
  }

  /** A manifest's text, checked against the hash it is stored under. */
  async getManifest(agentId: string, sha256: string): Promise<string> {
    const key = this.manifestKey(agentId, sha256);
    const response = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    const text = await response.Body!.transformToString('utf8');
    if (sha256Hex(text) !== sha256) {
      throw new Error(
        `s3://${this.bucket}/${key} does not hash to the name it is stored under: it was changed outside the box; nothing was restored from it`,
      );
    }
    return text;
  }

  /** The agent's latest snapshot, if it has one. */
  async latest(agentId: string): Promise<SnapshotRow | undefined> {
    const { rows } = await this.db.pool.query<{
      manifest: string;
      epoch: string;
      taken_at: string;
      files: number;
      bytes: string;
      uploads_seq: string;
    }>(
      `SELECT manifest, epoch, taken_at, files, bytes, uploads_seq FROM ${this.db.table('sandbox_snapshots')} WHERE agent_id = $1`,
      [agentId],
    );
    const row = rows[0];
    return (
      row && {
        manifest: row.manifest,
        epoch: Number(row.epoch),
        takenAt: Number(row.taken_at),
        files: row.files,
        bytes: Number(row.bytes),
        uploadsSeq: Number(row.uploads_seq),
      }
    );
  }

  /**
   * Makes `row` the agent's latest snapshot, only while the agent's lease still has `row.epoch` (the
   * lease row is held shared until the commit, so a takeover waits for it or refuses it).
   */
  async publish(agentId: string, row: SnapshotRow): Promise<void> {
    await this.underLease(agentId, row.epoch, async (client) => {
      await client.query(
        `INSERT INTO ${this.db.table('sandbox_snapshot_history')} (agent_id, manifest) VALUES ($1, $2)`,
        [agentId, row.manifest],
      );
      await client.query(
        `INSERT INTO ${this.db.table('sandbox_snapshots')} (agent_id, manifest, epoch, taken_at, files, bytes, uploads_seq)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (agent_id) DO UPDATE SET manifest = EXCLUDED.manifest, epoch = EXCLUDED.epoch,
           taken_at = EXCLUDED.taken_at, files = EXCLUDED.files, bytes = EXCLUDED.bytes,
           uploads_seq = EXCLUDED.uploads_seq`,
        [agentId, row.manifest, row.epoch, row.takenAt, row.files, row.bytes, row.uploadsSeq],
      );
    });
  }

  /**
   * Deletes the agent's snapshots older than its `keep` latest, and every blob those do not use, at
   * most MAX_PRUNED_OBJECTS objects; only while its lease has `epoch` (else SupersededError), holding
   * the lease row shared throughout. `blobsOf(manifests)` gives the blobs the kept manifests use.
   * Does nothing when no more than `keep` snapshots were published since the last prune.
   */
  async prune(
    agentId: string,
    epoch: number,
    keep: number,
    blobsOf: (manifests: string[]) => Promise<Set<string>>,
  ): Promise<PruneFigures> {
    const figures: PruneFigures = { kept: [], referenced: new Set(), deletedManifests: 0, deletedBlobs: 0 };
    return this.underLease(agentId, epoch, async (client) => {
      const { rows } = await client.query<{ seq: string; manifest: string }>(
        `SELECT seq, manifest FROM ${this.db.table('sandbox_snapshot_history')} WHERE agent_id = $1 ORDER BY seq DESC`,
        [agentId],
      );
      if (rows.length <= keep) return figures;
      figures.kept = [...new Set(rows.slice(0, keep).map((row) => row.manifest))];
      figures.referenced = await blobsOf(figures.kept);
      const kept = new Set(figures.kept.map((manifest) => this.manifestKey(agentId, manifest)));
      const doomed: string[] = [];
      for (const key of await this.keysUnder(`${agentId}/sandbox/manifests/`)) {
        if (!kept.has(key) && doomed.length < MAX_PRUNED_OBJECTS) {
          doomed.push(key);
          figures.deletedManifests += 1;
        }
      }
      const blobs = `${agentId}/sandbox/blobs/`;
      for (const key of await this.keysUnder(blobs)) {
        if (!figures.referenced.has(key.slice(blobs.length)) && doomed.length < MAX_PRUNED_OBJECTS) {
          doomed.push(key);
          figures.deletedBlobs += 1;
        }
      }
      await this.deleteKeys(doomed);
      await client.query(
        `DELETE FROM ${this.db.table('sandbox_snapshot_history')} WHERE agent_id = $1 AND seq <= $2`,
        [agentId, rows[keep]!.seq],
      );
      return figures;
    });
  }

  /** Runs `work` in a transaction holding the agent's lease row shared while it still has `epoch`. */
  private async underLease<T>(
    agentId: string,
    epoch: number,
    work: (client: PoolClient) => Promise<T>,
  ): Promise<T> {
    const client = await this.db.pool.connect();
    try {
      await client.query('BEGIN');
      const held = await client.query(
        `SELECT 1 FROM ${this.db.table('leases')} WHERE agent_id = $1 AND epoch = $2 FOR SHARE`,
        [agentId, epoch],
      );
      if (held.rowCount !== 1) throw new SupersededError(agentId, epoch);
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** Every key under `prefix`. */
  private async keysUnder(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.s3.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: prefix,
          ...(token ? { ContinuationToken: token } : {}),
        }),
      );
      for (const object of page.Contents ?? []) if (object.Key) keys.push(object.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys;
  }

  private async deleteKeys(keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    const answer = await this.s3.send(
      new DeleteObjectsCommand({
        Bucket: this.bucket,
        Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true },
      }),
    );
    const failed = answer.Errors?.[0];
    if (failed) {
      throw new Error(
        `could not delete s3://${this.bucket}/${failed.Key} (an old sandbox snapshot): ${failed.Message}; the next prune tries again`,
      );
    }
  }

  /** A put that never replaces: true when it created the object, false when the key was there. */
  private async putNew(key: string, body: Uint8Array | Readable, length: number): Promise<boolean> {
    try {
      await this.s3.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: body,
          ContentLength: length,
          IfNoneMatch: '*',
        }),
      );
      return true;
    } catch (error) {
      if (refusedAsPresent(error)) return false;
      throw new Error(
        `could not store s3://${this.bucket}/${key} (the agent's sandbox snapshot): ${(error as Error).message}; check the object store and try again`,
        { cause: error },
      );
    }
  }
}
