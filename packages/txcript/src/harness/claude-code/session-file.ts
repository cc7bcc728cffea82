/**
 * File-system pieces shared by the Claude Code and Codex stores: session id
 * safety, the home directory from an env, UUID session ids, and the atomic,
 * no-clobber creation of a session file.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs, type Dirent } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { uuidV5 } from '../../model/uuid.ts';
import type { Store } from '../types.ts';

/** Refuse ids that could escape a sessions folder: `/`, `\`, `..`, NUL, or empty. */
export function assertSafeSessionId(id: string, harness: string): void {
  if (id === '' || id.includes('/') || id.includes('\\') || id.includes('..') || id.includes('\0')) {
    throw new Error(
      `${harness}: refusing session id ${JSON.stringify(id)}: an id must be a single path component ` +
        '(no "/", "\\", ".." or NUL). Pass the bare session id as listed by `txcript list`.',
    );
  }
}

/** `$HOME` from the given env, falling back to the OS account's home. */
export function homeDir(env: NodeJS.ProcessEnv): string {
  const home = env.HOME ?? env.USERPROFILE;
  return home !== undefined && home !== '' ? home : os.homedir();
}

/** A non-empty env value, or undefined. */
export function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name];
  return v !== undefined && v !== '' ? v : undefined;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(s: string): boolean {
  return UUID_RE.test(s);
}

/** Namespace for session ids derived from non-UUID Common ids (fixed, random). */
const SESSION_NS = '5f0c1e7a-93a4-4f4e-9b1d-2f6c8d7e0a31';

/**
 * Both tools key sessions by UUID: a Common id that already is one is kept
 * (lower-cased), any other id maps to a stable UUIDv5 of it.
 */
export function sessionUuid(commonId: string): string {
  return isUuid(commonId) ? commonId.toLowerCase() : uuidV5(SESSION_NS, commonId);
}

/** A store that can write: both harness stores save. */
export type SavingStore = Store & Required<Pick<Store, 'save'>>;

/** The file at `target` already holds a session; saving never replaces one. */
export class SessionExistsError extends Error {
  constructor(readonly target: string) {
    super(
      `refusing to overwrite the existing session file ${target}; ` +
        'give the transcript a new id (e.g. a fresh UUID) to save a copy.',
    );
    this.name = 'SessionExistsError';
  }
}

/**
 * Create `target` with `text` atomically and never over an existing file:
 * write a temp file in the same folder, fsync it, then hard-link it into
 * place (link fails with EEXIST instead of replacing, unlike rename), and
 * fsync the folder. File systems without hard links fall back to an
 * existence check followed by rename.
 */
export async function createFileAtomically(target: string, text: string): Promise<void> {
  const dir = path.dirname(target);
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const temp = path.join(
    dir,
    `.${path.basename(target)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`,
  );
  const handle = await fs.open(temp, 'wx', 0o600);
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    try {
      await fs.link(temp, target);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') throw new SessionExistsError(target);
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EXDEV' && code !== 'ENOSYS') throw e;
      if (await exists(target)) throw new SessionExistsError(target);
      await fs.rename(temp, target);
    }
  } finally {
    await fs.rm(temp, { force: true });
  }
  await syncDir(dir);
}

async function syncDir(dir: string): Promise<void> {
  let handle: fs.FileHandle | undefined;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch {
    // Some platforms cannot fsync a directory; the file itself is synced.
  } finally {
    await handle?.close();
  }
}

export async function exists(p: string): Promise<boolean> {
  try {
    await fs.access(p);
    return true;
  } catch {
    return false;
  }
}

/** Entries of a folder, or none when it is missing or unreadable. */
export async function readDirSafe(dir: string): Promise<Dirent[]> {
  try {
    return await fs.readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}
