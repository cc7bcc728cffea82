/**
 * Atomic file writes: a reader sees the old content or the whole new one,
 * never a part. Text goes to a temp file in the target's folder, is fsynced,
 * then moved into place, and the folder is fsynced so the move survives a
 * crash. `writeFileAtomic` replaces the target; `createFileAtomic` refuses to.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { utf8Chunks } from './text-chunks.ts';

/** A file already stands where a new one was to be created; it is left as it was. */
export class FileExistsError extends Error {
  override readonly name = 'FileExistsError';
  constructor(readonly path: string) {
    super(
      `refusing to overwrite the existing file ${path}; saving never replaces a session: ` +
        'give the transcript a new id (e.g. a fresh UUID) to save a copy',
    );
  }
}

/** Write `text` (or its pieces, in chunks) to a fresh temp file beside `target` and (when `durable`) fsync it; returns the temp path. */
async function writeTemp(
  target: string,
  text: string | Iterable<string>,
  mode: number,
  durable = true,
): Promise<string> {
  const temp = path.join(
    path.dirname(target),
    `.${path.basename(target)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`,
  );
  const handle = await fs.open(temp, 'wx', mode);
  try {
    // writeFile on a handle writes from where the last write ended, and writes all of it.
    if (typeof text === 'string') await handle.writeFile(text, 'utf8');
    // Each chunk is written before the next is made (its bytes are reused).
    else for (const chunk of utf8Chunks(text)) await handle.writeFile(chunk);
    if (durable) await handle.sync();
  } catch (e) {
    await handle.close();
    await fs.rm(temp, { force: true });
    throw e;
  }
  await handle.close();
  return temp;
}

/** Make a rename or link in `dir` durable; not every platform can fsync a folder. */
async function syncDir(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r').catch(() => undefined);
  if (handle === undefined) return;
  try {
    await handle.sync();
  } catch {
    // The file itself is synced; the folder entry is as durable as the platform allows.
  } finally {
    await handle.close();
  }
}

/**
 * Replace (or create) `target` with `text` atomically; `text` may come in
 * pieces (written as they are made, the target replaced only once all are). The new file gets
 * `mode` (default 0666), narrowed by the umask. `durable: false` skips the
 * fsyncs, for files that may be lost in a crash but never seen half-written
 * (a cache): the move is still atomic.
 */
export async function writeFileAtomic(
  target: string,
  text: string | Iterable<string>,
  options: { mode?: number; durable?: boolean } = {},
): Promise<void> {
  const file = path.resolve(target);
  const durable = options.durable ?? true;
  const temp = await writeTemp(file, text, options.mode ?? 0o666, durable);
  try {
    await fs.rename(temp, file);
  } catch (e) {
    await fs.rm(temp, { force: true });
    throw e;
  }
  if (durable) await syncDir(path.dirname(file));
}

/**
 * Create `target` with `text` (or its pieces, as writeFileAtomic takes them)
 * atomically and never over an existing file
 * (creating missing folders, private to the user). The temp file is
 * hard-linked into place: unlike rename, link fails with EEXIST instead of
 * replacing. File systems without hard links fall back to an existence check
 * followed by rename. Throws FileExistsError when the target exists.
 */
export async function createFileAtomic(target: string, text: string | Iterable<string>): Promise<void> {
  const dir = path.dirname(target);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const temp = await writeTemp(target, text, 0o600);
  try {
    try {
      await fs.link(temp, target);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') throw new FileExistsError(target);
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EXDEV' && code !== 'ENOSYS') throw e;
      if (await exists(target)) throw new FileExistsError(target);
      await fs.rename(temp, target);
    }
  } finally {
    await fs.rm(temp, { force: true });
  }
  await syncDir(dir);
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.lstat(p);
    return true;
  } catch {
    return false;
  }
}
