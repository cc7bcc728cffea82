/**
 * The index built in the background (issue 23 item 3): a first search
 * answers from a scan (scan.ts) and starts `txcript index` as a detached
 * process, which keeps the index file up to date and ends. One such build at
 * a time: the starter claims `search-build.lock` beside the index (created
 * exclusively, holding the builder's pid); a lock whose process is gone is
 * stale and taken over. The lock only saves work: two builds at once stay
 * correct, as two refreshes do (they take turns on the file's write lock).
 */
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { indexFile } from './index-db.ts';

export function buildLockFile(env: NodeJS.ProcessEnv): string {
  return join(dirname(indexFile(env)), 'search-build.lock');
}

/** The pid in the lock, when the process holding it is alive; a stale lock is removed. */
export function runningBuild(env: NodeJS.ProcessEnv): number | undefined {
  const file = buildLockFile(env);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const pid = Number(text.trim());
  // Empty: the starter has claimed it and not yet written the pid (it does so right after the spawn).
  if (text.trim() === '') return -1;
  if (Number.isInteger(pid) && pid > 0 && alive(pid)) return pid;
  rmSync(file, { force: true });
  return undefined;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive, another user's (a recycled pid): not ours, but not provably stale either.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Claim the lock and start the build with `spawn` (which returns the
 * builder's pid); false when a build is already running or the lock cannot
 * be made (then no build starts: the next search tries again).
 */
export function startBuild(env: NodeJS.ProcessEnv, spawn: () => number | undefined): boolean {
  if (runningBuild(env) !== undefined) return false;
  const file = buildLockFile(env);
  let fd: number;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    fd = openSync(file, 'wx', 0o600);
  } catch {
    return false;
  }
  try {
    const pid = spawn();
    if (pid === undefined) {
      rmSync(file, { force: true });
      return false;
    }
    writeSync(fd, String(pid));
    return true;
  } finally {
    closeSync(fd);
  }
}

/**
 * For `txcript index`: hold the lock while `build` runs (taking it when free
 * or stale, keeping it when it names this process), and release it after.
 */
export async function holdingBuildLock<T>(env: NodeJS.ProcessEnv, build: () => Promise<T>): Promise<T> {
  const file = buildLockFile(env);
  let mine = runningBuild(env) === process.pid;
  if (!mine) {
    try {
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      mine = true;
    } catch {
      // Another build holds it: this one runs beside it, and leaves the lock to it.
    }
  }
  try {
    return await build();
  } finally {
    if (mine) rmSync(file, { force: true });
  }
}
