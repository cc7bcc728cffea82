/**
 * Atomic file replacement: write a temp file in the same folder, fsync it,
 * rename it over the target, fsync the folder. A crash leaves either the old
 * file or the new one, never a torn one.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';

export async function writeFileAtomic(
  target: string,
  data: string | Uint8Array,
  options: { mode?: number } = {},
): Promise<void> {
  const dir = path.dirname(target);
  const temp = path.join(dir, `.${path.basename(target)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', options.mode ?? 0o600);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await syncDir(dir);
}

/** `.<name>.<12 hex>.tmp`: the temp file name `writeFileAtomic` uses. */
const TEMP_NAME = /^\..+\.[0-9a-f]{12}\.tmp$/;

/** Removes temp files of atomic writes a killed process never renamed (in `dir`, not below). */
export async function removeAtomicTemps(dir: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) if (TEMP_NAME.test(name)) await rm(path.join(dir, name), { force: true });
}

export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } catch {
    // Some filesystems refuse fsync on a directory; the rename is still atomic there.
  } finally {
    await handle.close();
  }
}

/** mkdir -p with mode 0700 for folders the box owns (C11). */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
}
