/**
 * Write a file so that readers see the old content or the whole new one,
 * never a part: a temp file in the same folder, fsync, rename over the target.
 */
import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';

export async function writeFileAtomic(path: string, text: string): Promise<void> {
  const target = resolve(path);
  const temp = join(
    dirname(target),
    `.${basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
  );
  const handle = await open(temp, 'wx', 0o666);
  try {
    try {
      await handle.writeFile(text, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, target);
  } catch (err) {
    await unlink(temp).catch(() => undefined);
    throw err;
  }
  // Make the rename itself durable; not every filesystem lets a folder be fsynced.
  const dir = await open(dirname(target), 'r').catch(() => undefined);
  if (dir !== undefined) {
    await dir.sync().catch(() => undefined);
    await dir.close();
  }
}
