/**
 * Where sandbox snapshots live: content-addressed in the cluster's bucket, an agent's under its own
 * prefix beside its attachments (`<agentId>/sandbox/blobs/<sha256>` for file bytes,
 * `<agentId>/sandbox/manifests/<sha256>.json` for manifests), both written with `If-None-Match: *`
 * (a key, once there, holds those bytes for good) and checked against their hash when read. Which
 * manifest is the agent's latest is a row of `sandbox_snapshots` in PostgreSQL, written under the
 * lease epoch of the worker that took it: a superseded worker's snapshot is refused, as its ledger
 * writes are.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { Transform, type Readable } from 'node:stream';
import { createHash } from 'node:crypto';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
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
    const client = await this.db.pool.connect();
    try {
      await client.query('BEGIN');
      const held = await client.query(
        `SELECT 1 FROM ${this.db.table('leases')} WHERE agent_id = $1 AND epoch = $2 FOR SHARE`,
        [agentId, row.epoch],
      );
      if (held.rowCount !== 1) throw new SupersededError(agentId, row.epoch);
      await client.query(
        `INSERT INTO ${this.db.table('sandbox_snapshots')} (agent_id, manifest, epoch, taken_at, files, bytes, uploads_seq)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (agent_id) DO UPDATE SET manifest = EXCLUDED.manifest, epoch = EXCLUDED.epoch,
           taken_at = EXCLUDED.taken_at, files = EXCLUDED.files, bytes = EXCLUDED.bytes,
           uploads_seq = EXCLUDED.uploads_seq`,
        [agentId, row.manifest, row.epoch, row.takenAt, row.files, row.bytes, row.uploadsSeq],
      );
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
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
