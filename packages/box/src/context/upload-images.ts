/**
 * The images users uploaded, as the model view shows them (images.ts): read from the agent's
 * content-addressed attachment store (immutable, so a scaled copy is kept by its hash for the
 * next model calls) and scaled like `read`'s images. A stored file that is not an image is null.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { SequencedEntry } from '../stores/ledger.ts';
import { imageForModel, imageTypeOf } from '../tools/read/image.ts';
import type { ModelImageData } from './images.ts';
import { uploadInSandbox } from '../agent/upload-placement.ts';

export interface StoredUpload {
  /** The stored copy's path in the attachment store. */
  storedPath: string;
  sha256: string;
}

const KEPT = 32;

export function uploadedImageLoader(
  find: (sandboxPath: string) => StoredUpload | undefined,
): (sandboxPath: string) => Promise<ModelImageData | null> {
  const scaled = new Map<string, Promise<ModelImageData | null>>();
  return (sandboxPath) => {
    const upload = find(sandboxPath);
    if (!upload) return Promise.resolve(null);
    let image = scaled.get(upload.sha256);
    if (!image) {
      image = load(upload.storedPath);
      scaled.set(upload.sha256, image);
      // The oldest goes first: a long conversation with many images keeps the last few.
      if (scaled.size > KEPT) scaled.delete(scaled.keys().next().value!);
    }
    return image;
  };
}

async function load(storedPath: string): Promise<ModelImageData | null> {
  let bytes: Buffer;
  try {
    bytes = await readFile(storedPath);
  } catch {
    return null; // removed from the store: the text still names the file
  }
  const type = imageTypeOf(bytes);
  if (!type) return null;
  try {
    const image = await imageForModel(bytes, type);
    return { data: image.data, mediaType: image.mediaType };
  } catch {
    return null; // undecodable: the model still sees the path and can read it
  }
}

/** The same upload place: the same path, or `uploads/<name>` in two boxes' sandboxes (upload-placement.ts). */
function samePlace(recorded: unknown, told: string): boolean {
  if (recorded === told) return true;
  if (typeof recorded !== 'string') return false;
  const here = uploadInSandbox(told);
  return here !== null && uploadInSandbox(recorded) === here;
}

/**
 * The stored copy of the upload last placed at `sandboxPath`, from the agent's `user-attachment`
 * entries: only a file directly in the agent's own attachment folder (an entry another writer
 * added cannot point the model view at another file of the host).
 */
export function uploadFinder(
  entries: () => readonly SequencedEntry[],
  attachmentsDir: string,
): (sandboxPath: string) => StoredUpload | undefined {
  return (sandboxPath) => {
    const all = entries();
    for (let at = all.length - 1; at >= 0; at--) {
      const entry = all[at] as SequencedEntry & {
        sandbox_path?: unknown;
        file_path?: unknown;
        sha256?: unknown;
      };
      if (entry.kind !== 'user-attachment' || !samePlace(entry.sandbox_path, sandboxPath)) continue;
      if (typeof entry.file_path !== 'string' || typeof entry.sha256 !== 'string') return undefined;
      // The copy in this machine's attachment folder (a cluster worker other than the one that took the upload in has its own).
      const stored = path.basename(entry.file_path);
      if (stored !== entry.sha256 && !stored.startsWith(`${entry.sha256}.`)) return undefined;
      return { storedPath: path.join(attachmentsDir, stored), sha256: entry.sha256 };
    }
    return undefined;
  };
}
