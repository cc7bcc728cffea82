/**
 * The longest line a JSONL reader takes. A longer line (a pasted dump, a
 * corrupt or sparse file with no newline for gigabytes) is skipped as it is
 * read: its bytes are counted and dropped, never gathered into one buffer or
 * decoded into a string, so its size costs time to read past, not memory.
 */

/** The default cap, in MiB: far above any record the harnesses write (an image is a few MiB). */
export const DEFAULT_MAX_LINE_MB = 64;

/** `TXCRIPT_MAX_LINE_MB` (a positive number of MiB), else the default; in bytes. */
export function maxLineBytes(env: NodeJS.ProcessEnv = process.env): number {
  const mb = Number(env.TXCRIPT_MAX_LINE_MB);
  return Math.floor((Number.isFinite(mb) && mb > 0 ? mb : DEFAULT_MAX_LINE_MB) * 2 ** 20);
}

/** Told of each line over the cap: its number (1-based), its length and the cap, in bytes. */
export type TooLongLine = (line: number, bytes: number, cap: number) => void;

const mb = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(bytes < 10 * 2 ** 20 ? 1 : 0)} MB`;

/** The warning for a skipped line. */
export function tooLongText(bytes: number, cap: number): string {
  return `line of ${mb(bytes)} skipped: over the ${mb(cap)} a line may have (TXCRIPT_MAX_LINE_MB raises the cap)`;
}

/**
 * Read past the rest of a line whose first `have` bytes fill `buf` from 0:
 * reads into `buf` until a newline (or the end of the file). Returns the
 * line's length in bytes (without its newline) and how many bytes after the
 * newline are now at the front of `buf`.
 */
export function skipLongLine(
  read: (buf: Buffer, at: number, length: number) => number,
  buf: Buffer,
  have: number,
): { bytes: number; rest: number } {
  let bytes = have;
  for (;;) {
    const n = read(buf, 0, buf.length);
    if (n === 0) return { bytes, rest: 0 };
    const nl = buf.subarray(0, n).indexOf(0x0a);
    if (nl < 0) {
      bytes += n;
      continue;
    }
    bytes += nl;
    buf.copy(buf, 0, nl + 1, n);
    return { bytes, rest: n - nl - 1 };
  }
}
