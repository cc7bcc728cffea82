/**
 * The per-agent attachment store: `<agentDir>/attachments/<sha256>[.<ext>]`,
 * content-addressed. A new file lands in a temp file in the same folder,
 * fsynced, then renamed into place; identical files are kept once. The name
 * always describes the stored bytes: what is hashed is the temp copy itself,
 * never the source, which may change while it is copied.
 *
 * A file from disk (`ingestFile`) is copied by the kernel (`copyFile`: a
 * reflink where the filesystem has them, else an in-kernel copy), then the
 * copy is hashed while its fsync runs, so the disk write overlaps the hashing.
 * When a stored file has the same size, the source is hashed first and nothing
 * is copied if its hash is already stored. A size cap stops the work as soon
 * as it is crossed. Every byte stored passes a secret scan first (an optional
 * `Scrubber`): a file holding a secret, in any encoding it knows, is refused.
 * A source file is read through a handle opened without following links and
 * checked to be a regular file, so a FIFO or device cannot block the store.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants, existsSync, type Dirent } from 'node:fs';
import { copyFile, open, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import path from 'node:path';
import { ensurePrivateDir, syncDir } from '../fs/atomic.ts';
import { SecretInFileError, type SecretScanner } from '../secrets/scrub.ts';
import type { AttachmentsStore, IngestOptions, StoredFile } from '../stores/attachments.ts';
import { extensionOf, mediaTypeOf } from './media-type.ts';

export type { IngestOptions, StoredFile };

export const DEFAULT_MAX_ATTACHMENT_BYTES = 512 * 1024 * 1024;
/** Read size for hashing: large enough that per-read overhead is small next to hashing. */
const CHUNK_BYTES = 8 * 1024 * 1024;
/** Below this size copying is cheaper than looking through the store for a file of the same size. */
const SAME_SIZE_CHECK_MIN_BYTES = 1024 * 1024;
const STORED_NAME = /^[0-9a-f]{64}(\.|$)/;
/** Where an open descriptor can be reopened by name (Linux; /dev/fd elsewhere). */
const FD_DIR = existsSync('/proc/self/fd') ? '/proc/self/fd' : '/dev/fd';

const INGEST_TEMP_PREFIX = '.ingest-';

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

export class AttachmentStore implements AttachmentsStore {
  constructor(
    readonly dir: string,
    readonly maxBytes: number = DEFAULT_MAX_ATTACHMENT_BYTES,
  ) {}

  /** Stores a file from disk. `fileName` (default: the source's basename) decides the extension and media type. */
  async ingestFile(
    source: string,
    fileName = path.basename(source),
    options: IngestOptions = {},
  ): Promise<StoredFile> {
    const handle = await open(source, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      return await this.ingestOpenFile(handle, await handle.stat(), fileName, options);
    } finally {
      await handle.close();
    }
  }

  /**
   * Stores an open file (`info` is its fstat). The kernel copies it through
   * its descriptor (/proc/self/fd), which reopens this very file, never a path that may have changed.
   */
  async ingestOpenFile(
    source: FileHandle,
    info: Stats,
    fileName: string,
    options: IngestOptions = {},
  ): Promise<StoredFile> {
    if (!info.isFile()) throw new Error(`${fileName} is not a regular file`);
    if (info.size > this.maxBytes) throw new AttachmentTooLargeError(fileName, this.maxBytes);
    await ensurePrivateDir(this.dir);
    const scan = () => options.secrets?.scanner();
    if (info.size >= SAME_SIZE_CHECK_MIN_BYTES && (await this.holdsSize(info.size))) {
      // Probably stored already: one read of the source instead of a copy.
      const { sha256 } = await hashHandle(source, this.maxBytes, fileName, scan());
      const existing = await this.find(sha256);
      if (existing) return this.stored(existing, fileName, info.size, sha256, false);
    }
    const temp = this.tempPath();
    try {
      await copyFile(`${FD_DIR}/${source.fd}`, temp, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
      const handle = await open(temp, 'r+');
      let hashed: { sha256: string; size: number };
      try {
        await handle.chmod(0o600); // copyFile gave the copy the source's mode
        const [hash, synced] = await Promise.allSettled([
          hashHandle(handle, this.maxBytes, fileName, scan()),
          handle.sync(),
        ]);
        if (hash.status === 'rejected') throw hash.reason;
        if (synced.status === 'rejected') throw synced.reason;
        hashed = hash.value;
      } finally {
        await handle.close();
      }
      return await this.commit(temp, fileName, hashed.size, hashed.sha256);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  /** Stores bytes held in memory (an upload): hashed first, written only when not stored yet. */
  async ingestBytes(bytes: Uint8Array, fileName: string, options: IngestOptions = {}): Promise<StoredFile> {
    if (bytes.byteLength > this.maxBytes) throw new AttachmentTooLargeError(fileName, this.maxBytes);
    const secret = options.secrets?.scanner().push(bytes) ?? null;
    if (secret !== null) throw new SecretInFileError(fileName, secret);
    await ensurePrivateDir(this.dir);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const existing = await this.find(sha256);
    if (existing) return this.stored(existing, fileName, bytes.byteLength, sha256, false);
    const temp = this.tempPath();
    try {
      const handle = await open(temp, 'wx', 0o600);
      try {
        await handle.writeFile(bytes);
        await handle.sync();
      } finally {
        await handle.close();
      }
      return await this.commit(temp, fileName, bytes.byteLength, sha256);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
  }

  /** Renames a complete, fsynced temp file into place, or drops it when that hash is stored already. */
  private async commit(temp: string, fileName: string, size: number, sha256: string): Promise<StoredFile> {
    const existing = await this.find(sha256);
    if (existing) {
      await rm(temp, { force: true });
      return this.stored(existing, fileName, size, sha256, false);
    }
    const ext = extensionOf(fileName);
    const target = path.join(this.dir, ext ? `${sha256}.${ext}` : sha256);
    await rename(temp, target);
    await syncDir(this.dir);
    return this.stored(target, fileName, size, sha256, true);
  }

  private stored(file: string, fileName: string, size: number, sha256: string, created: boolean): StoredFile {
    return { path: file, fileName, size, mediaType: mediaTypeOf(fileName), sha256, created };
  }

  private tempPath(): string {
    return path.join(this.dir, `${INGEST_TEMP_PREFIX}${randomBytes(8).toString('hex')}.tmp`);
  }

  /** Removes the temp files an ingest that never finished left (the box was killed mid-copy); run on start. */
  async removeTemps(): Promise<void> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return;
    }
    for (const name of names) {
      if (name.startsWith(INGEST_TEMP_PREFIX) && name.endsWith('.tmp'))
        await rm(path.join(this.dir, name), { force: true });
    }
  }

  /** True when a stored file has exactly this size (it may be the same file). */
  private async holdsSize(size: number): Promise<boolean> {
    let entries: Dirent[];
    try {
      entries = await readdir(this.dir, { withFileTypes: true });
    } catch {
      return false;
    }
    const sizes = await Promise.all(
      entries
        .filter((entry) => entry.isFile() && STORED_NAME.test(entry.name))
        .map((entry) =>
          stat(path.join(this.dir, entry.name)).then(
            (info) => info.size,
            () => -1,
          ),
        ),
    );
    return sizes.includes(size);
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

/**
 * SHA-256 and size of an open file, read from the start with two buffers: the
 * next read runs in libuv's thread pool while the current chunk is hashed.
 */
async function hashHandle(
  handle: FileHandle,
  maxBytes: number,
  fileName: string,
  scanner?: SecretScanner,
): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  const buffers = [Buffer.allocUnsafe(CHUNK_BYTES), Buffer.allocUnsafe(CHUNK_BYTES)] as const;
  let which = 0;
  let size = 0;
  let pending = handle.read(buffers[0], 0, CHUNK_BYTES, 0);
  try {
    for (;;) {
      const { bytesRead, buffer } = await pending;
      if (bytesRead === 0) break;
      size += bytesRead;
      if (size > maxBytes) throw new AttachmentTooLargeError(fileName, maxBytes);
      which ^= 1;
      pending = handle.read(buffers[which]!, 0, CHUNK_BYTES, size);
      const chunk = buffer.subarray(0, bytesRead);
      const secret = scanner?.push(chunk) ?? null;
      if (secret !== null) throw new SecretInFileError(fileName, secret);
      hash.update(chunk);
    }
  } catch (error) {
    await pending.catch(() => undefined); // no read left running on a handle the caller is about to close
    throw error;
  }
  return { sha256: hash.digest('hex'), size };
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 * 1024) return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
  if (bytes >= 1024 * 1024) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} B`;
}
