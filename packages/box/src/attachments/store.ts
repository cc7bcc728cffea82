/**
 * The per-agent attachment store: `<agentDir>/attachments/<sha256>[.<ext>]`,
 * content-addressed. Bytes are streamed once: hashed and written to a temp
 * file in the same folder together; the temp file is renamed into place, or
 * dropped when a file with that hash is already stored, so identical files
 * are kept once. A size cap stops the copy as soon as it is crossed.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { open, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { ensurePrivateDir, syncDir } from '../fs/atomic.ts';
import { extensionOf, mediaTypeOf } from './media-type.ts';

export const DEFAULT_MAX_ATTACHMENT_BYTES = 512 * 1024 * 1024;
/** Read size: large enough that per-chunk overhead is small next to hashing. */
const CHUNK_BYTES = 1024 * 1024;

export interface StoredFile {
  /** Absolute path of the stored copy. */
  path: string;
  fileName: string;
  size: number;
  mediaType: string;
  sha256: string;
  /** False when a file with the same hash was already stored (no second copy). */
  created: boolean;
}

export class AttachmentTooLargeError extends Error {
  constructor(
    readonly fileName: string,
    readonly maxBytes: number,
  ) {
    super(
      `${fileName} is larger than the ${formatBytes(maxBytes)} attachment limit; ` +
        'compress it or split it into smaller files, then send those.',
    );
    this.name = 'AttachmentTooLargeError';
  }
}

export class AttachmentStore {
  constructor(
    readonly dir: string,
    readonly maxBytes: number = DEFAULT_MAX_ATTACHMENT_BYTES,
  ) {}

  /** Streams a file into the store. `fileName` (default: the source's basename) decides the extension and media type. */
  async ingestFile(source: string, fileName = path.basename(source)): Promise<StoredFile> {
    const info = await stat(source);
    if (!info.isFile()) throw new Error(`${fileName} is not a regular file`);
    if (info.size > this.maxBytes) throw new AttachmentTooLargeError(fileName, this.maxBytes);
    return this.ingest(createReadStream(source, { highWaterMark: CHUNK_BYTES }), fileName);
  }

  async ingestBytes(bytes: Uint8Array, fileName: string): Promise<StoredFile> {
    if (bytes.byteLength > this.maxBytes) throw new AttachmentTooLargeError(fileName, this.maxBytes);
    return this.ingest([bytes], fileName);
  }

  /**
   * Streams chunks into a temp file while hashing them. The write stream
   * works in libuv's thread pool, so the disk write of one chunk overlaps the
   * hashing of the next: one pass over the bytes.
   */
  async ingest(
    chunks: Readable | AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
    fileName: string,
  ): Promise<StoredFile> {
    await ensurePrivateDir(this.dir);
    const temp = path.join(this.dir, `.ingest-${randomBytes(8).toString('hex')}.tmp`);
    const hash = createHash('sha256');
    let size = 0;
    const maxBytes = this.maxBytes;
    const hashing = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        size += chunk.byteLength;
        if (size > maxBytes) {
          done(new AttachmentTooLargeError(fileName, maxBytes));
          return;
        }
        hash.update(chunk);
        done(null, chunk);
      },
    });
    try {
      const out = createWriteStream(temp, { flags: 'wx', mode: 0o600, highWaterMark: 4 * CHUNK_BYTES });
      const source = chunks instanceof Readable ? chunks : Readable.from(chunks, { objectMode: false });
      await pipeline(source, hashing, out);
      const handle = await open(temp, 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      const sha256 = hash.digest('hex');
      const existing = await this.find(sha256);
      if (existing) {
        await rm(temp, { force: true });
        return { path: existing, fileName, size, mediaType: mediaTypeOf(fileName), sha256, created: false };
      }
      const ext = extensionOf(fileName);
      const target = path.join(this.dir, ext ? `${sha256}.${ext}` : sha256);
      await rename(temp, target);
      await syncDir(this.dir);
      return { path: target, fileName, size, mediaType: mediaTypeOf(fileName), sha256, created: true };
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  /** The stored file with this hash, whatever its extension, if any. */
  async find(sha256: string): Promise<string | null> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return null;
    }
    const hit = names.find((name) => name === sha256 || name.startsWith(`${sha256}.`));
    return hit ? path.join(this.dir, hit) : null;
  }
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 * 1024) return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
  if (bytes >= 1024 * 1024) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} B`;
}
