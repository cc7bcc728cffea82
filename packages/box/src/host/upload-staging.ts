/**
 * The upload path: a user's file goes into the agent's attachment store
 * (content-addressed) and into its sandbox (`uploads/<name>`, where tools see
 * it). The session records the `user-attachment` entry after both are in place.
 */
import { access, mkdir, writeFile } from 'node:fs/promises';
import type { AttachmentStore, StoredFile } from '../attachments/store.ts';
import { HostError } from './types.ts';

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
  attachments: AttachmentStore,
  sandbox: string,
  fileName: string,
  bytes: Uint8Array,
): Promise<StagedUpload> {
  const safeName = safeUploadName(fileName);
  let stored;
  try {
    stored = await attachments.ingestBytes(bytes, safeName);
  } catch (error) {
    throw new HostError((error as Error).message, 413);
  }
  const uploadsDir = `${sandbox}/uploads`;
  await mkdir(uploadsDir, { recursive: true });
  const sandboxPath = `${uploadsDir}/${await freeName(uploadsDir, safeName)}`;
  await writeFile(sandboxPath, bytes, { mode: 0o644 });
  return { fileName: safeName, stored, sandboxPath };
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
