/**
 * The upload path: a user's file goes into the agent's attachment store
 * (content-addressed) and into its sandbox (`uploads/<name>`, where tools see
 * it). The session records the `user-attachment` entry after both are in place.
 * The sandbox copy is created O_EXCL beneath the sandbox without following a
 * link (sandbox/paths.ts): a link the agent planted in `uploads/`, or as
 * `uploads/` itself, never makes the host write elsewhere. A file holding one
 * of the agent's secrets is refused before either copy. A full disk is a
 * StoreWriteError (the gateway's 507), never "too large".
 */
import { AttachmentTooLargeError } from '../attachments/store.ts';
import type { AttachmentsStore, StoredFile } from '../stores/attachments.ts';
import { createNewInSandbox, withDeadline } from '../sandbox/paths.ts';
import { DiskQuotaError, formatBytes } from '../sandbox/disk-quota.ts';
import type { DiskRoom } from '../tools/types.ts';
import type { LedgerEntry } from '@sendbox/protocol';
import { isIdTaken, type SequencedEntry } from '../stores/ledger.ts';

/** The sandbox folder user uploads go to, where tools see them. */
export const UPLOADS_FOLDER = 'uploads';
import { SecretInFileError, type Scrubber } from '../secrets/scrub.ts';
import { HostError } from './errors.ts';
import { StoreWriteError } from '../stores/errors.ts';
import { WritePoints } from '../stores/write-points.ts';

export interface StagedUpload {
  /** The file name as recorded: a plain name, never a path. */
  fileName: string;
  stored: StoredFile;
  /** Where the copy in the sandbox is. */
  sandboxPath: string;
}

/** A plain file name from what the client sent: no separators, no leading dots, at most 200 characters. */
export function safeUploadName(fileName: string): string {
  return (
    fileName
      .replace(/[/\\\0]/g, '_')
      .replace(/^\.+/, '_')
      .slice(0, 200) || 'upload'
  );
}

export async function stageUpload(
  attachments: AttachmentsStore,
  sandbox: string,
  fileName: string,
  bytes: Uint8Array,
  secrets: Scrubber,
  points: WritePoints = new WritePoints(),
  disk?: DiskRoom,
  /**
   * The names of the agent's earlier uploads (`uploadNames`): never given again, though this box's
   * folder may lack them (a cluster gateway's folder is not the turn worker's).
   */
  taken: ReadonlySet<string> = new Set(),
): Promise<StagedUpload> {
  const safeName = safeUploadName(fileName);
  await reserveRoom(disk, safeName, bytes.length);
  let stored;
  try {
    points.pass('upload', safeName);
    stored = await attachments.ingestBytes(bytes, safeName, { secrets });
  } catch (error) {
    if (error instanceof SecretInFileError) throw new HostError(error.message, 400);
    if (error instanceof AttachmentTooLargeError) throw new HostError(error.message, 413);
    throw new StoreWriteError('upload', `the upload ${safeName}`, error);
  }
  let sandboxPath: string;
  try {
    points.pass('upload', safeName);
    // The first free name: `notes.txt`, `notes (1).txt`...
    sandboxPath = await withDeadline(`Saving ${safeName} in the sandbox`, () =>
      createNewInSandbox(sandbox, UPLOADS_FOLDER, safeName, bytes, taken),
    );
  } catch (error) {
    const written = new StoreWriteError('upload', `the upload ${safeName}`, error);
    if (written.diskFull) throw written;
    throw new HostError(`the upload was not saved in the agent's sandbox: ${(error as Error).message}`, 409);
  }
  return { fileName: safeName, stored, sandboxPath };
}

/** The agent's disk quota (sandbox/disk-quota.ts): an upload that would take it over is a 507 saying what to do. */
async function reserveRoom(disk: DiskRoom | undefined, fileName: string, bytes: number): Promise<void> {
  try {
    await disk?.reserve(bytes);
  } catch (error) {
    if (!(error instanceof DiskQuotaError)) throw error;
    throw new HostError(
      `upload refused: the agent's sandbox folder holds ${formatBytes(error.heldBytes)} of its ` +
        `${formatBytes(error.quotaBytes)} quota, and ${fileName} (${formatBytes(error.addedBytes)}) would exceed it; ` +
        'ask the agent to delete files it no longer needs',
      507,
    );
  }
}

/** The `user-attachment` ledger entry of a staged upload, under `id` (`t<N>ua<k>`). */
export function uploadEntry(
  id: string,
  staged: StagedUpload,
  timestampMs: number,
  clientNonce?: string,
): LedgerEntry {
  return {
    id,
    kind: 'user-attachment',
    timestampMs,
    file_name: staged.fileName,
    file_path: staged.stored.path,
    byteSize: staged.stored.size,
    media_type: staged.stored.mediaType,
    sha256: staged.stored.sha256,
    sandbox_path: staged.sandboxPath,
    ...(clientNonce ? { clientNonce } : {}),
  };
}

/** How many times an upload's id is taken again after another writer took it first. */
const ID_TRIES = 64;

export interface UploadRecording {
  /** The id the next upload gets from what the session has read (`t<N>ua<k>`). */
  nextId(): string;
  /** Appends the upload's entry under `id`; throws when the id is taken (`isIdTaken`). */
  append(id: string): SequencedEntry;
  /**
   * Reads what other writers appended meanwhile (a cluster's other gateways record uploads of the
   * same agent); returns the entry an upload with the same client nonce already has, if any.
   */
  catchUp(): SequencedEntry | undefined;
}

/**
 * Records an upload's entry under the first id no writer holds. The id comes from the session's view
 * of the ledger, which another writer of the agent (a cluster's other gateways) may have moved on
 * meanwhile: the ledger's unique id refuses the second of two such entries, so the session reads
 * what was appended and takes the next id. An upload of the same client nonce found meanwhile is
 * the answer (its first entry), not a second entry.
 */
export function recordUpload(recording: UploadRecording): SequencedEntry {
  for (let tries = 1; ; tries++) {
    const id = recording.nextId();
    try {
      return recording.append(id);
    } catch (error) {
      if (!isIdTaken(error) || tries >= ID_TRIES) throw error;
    }
    const earlier = recording.catchUp();
    if (earlier) return earlier;
  }
}
