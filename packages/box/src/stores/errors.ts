/** The error every store raises when a write fails whole, whatever its backend. */
import { statfsSync } from 'node:fs';
import type { WriteStore } from './write-points.ts';

const DISK_FULL_CODES = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL']);

/**
 * Below this a failed write is put down to the disk: a write that needs a few blocks
 * fails before the last one is taken.
 */
const NEARLY_FULL_BYTES = 1024 * 1024;
const NEARLY_FULL_INODES = 16;

/**
 * A write to one of an agent's stores failed as a whole (nothing of it stays
 * on disk). `diskFull` when the disk or quota is full: the gateway answers 507
 * and the write can succeed once space returns.
 */
export class StoreWriteError extends Error {
  readonly code: string | undefined;
  readonly diskFull: boolean;

  constructor(
    readonly store: WriteStore,
    readonly what: string,
    cause: unknown,
    /** Known full from the filesystem itself (`filesystemIsFull`) whatever the error's code. */
    fullFilesystem = false,
  ) {
    const code = errorCode(cause);
    const full = fullFilesystem || isDiskFullError(cause);
    const detail = cause instanceof Error ? cause.message : String(cause);
    super(
      full
        ? `the disk of the data dir is full, so ${what} was not saved (${code ?? 'no space left'}); free some space and try again`
        : `${what} could not be written (${detail})`,
      { cause },
    );
    this.name = 'StoreWriteError';
    this.code = code;
    this.diskFull = full;
  }
}

/** An ENOSPC, EDQUOT or SQLITE_FULL, also when a wrapper carries it as its cause. */
export function isDiskFullError(error: unknown): boolean {
  const code = errorCode(error);
  return code !== undefined && DISK_FULL_CODES.has(code);
}

/**
 * Whether the filesystem holding `dir` has (nearly) no blocks or inodes left. A full ext4
 * does not always say ENOSPC (a `mkdir` there has answered ENOENT), so a failed write of
 * the box asks the filesystem too.
 */
export function filesystemIsFull(dir: string): boolean {
  try {
    const fs = statfsSync(dir);
    return fs.bavail * fs.bsize < NEARLY_FULL_BYTES || (fs.files > 0 && fs.ffree < NEARLY_FULL_INODES);
  } catch {
    return false;
  }
}

/** The errno or SQLite code of an error, also when a wrapper (LedgerError) carries it. */
function errorCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}
