/**
 * The data-dir lock on real folders and real processes: a second box is refused even when every
 * file of the lock is deleted, a killed box leaves its lock behind, a box of an earlier version
 * (its SQLite lock on `sendbox.lock`) still counts, and a running box notices when its data dir
 * is replaced.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DataDirLockedError, lockDataDir, lockPaths } from './data-dir-lock.ts';

let home: string;
let dataDir: string;
beforeEach(async () => {
  home = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'sendbox-lock-'));
  dataDir = path.join(home, 'agent-data');
});
afterEach(async () => {
  await fs.promises.rm(home, { recursive: true, force: true });
});

describe('the data-dir lock', () => {
  it('refuses a second box, naming the first, and lets the next one in after release', async () => {
    const first = await lockDataDir(dataDir);
    await first.announce('http://127.0.0.1:1340/');
    const second = lockDataDir(dataDir, { pid: 99 });
    await expect(second).rejects.toBeInstanceOf(DataDirLockedError);
    await expect(second).rejects.toThrow(`PID ${process.pid}, serving http://127.0.0.1:1340/`);
    first.release();
    expect(fs.existsSync(lockPaths(dataDir).owner)).toBe(false);
    (await lockDataDir(dataDir)).release();
  });

  it('is held on the folder itself: deleting every file in it never lets a second box in', async () => {
    const first = await lockDataDir(dataDir);
    try {
      for (const name of fs.readdirSync(dataDir)) fs.rmSync(path.join(dataDir, name), { force: true });
      fs.rmSync(path.join(dataDir, 'sendbox.lock'), { force: true });
      await expect(lockDataDir(dataDir)).rejects.toBeInstanceOf(DataDirLockedError);
      // Even a sendbox.lock made afresh (what an earlier version would lock) changes nothing.
      new Database(path.join(dataDir, 'sendbox.lock')).close();
      await expect(lockDataDir(dataDir)).rejects.toBeInstanceOf(DataDirLockedError);
    } finally {
      first.release();
    }
  });

  it('is dropped by the kernel when its process is killed', async () => {
    const script = `
      const { lockDataDir } = await import(${JSON.stringify(new URL('./data-dir-lock.ts', import.meta.url).pathname)});
      await lockDataDir(${JSON.stringify(dataDir)});
      console.log('locked');
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          if (chunk.toString().includes('locked')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`the locking process exited (${code})`)));
      });
      await expect(lockDataDir(dataDir)).rejects.toThrow(`PID ${child.pid}`);
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      (await lockDataDir(dataDir)).release();
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('counts a box of an earlier version, which holds a SQLite lock on sendbox.lock, and removes its leftover', async () => {
    fs.mkdirSync(dataDir, { recursive: true });
    const legacy = new Database(lockPaths(dataDir).legacy, { timeout: 0 });
    legacy.exec('BEGIN EXCLUSIVE');
    await expect(lockDataDir(dataDir)).rejects.toBeInstanceOf(DataDirLockedError);
    legacy.close();
    const lock = await lockDataDir(dataDir);
    expect(fs.existsSync(lockPaths(dataDir).legacy)).toBe(false);
    lock.release();
  });

  it('tells the running box when its data dir is replaced', async () => {
    const lost = vi.fn();
    const lock = await lockDataDir(dataDir, { onLost: lost, checkEveryMs: 20 });
    try {
      fs.renameSync(dataDir, `${dataDir}.moved`);
      fs.mkdirSync(dataDir);
      await vi.waitFor(() => expect(lost).toHaveBeenCalledOnce());
      expect(lost.mock.calls[0]![0]).toMatch(/no longer the folder this box locked/);
      // The new folder is free for another box; the old one stays locked by this one.
      (await lockDataDir(dataDir)).release();
      await expect(lockDataDir(`${dataDir}.moved`)).rejects.toBeInstanceOf(DataDirLockedError);
    } finally {
      lock.release();
    }
  });
});
