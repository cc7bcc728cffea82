/**
 * An agent's attachments: files sent by the agent or uploaded by the user, stored once per SHA-256
 * (files backend: attachments/store.ts, `agents/<id>/attachments/<sha256>.<ext>`).
 */
import type { FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import type { Scrubber } from '../secrets/scrub.ts';

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

export interface IngestOptions {
  /** Refuse the file when it holds one of these secrets (SecretInFileError). */
  secrets?: Scrubber;
}

export interface AttachmentsStore {
  /** Files above this size are refused (AttachmentTooLargeError). */
  readonly maxBytes: number;
  /** Stores an open regular file (`info` is its fstat); a file holding a secret is refused (SecretInFileError). */
  ingestOpenFile(
    source: FileHandle,
    info: Stats,
    fileName: string,
    options?: IngestOptions,
  ): Promise<StoredFile>;
  /** Stores bytes held in memory (an upload). */
  ingestBytes(bytes: Uint8Array, fileName: string, options?: IngestOptions): Promise<StoredFile>;
}
