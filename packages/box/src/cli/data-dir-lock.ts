/**
 * One box per data dir. `serve` holds an exclusive OS lock on
 * `<data-dir>/sendbox.lock` for as long as it runs: a SQLite connection in an
 * open `BEGIN EXCLUSIVE` transaction (fcntl locks through better-sqlite3,
 * which the box already ships; Node has no flock of its own). The kernel
 * drops the lock when the process ends, however it ends, so the lock of a
 * dead box is taken over at once and two boxes can never both hold it.
 *
 * Who holds it is in `sendbox.lock.json` (PID, address once the gateway
 * listens), so a second `serve` can say which box runs there.
 */
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

export function lockPaths(dataDir: string): { lock: string; owner: string } {
  return { lock: path.join(dataDir, 'sendbox.lock'), owner: path.join(dataDir, 'sendbox.lock.json') };
}

/** Takes the data dir's lock, or throws DataDirLockedError naming the box that holds it. */
export async function lockDataDir(dataDir: string, pid = process.pid): Promise<DataDirLock> {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const paths = lockPaths(dataDir);
  const db = new Database(paths.lock, { timeout: 0 });
  try {
    db.pragma('journal_mode = DELETE');
    db.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    db.close();
    if ((error as { code?: unknown }).code === 'SQLITE_BUSY') {
      throw new DataDirLockedError(dataDir, readOwner(paths.owner));
    }
    throw error;
  }
  const owner: LockOwner = { pid, startedAt: Date.now(), url: null };
  const write = (): Promise<void> =>
    writeFileAtomic(paths.owner, `${JSON.stringify(owner, null, 2)}\n`, { mode: 0o600 });
  await write();
  let held = true;
  return {
    async announce(url) {
      owner.url = url;
      await write();
    },
    release() {
      if (!held) return;
      held = false;
      // The owner file first: while the lock is held, nobody else writes it.
      fs.rmSync(paths.owner, { force: true });
      db.close();
    },
  };
}

function readOwner(file: string): LockOwner | null {
  try {
    const parsed = ownerSchema.safeParse(JSON.parse(fs.readFileSync(file, 'utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
