/**
 * A JSONL file as a stream of lines (jsonl.ts `LineSource`), so a reader
 * that keeps only what it makes of each record never holds the file's text.
 * The file is read in chunks into one buffer; each chunk up to its last
 * newline is decoded as UTF-8 at once (a newline byte never sits inside a
 * multi-byte character, so the text is what decoding the whole file gives),
 * and the partial line after it moves to the front for the next read.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import type { LineSource, PulledLine } from './jsonl.ts';
import { maxLineBytes, skipLongLine } from './line-cap.ts';

/**
 * Bytes read at a time. A chunk's text is a string on the heap: kept below
 * V8's large-object size (128 KiB), it is made and dropped in the young
 * generation like any other, where a 1 MB one would cost a mapping of its own
 * every time (measured: a 50 MB session reads in about a fifth less CPU).
 */
const CHUNK = 64 * 1024;
const NEWLINE = 0x0a;
const CR = 13;

/**
 * The lines of `file`, read `chunkBytes` at a time, as the reader asks for
 * them. A line longer than `cap` bytes (line-cap.ts) is read past without
 * being kept or decoded, and given as its length. Opening or reading errors
 * are thrown by the iteration; the file is closed when it ends or stops.
 */
export function* fileLines(
  file: string,
  chunkBytes: number = CHUNK,
  cap: number = maxLineBytes(),
): Generator<PulledLine, void, undefined> {
  const fd = openSync(file, 'r');
  try {
    let buf = Buffer.allocUnsafe(chunkBytes);
    let filled = 0;
    let line = 0;
    function* split(text: string, last: boolean): Generator<PulledLine, void, undefined> {
      let pos = 0;
      for (;;) {
        const nl = text.indexOf('\n', pos);
        if (nl === -1) break;
        const crlf = nl > pos && text.charCodeAt(nl - 1) === CR;
        yield { raw: text.slice(pos, crlf ? nl - 1 : nl), end: crlf ? '\r\n' : '\n', line: ++line };
        pos = nl + 1;
      }
      if (last && pos < text.length) yield { raw: text.slice(pos), end: '', line: ++line };
    }
    for (;;) {
      if (filled >= cap) {
        // The partial line at the front is over the cap already: read past the rest of it.
        const skipped = skipLongLine((b, at, len) => readSync(fd, b, at, len, null), buf, filled);
        yield { tooLong: true, line: ++line, bytes: skipped.bytes, cap };
        filled = skipped.rest;
        continue;
      }
      if (filled === buf.length) {
        // One line longer than the buffer: grow it.
        const bigger = Buffer.allocUnsafe(Math.max(buf.length, Math.min(buf.length * 2, cap)));
        buf.copy(bigger, 0, 0, filled);
        buf = bigger;
      }
      const n = readSync(fd, buf, filled, buf.length - filled, null);
      const end = filled + n;
      if (n === 0) {
        if (end > 0) yield* split(buf.toString('utf8', 0, end), true);
        return;
      }
      const lastNl = buf.lastIndexOf(NEWLINE, end - 1);
      if (lastNl < 0) {
        filled = end;
        continue;
      }
      yield* split(buf.toString('utf8', 0, lastNl + 1), false);
      buf.copy(buf, 0, lastNl + 1, end);
      filled = end - lastNl - 1;
    }
  } finally {
    closeSync(fd);
  }
}

/** The lines of `file` as a LineSource (see `fileLines`); the source's `tooLong` is told of each line over the cap. */
export function linesOfFile(
  file: string,
  chunkBytes: number = CHUNK,
  cap: number = maxLineBytes(),
): LineSource {
  return (each, tooLong) => {
    for (const l of fileLines(file, chunkBytes, cap)) {
      if ('tooLong' in l) tooLong?.(l.line, l.bytes, l.cap);
      else each(l.raw, l.end, l.line);
    }
  };
}
