/**
 * A copy of a ledger file taken without opening it through SQLite, for the
 * listing: opening a WAL database costs dozens of system calls (the WAL and
 * its shared-memory index are opened, created if missing, locked and
 * rebuilt), several times the cost of the query itself.
 *
 * The copy is only taken when it is certainly the whole database: the file
 * is in WAL mode and its `-wal` file is absent or empty, so every committed
 * transaction is in the main file (a WAL-mode writer never changes the main
 * file except by checkpointing frames out of a non-empty WAL). The file and
 * its WAL are stat'ed before and after the read; any change means a writer
 * was active, and the caller opens the file through SQLite instead.
 */
import { readFileSync, statSync, type BigIntStats } from 'node:fs';

const HEADER = Buffer.from('SQLite format 3\0', 'latin1');
/** Header bytes 18 and 19: file format write/read versions; 2 means WAL mode. */
const WRITE_VERSION = 18;
const READ_VERSION = 19;

function statOrNone(path: string): BigIntStats | undefined {
  try {
    return statSync(path, { bigint: true, throwIfNoEntry: false });
  } catch {
    return undefined; // unreadable folder: let SQLite say why
  }
}

function same(a: BigIntStats | undefined, b: BigIntStats | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

/**
 * The bytes of a quiescent WAL-mode SQLite file, re-marked as a rollback-mode
 * file so SQLite can read them from memory; undefined when no such copy can
 * be vouched for, or the file cannot be read (the caller opens the file
 * normally, which reports why).
 */
export function quiescentLedgerCopy(path: string): Buffer | undefined {
  const before = statOrNone(path);
  if (before === undefined) return undefined;
  const walBefore = statOrNone(`${path}-wal`);
  if (walBefore !== undefined && walBefore.size !== 0n) return undefined;
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch {
    return undefined;
  }
  const after = statOrNone(path);
  if (
    BigInt(bytes.length) !== before.size ||
    bytes.length < 100 ||
    !bytes.subarray(0, HEADER.length).equals(HEADER) ||
    bytes[WRITE_VERSION] !== 2 ||
    bytes[READ_VERSION] !== 2
  )
    return undefined;
  if (!same(before, after) || !same(walBefore, statOrNone(`${path}-wal`))) return undefined;
  bytes[WRITE_VERSION] = 1;
  bytes[READ_VERSION] = 1;
  return bytes;
}
