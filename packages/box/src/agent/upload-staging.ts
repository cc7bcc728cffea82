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
