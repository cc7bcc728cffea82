/**
 * Attachments in the cluster's bucket at `<agentId>/<sha256>.<ext>` (issue 25 §4). A file is first
 * stored in this worker's local copy (stores attachments/store.ts: the size cap, the secret scan and
 * the hash all happen there, and tools read that copy), then streamed to the bucket with
 * `If-None-Match: *`: the server refuses a second write of a key, so `created` says whether this
 * worker's write made the object. A worker that takes an agent over streams an object back into
 * its local copy (`fetch`), checking its SHA-256 on the way.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, type Stats } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import {
  CopyObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import type { AttachmentStore } from '../../attachments/store.ts';
import type { AttachmentsStore, IngestOptions, StoredFile } from '../attachments.ts';
import type { ObjectStoreLocation } from './object-store-url.ts';

const STORED_NAME = /^([0-9a-f]{64})(\.[A-Za-z0-9]+)?$/;

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
}

/** An S3 client for the location (path-style, so a bucket on a plain host:port works). */
export function s3ClientFor(location: ObjectStoreLocation, credentials?: S3Credentials): S3Client {
  return new S3Client({
    region: location.region,
    forcePathStyle: true,
    // Checksums only where S3 requires them: servers such as Ceph RGW refuse the newer trailers.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...(location.endpoint ? { endpoint: location.endpoint } : {}),
    ...(credentials ? { credentials } : {}),
  });
}

/** The server refused a put with `If-None-Match: *` (412): the key is there already. */
export function refusedAsPresent(error: unknown): boolean {
  return (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 412;
}

/**
 * Streams s3://`bucket`/`key` into `target` (created new, 0600), hashing it on the way, and keeps it
 * only when its SHA-256 is `sha256`; `what` names the object in the errors. Nothing is left at
 * `target` when it fails.
 */
export async function downloadVerified(
  s3: S3Client,
  bucket: string,
  key: string,
  sha256: string,
  target: string,
  what: string,
): Promise<void> {
  const hash = createHash('sha256');
  try {
    const response = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    await pipeline(
      response.Body as Readable,
      new Transform({
        transform(chunk: Buffer, _encoding, done) {
          hash.update(chunk);
          done(null, chunk);
        },
      }),
      createWriteStream(target, { flags: 'wx', mode: 0o600 }),
    );
  } catch (error) {
    await rm(target, { force: true });
    throw new Error(
      `could not read s3://${bucket}/${key} (${what}): ${(error as Error).message}; check the object store and try again`,
      { cause: error },
    );
  }
  const actual = hash.digest('hex');
  if (actual !== sha256) {
    await rm(target, { force: true });
    throw new Error(
      `s3://${bucket}/${key} holds bytes whose SHA-256 is ${actual}, not the one its name says: it was changed outside the box; restore it from a backup`,
    );
  }
}

export class S3AttachmentStore implements AttachmentsStore {
  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
    private readonly agentId: string,
    /** This worker's copy (`agents/<id>/attachments/` in its data dir). */
    private readonly local: AttachmentStore,
  ) {}

  get maxBytes(): number {
    return this.local.maxBytes;
  }

  async ingestOpenFile(
    source: FileHandle,
    info: Stats,
    fileName: string,
    options?: IngestOptions,
  ): Promise<StoredFile> {
    return this.upload(await this.local.ingestOpenFile(source, info, fileName, options));
  }

  async ingestBytes(bytes: Uint8Array, fileName: string, options?: IngestOptions): Promise<StoredFile> {
    return this.upload(await this.local.ingestBytes(bytes, fileName, options));
  }

  /** The object key of a stored file (its name in the local copy: `<sha256>[.<ext>]`). */
  keyOf(storedName: string): string {
    if (!STORED_NAME.test(storedName))
      throw new Error(`${JSON.stringify(storedName)} is not a stored attachment name`);
    return `${this.agentId}/${storedName}`;
  }

  /**
   * Brings the object named `storedName` into the local copy and returns its path. The bytes go to a
   * temp file and are renamed into place only when their SHA-256 is the one the name says.
   */
  async fetch(storedName: string): Promise<string> {
    const expected = STORED_NAME.exec(storedName)![1]!;
    const target = path.join(this.local.dir, storedName);
    await mkdir(this.local.dir, { recursive: true, mode: 0o700 });
    const temp = path.join(this.local.dir, `.fetch-${randomBytes(8).toString('hex')}.tmp`);
    try {
      await downloadVerified(this.s3, this.bucket, this.keyOf(storedName), expected, temp, 'an attachment');
      await rename(temp, target);
    } finally {
      await rm(temp, { force: true });
    }
    return target;
  }

  /**
   * Brings the attachment whose SHA-256 is `sha256` into the local copy, when the bucket has it (its
   * extension is found by listing `<agentId>/<sha256>`); its local path, or null when there is none.
   */
  async fetchBySha256(sha256: string): Promise<string | null> {
    if (!/^[0-9a-f]{64}$/.test(sha256)) return null;
    const listed = await this.s3.send(
      new ListObjectsV2Command({ Bucket: this.bucket, Prefix: `${this.agentId}/${sha256}`, MaxKeys: 10 }),
    );
    const name = (listed.Contents ?? [])
      .map((object) => object.Key?.slice(this.agentId.length + 1) ?? '')
      .find((stored) => STORED_NAME.exec(stored)?.[1] === sha256);
    return name === undefined ? null : this.fetch(name);
  }

  /**
   * Brings every attachment of the agent that this worker has no copy of (a worker taking the agent
   * over: its tools and the model view read the local copies); how many it fetched.
   */
  async fetchMissing(): Promise<number> {
    const local = new Set(await readdir(this.local.dir).catch(() => [] as string[]));
    let fetched = 0;
    for await (const name of this.storedNames()) {
      if (local.has(name)) continue;
      await this.fetch(name);
      fetched += 1;
    }
    return fetched;
  }

  /** Copies every attachment of the agent to agent `toId`'s keys, in the bucket (no bytes through here). */
  async copyTo(toId: string): Promise<void> {
    for await (const name of this.storedNames()) {
      await this.s3.send(
        new CopyObjectCommand({
          Bucket: this.bucket,
          CopySource: `${this.bucket}/${this.keyOf(name)}`,
          Key: `${toId}/${name}`,
        }),
      );
    }
  }

  /** The names of the agent's attachments in the bucket (its sandbox snapshots left out). */
  private async *storedNames(): AsyncGenerator<string> {
    let token: string | undefined;
    do {
      // The delimiter keeps the agent's sandbox snapshots (`<agentId>/sandbox/…`) out of the listing.
      const page = await this.s3.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: `${this.agentId}/`,
          Delimiter: '/',
          ...(token ? { ContinuationToken: token } : {}),
        }),
      );
      for (const object of page.Contents ?? []) {
        const name = object.Key?.slice(this.agentId.length + 1) ?? '';
        if (STORED_NAME.test(name)) yield name;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  private async upload(stored: StoredFile): Promise<StoredFile> {
    const key = this.keyOf(path.basename(stored.path));
    try {
      await this.s3.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: createReadStream(stored.path),
          ContentLength: stored.size,
          ContentType: stored.mediaType,
          IfNoneMatch: '*',
        }),
      );
      return { ...stored, created: true };
    } catch (error) {
      // 412: the key is there already, and content-addressed: the same bytes.
      if (refusedAsPresent(error)) {
        return { ...stored, created: false };
      }
      throw new Error(
        `could not store ${stored.fileName} in s3://${this.bucket}/${key}: ${(error as Error).message}; check the object store and try again`,
        { cause: error },
      );
    }
  }
}
