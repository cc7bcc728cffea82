/**
 * Uploads in a sandbox that did not take them in (issue 25). The box that accepts an upload copies
 * it into its own sandbox folder (upload-staging.ts); in a cluster the turn may run on another
 * worker, whose sandbox is the last snapshot's. Before each turn there, the uploads the ledger
 * records since that sandbox last took uploads in are placed: each from the agent's attachment copy
 * (a bucket object fetched and hash-checked by `downloadVerified`), streamed into the sandbox by the
 * confined writer (no link followed, nothing outside the sandbox), and checked again against its
 * SHA-256 on the way; a file that fails the check is never renamed into place.
 *
 * Which uploads: only those recorded after the point the sandbox's snapshot says it covered (the
 * caller keeps that point, cluster/sandbox/sandbox-snapshots.ts). An upload placed once, and then
 * deleted, moved or replaced by the user or the model in a later turn, stays as that turn left it:
 * a later sandbox is never "repaired" back to an upload it dropped on purpose.
 *
 * Recorded paths are absolute on the box that accepted the upload; an upload always lies directly
 * in the sandbox's `uploads/` folder, so its place on this machine is `uploads/<its name>` here.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import type { SequencedEntry } from '../stores/ledger.ts';
import { openInSandbox, writeInSandbox } from '../sandbox/paths.ts';
import { safeUploadName, UPLOADS_FOLDER } from './upload-staging.ts';

const SHA256 = /^[0-9a-f]{64}$/;

/** An upload as its `user-attachment` entry records it. */
export interface RecordedUpload {
  seq: number;
  /** Relative to the sandbox: `uploads/<name>`. */
  sandboxPath: string;
  sha256: string;
}

export interface Placement {
  /** Sandbox paths written. */
  placed: string[];
  /** Sandbox paths that held the upload already. */
  present: string[];
  /** Uploads that could not be placed, and why (the first one's seq bounds what counts as covered). */
  failed: Array<{ upload: RecordedUpload; error: unknown }>;
}

/** `uploads/<name>` for an upload recorded at `recorded` (absolute on any box, or relative); null if it is not one. */
export function uploadInSandbox(recorded: string): string | null {
  const name = path.basename(recorded);
  if (name === '' || name !== safeUploadName(name)) return null;
  return path.posix.join(UPLOADS_FOLDER, name);
}

/**
 * Where an upload recorded at `recorded` (its entry's `sandbox_path`) is in the sandbox `sandbox` of
 * this machine (another cluster worker's gateway may have taken it in); an entry with no sandbox path
 * is named by `fileName`.
 */
export function uploadPathHere(sandbox: string, recorded: unknown, fileName: string): string {
  if (typeof recorded !== 'string') return fileName;
  const relative = uploadInSandbox(recorded);
  return relative === null ? recorded : path.join(sandbox, relative);
}

/** The names in `uploads/` of every upload `entries` records. */
export function uploadNames(entries: readonly SequencedEntry[]): Set<string> {
  const names = new Set<string>();
  for (const row of entries) {
    const entry = row as Record<string, unknown>;
    if (entry.kind !== 'user-attachment' || typeof entry.sandbox_path !== 'string') continue;
    const relative = uploadInSandbox(entry.sandbox_path);
    if (relative !== null) names.add(path.posix.basename(relative));
  }
  return names;
}

/** The uploads of `entries` with a sandbox copy, a hash and a seq above `afterSeq`, in ledger order. */
export function uploadsAfter(entries: readonly SequencedEntry[], afterSeq: number): RecordedUpload[] {
  return entries.flatMap((row) => {
    const entry = row as Record<string, unknown>;
    if (row.seq <= afterSeq || entry.kind !== 'user-attachment') return [];
    if (typeof entry.sandbox_path !== 'string' || typeof entry.sha256 !== 'string') return [];
    const sandboxPath = uploadInSandbox(entry.sandbox_path);
    if (sandboxPath === null || !SHA256.test(entry.sha256)) return [];
    return [{ seq: row.seq, sandboxPath, sha256: entry.sha256 }];
  });
}

/**
 * Places `uploads` into `sandbox`, in order: a path that holds the upload's bytes already is left;
 * otherwise the upload is written there, replacing a regular file of other bytes (the user and the
 * model were told this path is this upload; the accepting box chose the name without this sandbox in
 * view, though never an earlier upload's, `uploadNames`). A folder or link at the path is left and
 * reported.
 * `copyOf(sha256)` is the agent's local attachment copy (fetched from the bucket when missing), or
 * null when the agent has none.
 */
export async function placeUploads(
  sandbox: string,
  uploads: readonly RecordedUpload[],
  copyOf: (sha256: string) => Promise<string | null>,
): Promise<Placement> {
  const result: Placement = { placed: [], present: [], failed: [] };
  for (const upload of uploads) {
    try {
      if (await holds(sandbox, upload.sandboxPath, upload.sha256)) {
        result.present.push(upload.sandboxPath);
        continue;
      }
      const copy = await copyOf(upload.sha256);
      if (copy === null) throw new Error(`the agent has no stored copy of ${upload.sha256}`);
      await writeInSandbox(sandbox, upload.sandboxPath, checkedBytes(copy, upload.sha256));
      result.placed.push(upload.sandboxPath);
    } catch (error) {
      result.failed.push({
        upload,
        error: new Error(
          `the upload ${upload.sandboxPath} was not placed in the sandbox ${sandbox}: ${(error as Error).message}`,
          { cause: error },
        ),
      });
    }
  }
  return result;
}

/** True when `relative` is a regular file of the sandbox (reached without a link) whose bytes hash to `sha256`. */
async function holds(sandbox: string, relative: string, sha256: string): Promise<boolean> {
  const opened = await openInSandbox(sandbox, relative).catch(() => null);
  if (opened === null) return false;
  try {
    const hash = createHash('sha256');
    for await (const chunk of opened.handle.createReadStream({ autoClose: false }))
      hash.update(chunk as Buffer);
    return hash.digest('hex') === sha256;
  } finally {
    await opened.handle.close();
  }
}

/** The bytes of `file`, failing at their end unless they hash to `sha256` (the writer then keeps nothing). */
async function* checkedBytes(file: string, sha256: string): AsyncIterable<Uint8Array> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) {
    hash.update(chunk as Buffer);
    yield chunk as Buffer;
  }
  const actual = hash.digest('hex');
  if (actual !== sha256) {
    throw new Error(`its stored copy ${file} hashes to ${actual}, not ${sha256}; restore it from a backup`);
  }
}
