/** The error every store raises when a write fails whole, whatever its backend. */
import type { WriteStore } from './write-points.ts';

const DISK_FULL_CODES = new Set(['ENOSPC', 'EDQUOT', 'SQLITE_FULL']);

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
  ) {
    const code = errorCode(cause);
    const full = code !== undefined && DISK_FULL_CODES.has(code);
    const detail = cause instanceof Error ? cause.message : String(cause);
    super(
      full
        ? `the disk of the data dir is full, so ${what} was not saved (${code}); free some space and try again`
        : `${what} could not be written (${detail})`,
      { cause },
    );
    this.name = 'StoreWriteError';
    this.code = code;
    this.diskFull = full;
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
