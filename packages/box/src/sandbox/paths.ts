/**
 * Host-side file work in an agent's sandbox folder that the agent cannot turn
 * against the host. A model-supplied path is resolved beneath the sandbox one
 * component at a time, refusing every symbolic link (the agent made them, so
 * none is followed); the file is opened with O_NOFOLLOW|O_NONBLOCK (a FIFO
 * cannot block a thread) and must be a regular file; the opened descriptor is
 * checked once more through /proc/self/fd, so a folder swapped for a link
 * between the walk and the open is caught. New files are created with O_EXCL.
 * Every operation has a deadline. Errors are written for the model.
 */
import { randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import {
  lchown,
  link,
  lstat,
  mkdir,
  open,
  readlink,
  realpath,
  rename,
  rm,
  rmdir,
  unlink,
  type FileHandle,
} from 'node:fs/promises';
import path from 'node:path';
import { removeAtomicTemps } from '../fs/atomic.ts';

/** Longest a host-side file operation in a sandbox may take before it is given up. */
export const FILE_OP_TIMEOUT_MS = 10_000;

const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const CREATE_FLAGS =
  constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_NONBLOCK;

export class OutsideSandboxError extends Error {
  constructor(
    readonly requested: string,
    readonly sandboxDir: string,
    detail: string,
  ) {
    super(
      `The path ${JSON.stringify(requested)} ${detail}. Only files inside your sandbox folder ` +
        `${sandboxDir} can be used: write or copy the file there and use a path relative to it.`,
    );
    this.name = 'OutsideSandboxError';
  }
}

/** A path that is not a plain file or folder of the sandbox (a link, a FIFO, a socket, a device...). */
export class NotRegularFileError extends Error {
  constructor(requested: string, what: string) {
    super(
      `${JSON.stringify(requested)} is ${what}, not a regular file. Host-side file tools only use regular ` +
        'files and folders, and never follow symbolic links; use the real file (copy it with shell if needed).',
    );
    this.name = 'NotRegularFileError';
  }
}

export function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

export function isNotFound(error: unknown): boolean {
  return error instanceof Error && 'code' in error && (error as NodeJS.ErrnoException).code === 'ENOENT';
}

/** Runs `operation` with a deadline; on expiry the caller gets a model-readable error (the work is abandoned). */
export async function withDeadline<T>(
  what: string,
  operation: () => Promise<T>,
  timeoutMs = FILE_OP_TIMEOUT_MS,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not finish within ${timeoutMs / 1000} s and was given up.`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([operation(), expired]);
  } finally {
    clearTimeout(timer);
  }
}

function kindOf(info: Stats): string {
  if (info.isSymbolicLink()) return 'a symbolic link';
  if (info.isDirectory()) return 'a folder';
  if (info.isFIFO()) return 'a named pipe (FIFO)';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

interface Beneath {
  /** The sandbox's real path. */
  root: string;
  /** The path's components below the root (empty for the root itself). */
  parts: string[];
}

/** Splits `requested` (absolute, or relative to the sandbox) into components below the sandbox root. */
async function beneath(sandboxDir: string, requested: string): Promise<Beneath> {
  const root = await realpath(sandboxDir);
  const given = path.resolve(sandboxDir);
  const absolute = path.resolve(root, requested);
  let rel: string;
  if (isInside(root, absolute)) rel = path.relative(root, absolute);
  else if (isInside(given, path.resolve(given, requested)))
    rel = path.relative(given, path.resolve(given, requested));
  else throw new OutsideSandboxError(requested, sandboxDir, 'is outside your sandbox folder');
  return { root, parts: rel === '' ? [] : rel.split(path.sep) };
}

/**
 * Walks the folders of `parts` below `root` without following a link; with
 * `create`, missing folders are made (owned like the sandbox root).
 */
async function walkFolders(
  requested: string,
  at: Beneath,
  folders: string[],
  create: { owner: Stats } | null,
): Promise<string> {
  let current = at.root;
  for (const part of folders) {
    const next = path.join(current, part);
    const info = await lstat(next).catch((error: unknown) => {
      if (isNotFound(error)) return null;
      throw error;
    });
    if (info === null) {
      if (!create) throw new Error(`No file at ${JSON.stringify(requested)} in your sandbox folder.`);
      await mkdir(next, { mode: 0o755 }).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error;
      });
      const made = await lstat(next);
      if (!made.isDirectory()) throw new NotRegularFileError(requested, `inside ${kindOf(made)}`);
      await handOver(next, create.owner);
    } else if (info.isSymbolicLink()) {
      throw new NotRegularFileError(requested, `inside a symbolic link (${path.relative(at.root, next)})`);
    } else if (!info.isDirectory()) {
      throw new NotRegularFileError(requested, `inside ${kindOf(info)} (${path.relative(at.root, next)})`);
    }
    current = next;
  }
  return current;
}

/** The host (root) hands what it creates to the sandbox's owner, so confined commands can change it. */
async function handOver(file: string, owner: Stats, handle?: FileHandle): Promise<void> {
  if (process.getuid?.() !== 0 || owner.uid === 0) return;
  if (handle) await handle.chown(owner.uid, owner.gid);
  else await lchown(file, owner.uid, owner.gid);
}

/** The opened file must really lie inside the sandbox (a folder may have been swapped for a link meanwhile). */
async function checkOpened(handle: FileHandle, root: string, requested: string, sandboxDir: string) {
  const real = await readlink(`/proc/self/fd/${handle.fd}`).catch(() => null);
  if (real !== null && !isInside(root, real)) {
    throw new OutsideSandboxError(requested, sandboxDir, `resolves to ${real}, outside your sandbox folder`);
  }
}

export interface OpenedFile {
  handle: FileHandle;
  /** The file's path on the host. */
  path: string;
  info: Stats;
}

/** Opens an existing regular file of the sandbox for reading. The caller closes the handle. */
export async function openInSandbox(sandboxDir: string, requested: string): Promise<OpenedFile> {
  const at = await beneath(sandboxDir, requested);
  const name = at.parts.at(-1);
  if (name === undefined) throw new NotRegularFileError(requested, 'your sandbox folder itself');
  const dir = await walkFolders(requested, at, at.parts.slice(0, -1), null);
  const file = path.join(dir, name);
  let handle: FileHandle;
  try {
    handle = await open(file, READ_FLAGS);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new Error(`No file at ${JSON.stringify(requested)} in your sandbox folder.`);
    const info = await lstat(file).catch(() => null);
    if (info && !info.isFile()) throw new NotRegularFileError(requested, kindOf(info));
    throw new Error(`Cannot read ${JSON.stringify(requested)}: ${(error as Error).message}`);
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new NotRegularFileError(requested, kindOf(info));
    if (info.nlink > 1) {
      throw new NotRegularFileError(
        requested,
        `a file with ${info.nlink} hard links (it may be a file from outside)`,
      );
    }
    await checkOpened(handle, at.root, requested, sandboxDir);
    return { handle, path: file, info };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** The real path of an existing folder of the sandbox, reached without following a link. */
export async function folderInSandbox(sandboxDir: string, requested: string): Promise<string> {
  const at = await beneath(sandboxDir, requested);
  return walkFolders(requested, at, at.parts, null);
}

/**
 * Creates or replaces a regular file of the sandbox: parent folders made as
 * needed, the bytes written to a new (O_EXCL) temp file beside it, fsynced,
 * then renamed over the target, which must be absent or a regular file.
 */
export async function writeInSandbox(
  sandboxDir: string,
  requested: string,
  data: FileData,
  options: { mode?: number } = {},
): Promise<string> {
  const at = await beneath(sandboxDir, requested);
  const name = at.parts.at(-1);
  if (name === undefined) throw new NotRegularFileError(requested, 'your sandbox folder itself');
  const owner = await lstat(at.root);
  const dir = await walkFolders(requested, at, at.parts.slice(0, -1), { owner });
  const target = path.join(dir, name);
  const existing = await lstat(target).catch(() => null);
  if (existing && !existing.isFile()) throw new NotRegularFileError(requested, kindOf(existing));
  const temp = path.join(dir, sandboxTempName(name));
  await createFile(temp, data, at, owner, requested, sandboxDir, options.mode);
  try {
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  return target;
}

/**
 * Creates a new file in a folder of the sandbox under `name`, or `name (1)`,
 * `name (2)`... when taken. The bytes go to a new (O_EXCL) temp file first,
 * fsynced, then get their name by `link`, which never replaces an entry and
 * never follows one (a planted link included): a kill midway leaves only a
 * temp file (removed at start by `removeSandboxUploadTemps`), never a partial
 * file under the user's name. Returns the host path.
 */
export async function createNewInSandbox(
  sandboxDir: string,
  folder: string,
  name: string,
  data: Uint8Array,
  /** Names never given, though the folder may lack them here (the names of earlier uploads). */
  taken: ReadonlySet<string> = new Set(),
): Promise<string> {
  const at = await beneath(sandboxDir, path.join(folder, name));
  const owner = await lstat(at.root);
  const dir = await walkFolders(folder, at, at.parts.slice(0, -1), { owner });
  const dot = name.lastIndexOf('.');
  const stem = dot > 0 ? name.slice(0, dot) : name;
  const ext = dot > 0 ? name.slice(dot) : '';
  const temp = path.join(dir, sandboxTempName(name));
  await createFile(temp, data, at, owner, path.join(folder, name), sandboxDir);
  try {
    for (let i = 0; i < 1000; i++) {
      const candidate = i === 0 ? name : `${stem} (${i})${ext}`;
      if (taken.has(candidate)) continue;
      const file = path.join(dir, candidate);
      try {
        await link(temp, file);
        return file;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
    throw new Error(`${folder} holds too many files named like ${name}`);
  } finally {
    await rm(temp, { force: true });
  }
}

/**
 * Creates a new, empty regular file of the sandbox (O_EXCL, never following a link; parent
 * folders made as needed) and returns it open for reading and writing: the host writes a
 * background command's output into it and reads it back. The caller closes the handle.
 */
export async function createOpenInSandbox(
  sandboxDir: string,
  requested: string,
  mode = 0o644,
): Promise<{ handle: FileHandle; path: string }> {
  const at = await beneath(sandboxDir, requested);
  const name = at.parts.at(-1);
  if (name === undefined) throw new NotRegularFileError(requested, 'your sandbox folder itself');
  const owner = await lstat(at.root);
  const dir = await walkFolders(requested, at, at.parts.slice(0, -1), { owner });
  const file = path.join(dir, name);
  const handle = await open(file, (CREATE_FLAGS & ~constants.O_WRONLY) | constants.O_RDWR, mode);
  try {
    await checkOpened(handle, at.root, requested, sandboxDir);
    return { handle, path: file };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/**
 * Removes one regular file or one empty folder of the sandbox, never the sandbox itself and never
 * through a link: the folders are walked without following one, the parent is then opened
 * O_NOFOLLOW and checked through /proc/self/fd, and the entry is removed by a path through that
 * descriptor (an unlinkat on the checked folder). A link is refused, not removed.
 */
export async function removeInSandbox(sandboxDir: string, requested: string): Promise<'file' | 'folder'> {
  const at = await beneath(sandboxDir, requested);
  const name = at.parts.at(-1);
  if (name === undefined) throw new NotRegularFileError(requested, 'your sandbox folder itself');
  const dir = await walkFolders(requested, at, at.parts.slice(0, -1), null);
  const parent = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    await checkOpened(parent, at.root, requested, sandboxDir);
    const entry = `/proc/self/fd/${parent.fd}/${name}`;
    const info = await lstat(entry).catch((error: unknown) => {
      if (isNotFound(error))
        throw new Error(`No file or folder at ${JSON.stringify(requested)} in your sandbox folder.`);
      throw error;
    });
    if (info.isFile()) {
      await unlink(entry);
      return 'file';
    }
    if (info.isDirectory()) {
      await rmdir(entry).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOTEMPTY' || error.code === 'EEXIST') {
          throw new Error(
            `${JSON.stringify(requested)} is a folder that is not empty. delete removes one file or one empty ` +
              'folder: delete the files inside it first (ls shows them).',
          );
        }
        throw error;
      });
      return 'folder';
    }
    throw new NotRegularFileError(requested, kindOf(info));
  } finally {
    await parent.close();
  }
}

/** `.<name>.<12 hex>.tmp`, the temp name of the sandbox writes above. */
function sandboxTempName(name: string): string {
  return `.${name}.${randomBytes(6).toString('hex')}.tmp`;
}

/**
 * Removes the temp files a killed box left in the sandbox's `folder` (not
 * below). Only at start, before any tool of the agent runs, and only when
 * `folder` is a real folder reached without a link.
 */
export async function removeSandboxTemps(sandboxDir: string, folder: string): Promise<void> {
  let dir: string;
  try {
    dir = await folderInSandbox(sandboxDir, folder);
  } catch {
    return;
  }
  await removeAtomicTemps(dir);
}

/**
 * What a sandbox file is written from: text, bytes, byte chunks written in order with no copy, or a
 * stream of bytes (a failing stream leaves nothing).
 */
export type FileData = string | Uint8Array | readonly Uint8Array[] | AsyncIterable<Uint8Array>;

/** Writes `chunks` in order from the file's start, as one `writev` unless the kernel takes less. */
async function writeChunks(handle: FileHandle, chunks: readonly Uint8Array[]): Promise<void> {
  let rest = chunks.filter((chunk) => chunk.length > 0);
  let position = 0;
  while (rest.length > 0) {
    let { bytesWritten } = await handle.writev(rest, position);
    if (bytesWritten === 0) throw new Error('the file system took no bytes of a write');
    position += bytesWritten;
    // A short write: drop what was written and go on from there.
    while (rest.length > 0 && bytesWritten >= rest[0]!.length) bytesWritten -= rest.shift()!.length;
    if (bytesWritten > 0) rest = [rest[0]!.subarray(bytesWritten), ...rest.slice(1)];
  }
}

async function createFile(
  file: string,
  data: FileData,
  at: Beneath,
  owner: Stats,
  requested: string,
  sandboxDir: string,
  mode?: number,
): Promise<void> {
  const handle = await open(file, CREATE_FLAGS, 0o644);
  try {
    await checkOpened(handle, at.root, requested, sandboxDir);
    await handOver(file, owner, handle);
    // An explicit mode (an edit keeps the file's own) after the owner change, which clears set-id bits.
    if (mode !== undefined) await handle.chmod(mode & 0o777);
    if (Array.isArray(data)) await writeChunks(handle, data);
    else await handle.writeFile(data as string | Uint8Array | AsyncIterable<Uint8Array>);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(file, { force: true });
    throw error;
  }
  await handle.close();
}
