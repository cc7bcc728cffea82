/**
 * Reading a JSONL file for a listing: a stream of lines through one reused
 * buffer, without decoding the file as UTF-8.
 *
 * Each chunk is read with a synchronous `read` into a buffer shared by every
 * file (no promise, thread-pool hop or file-sized allocation per file), and
 * viewed as a Latin-1 string: one character per byte, so the structural
 * characters and the ASCII values a skim looks for (`type`, timestamps,
 * uuids) read as themselves, and a line's characters are its bytes. A line
 * whose content is needed (a title) is decoded as UTF-8 with `utf8Line`.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { maxLineBytes, skipLongLine, type TooLongLine } from './line-cap.ts';

const CHUNK = 1 << 20;
let shared = Buffer.allocUnsafe(CHUNK);

/**
 * Calls `each` with every line of `file` (no terminator, CR dropped), as
 * Latin-1 text. `each` returning false stops the read. A line longer than
 * `cap` bytes (line-cap.ts) is read past without being kept, and `tooLong`
 * told of it. Throws what opening or reading throws.
 */
export function forEachLatin1Line(
  file: string,
  each: (line: string) => boolean | void,
  tooLong?: TooLongLine,
  cap: number = maxLineBytes(),
): void {
  const fd = openSync(file, 'r');
  try {
    let buf = shared;
    let filled = 0;
    let first = true;
    let line = 0;
    for (;;) {
      if (filled >= cap) {
        // The partial line at the front is over the cap already: read past the rest of it.
        const skipped = skipLongLine((b, at, len) => readSync(fd, b, at, len, null), buf, filled);
        tooLong?.(++line, skipped.bytes, cap);
        filled = skipped.rest;
        first = false;
        continue;
      }
      if (filled === buf.length) {
        // One line longer than the buffer: grow it (kept for later files, which a big file is likely to have).
        const bigger = Buffer.allocUnsafe(Math.max(buf.length, Math.min(buf.length * 2, cap)));
        buf.copy(bigger, 0, 0, filled);
        buf = shared = bigger;
      }
      const n = readSync(fd, buf, filled, buf.length - filled, null);
      const end = filled + n;
      const text = buf.toString('latin1', 0, end);
      // A UTF-8 byte-order mark may open the file (the text codecs accept it too).
      let start = first && text.startsWith('\xef\xbb\xbf') ? 3 : 0;
      first = false;
      for (;;) {
        const nl = text.indexOf('\n', start);
        if (nl === -1) break;
        const stop = nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
        line++;
        // (A buffer grown for a bigger cap before can hold a whole line over this one.)
        if (stop - start > cap) tooLong?.(line, stop - start, cap);
        else if (each(text.slice(start, stop)) === false) return;
        start = nl + 1;
      }
      if (n === 0) {
        if (start < end) each(text.slice(start, end));
        return;
      }
      // The partial last line moves to the front for the next read.
      buf.copy(buf, 0, start, end);
      filled = end - start;
    }
  } finally {
    closeSync(fd);
  }
}

/** A Latin-1 line (from forEachLatin1Line) decoded as the UTF-8 it holds. */
export function utf8Line(latin1: string): string {
  // eslint-disable-next-line no-control-regex
  return /[^\x00-\x7f]/.test(latin1) ? Buffer.from(latin1, 'latin1').toString('utf8') : latin1;
}

/**
 * A copy of `s` that holds nothing else: a value cut from a skimmed line
 * (a slice of its chunk) would keep the whole chunk alive for as long as a
 * summary keeps the value.
 */
export function ownString(s: string): string {
  return JSON.parse(JSON.stringify(s)) as string;
}

/**
 * The line ends as a JSON object does (its last non-blank character is `}`). A line cut short by a
 * crash does not, and the codecs skip it: a listing that counts messages without parsing counts
 * only such lines, so its number is the one `view` shows.
 */
export function isWholeRecord(line: string): boolean {
  for (let i = line.length - 1; i >= 0; i--) {
    const c = line.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a) continue;
    return c === 0x7d;
  }
  return false;
}
