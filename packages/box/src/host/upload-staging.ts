/**
 * The upload path: a user's file goes into the agent's attachment store
 * (content-addressed) and into its sandbox (`uploads/<name>`, where tools see
 * it). The session records the `user-attachment` entry after both are in place.
 * Both copies are written to a temp file and renamed, so a crash leaves no
 * part-written file under a real name (temp files are removed on start).
 */
import { randomBytes } from 'node:crypto';
import { access, mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AttachmentTooLargeError, type AttachmentStore, type StoredFile } from '../attachments/store.ts';
import { HostError, StoreWriteError } from './types.ts';
import { WritePoints } from './write-points.ts';

export interface StagedUpload {
  /** The file name as recorded: a plain name, never a path. */
  fileName: string;
  stored: StoredFile;
  /** Where the copy in the sandbox is. */
  sandboxPath: string;
}

const TEMP_PREFIX = '.sendbox-upload-';
const TEMP_SUFFIX = '.partial';

/** A plain file name from what the client sent: no separators, no leading dots, at most 200 characters. */
export function safeUploadName(fileName: string): string {
  return (
    fileName
      .replace(/[/\\\0]/g, '_')
      .replace(/^\.+/, '_')
      .slice(0, 200) || 'upload'
  );
}

/** The sandbox folder uploads land in. */
export function uploadsDir(sandbox: string): string {
  return path.join(sandbox, 'uploads');
}

export async function stageUpload(
  attachments: AttachmentStore,
  sandbox: string,
  fileName: string,
  bytes: Uint8Array,
  points: WritePoints = new WritePoints(),
): Promise<StagedUpload> {
  const safeName = safeUploadName(fileName);
  let stored;
  try {
    points.pass('upload');
    stored = await attachments.ingestBytes(bytes, safeName);
  } catch (error) {
    if (error instanceof AttachmentTooLargeError) throw new HostError(error.message, 413);
    throw new StoreWriteError('upload', `the upload ${safeName}`, error);
  }
  const dir = uploadsDir(sandbox);
  const temp = path.join(dir, `${TEMP_PREFIX}${randomBytes(8).toString('hex')}${TEMP_SUFFIX}`);
  try {
    await mkdir(dir, { recursive: true });
    await writeFile(temp, bytes, { mode: 0o644, flag: 'wx' });
    // Between the temp file and its name: a crash here leaves the temp that start-up removes.
    points.pass('upload');
    const sandboxPath = path.join(dir, await freeName(dir, safeName));
    await rename(temp, sandboxPath);
    return { fileName: safeName, stored, sandboxPath };
  } catch (error) {
    await rm(temp, { force: true });
    throw new StoreWriteError('upload', `the upload ${safeName}`, error);
  }
}

/** Removes temp files an interrupted upload left in the sandbox's uploads folder. */
export async function removeUploadTemps(sandbox: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(uploadsDir(sandbox));
  } catch {
    return;
  }
  for (const name of names) {
    if (name.startsWith(TEMP_PREFIX) && name.endsWith(TEMP_SUFFIX)) {
      await rm(path.join(uploadsDir(sandbox), name), { force: true });
    }
  }
}

/** `name`, or `stem (1).ext`, `stem (2).ext`… : the first that does not exist in `dir`. */
export async function freeName(dir: string, name: string): Promise<string> {
  const dot = name.lastIndexOf('.');
  const stem = dot > 0 ? name.slice(0, dot) : name;
  const ext = dot > 0 ? name.slice(dot) : '';
  for (let i = 0; ; i++) {
    const candidate = i === 0 ? name : `${stem} (${i})${ext}`;
    try {
      await access(`${dir}/${candidate}`);
    } catch {
      return candidate;
    }
  }
}
