/**
 * One box per data dir. `serve` holds an exclusive `flock` on the data dir itself (an open
 * descriptor of the folder) for as long as it runs. Nothing in the folder can be deleted to
 * let a second box in, and the kernel drops the lock when the process ends, however it ends,
 * so the lock of a dead box is taken over at once. Node has no flock of its own: util-linux's
 * `flock` takes it on the descriptor the box hands it, and the lock stays with that open
 * descriptor, which the box keeps (and its children never inherit: Node opens with O_CLOEXEC).
 *
 * The folder itself can still be moved or replaced under a running box; the box checks every
 * few seconds that the path still names the folder it locked, and stops if not.
 *
 * Who holds it is in `sendbox.lock.json` (PID, address once the gateway listens), so a second
 * `serve` can say which box runs there.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { z } from 'zod';
import { writeFileAtomic } from '../fs/atomic.ts';

const ownerSchema = z.object({
  pid: z.number().int(),
  startedAt: z.number(),
  url: z.string().nullable(),
});
export type LockOwner = z.infer<typeof ownerSchema>;

/** How often a running box checks that its data dir is still the folder it locked. */
export const DATA_DIR_CHECK_MS = 5_000;

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly owner: LockOwner | null,
  ) {
    const who = owner
      ? `PID ${owner.pid}${owner.url ? `, serving ${owner.url}` : ', still starting'}`
      : 'its PID is not recorded yet';
    super(
      `another sendbox is running on the data dir ${dataDir} (${who}); ` +
        'stop it first, or start this one with --data-dir <another folder>',
    );
    this.name = 'DataDirLockedError';
  }
}

export interface DataDirLock {
  /** Records the address the gateway listens on, for the next box that finds the lock taken. */
  announce(url: string): Promise<void>;
  release(): void;
}

export interface DataDirLockOptions {
  pid?: number;
  /** Called once if the data dir's path stops naming the locked folder (moved, deleted, replaced). */
  onLost?: (reason: string) => void;
  checkEveryMs?: number;
}

export function lockPaths(dataDir: string): { owner: string; legacy: string } {
  return {
    owner: path.join(dataDir, 'sendbox.lock.json'),
    // Boxes before this lock held a SQLite lock on this file.
    legacy: path.join(dataDir, 'sendbox.lock'),
  };
}

/** Takes the data dir's lock, or throws DataDirLockedError naming the box that holds it. */
export async function lockDataDir(dataDir: string, options: DataDirLockOptions = {}): Promise<DataDirLock> {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const paths = lockPaths(dataDir);
  const fd = fs.openSync(dataDir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  let taken: boolean;
  try {
    taken = flockExclusive(fd, dataDir) && !legacyBoxRuns(paths.legacy);
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
  if (!taken) {
    fs.closeSync(fd);
    throw new DataDirLockedError(dataDir, readOwner(paths.owner));
  }
  const locked = fs.fstatSync(fd);
  const owner: LockOwner = { pid: options.pid ?? process.pid, startedAt: Date.now(), url: null };
  const write = (): Promise<void> =>
    writeFileAtomic(paths.owner, `${JSON.stringify(owner, null, 2)}\n`, { mode: 0o600 });
  await write();
  let held = true;
  const check = setInterval(() => {
    const now = statOrNull(dataDir);
    if (now !== null && now.ino === locked.ino && now.dev === locked.dev) return;
    clearInterval(check);
    options.onLost?.(
      `the data dir ${dataDir} is no longer the folder this box locked (it was moved, deleted or replaced)`,
    );
  }, options.checkEveryMs ?? DATA_DIR_CHECK_MS);
  check.unref();
  return {
    async announce(url) {
      owner.url = url;
      await write();
    },
    release() {
      if (!held) return;
      held = false;
      clearInterval(check);
      // The owner file first: while the lock is held, nobody else writes it.
      fs.rmSync(paths.owner, { force: true });
      fs.closeSync(fd);
    },
  };
}

/**
 * `flock -x -n` on the descriptor, through util-linux's `flock`, which gets it as its fd 3: the
 * lock belongs to the open file description, shared with this process, and outlives the helper.
 * False when another box holds it.
 */
function flockExclusive(fd: number, dataDir: string): boolean {
  const result = spawnSync('flock', ['--exclusive', '--nonblock', '3'], {
    stdio: ['ignore', 'ignore', 'pipe', fd],
    encoding: 'utf8',
  });
  if (result.error !== undefined) {
    throw new Error(
      `cannot lock the data dir ${dataDir}: the flock command did not run (${result.error.message}); ` +
        'install util-linux (apt-get install -y util-linux)',
    );
  }
  if (result.status === 1) return false;
  if (result.status !== 0) {
    throw new Error(
      `cannot lock the data dir ${dataDir}: flock said ${result.stderr.trim() || `exit ${result.status}`}`,
    );
  }
  return true;
}

/** Whether a box of an earlier version runs: it holds a SQLite lock on `sendbox.lock`. A leftover one is removed. */
function legacyBoxRuns(file: string): boolean {
  if (!fs.existsSync(file)) return false;
  const db = new Database(file, { timeout: 0 });
  try {
    db.exec('BEGIN EXCLUSIVE');
    db.exec('ROLLBACK');
  } catch (error) {
    if ((error as { code?: unknown }).code === 'SQLITE_BUSY') return true;
    throw error;
  } finally {
    db.close();
  }
  // Nobody holds it: a leftover of an earlier version.
  fs.rmSync(file, { force: true });
  for (const suffix of ['-journal', '-wal', '-shm']) fs.rmSync(`${file}${suffix}`, { force: true });
  return false;
}

function statOrNull(file: string): fs.Stats | null {
  try {
    return fs.statSync(file);
  } catch {
    return null;
  }
}

function readOwner(file: string): LockOwner | null {
  try {
    const parsed = ownerSchema.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
