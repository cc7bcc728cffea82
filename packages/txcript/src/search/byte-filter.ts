/**
 * The scan's first pass (issue 23 item 3): whether a session file can hold a
 * query's words, decided on its raw bytes, before any JSON is decoded. A file
 * that fails is never read further; one that passes is read as `view` reads
 * it and each message checked exactly, so this test only has to be
 * conservative: it may pass a file that does not match, never fail one that
 * does.
 *
 * Needles are lower-case ASCII pieces of the wanted words. The bytes are
 * folded as Latin-1 (ASCII letters fold as the search folds them; a UTF-8
 * byte never folds to ASCII), so every needle must appear as it is, except
 * where the text could spell it otherwise:
 * - a `\u00XX` JSON escape of a printable ASCII character (legal, if rare):
 *   the file passes;
 * - U+212A KELVIN SIGN, which lower-cases to `k`: a needle with a `k` passes
 *   where the file has one.
 *
 * No imports but Node's: the scan worker (scan-worker.ts) runs this module
 * from the TypeScript sources too, with Node's type stripping.
 */

/** U+212A in UTF-8, read as Latin-1. */
const KELVIN = '\u00e2\u0084\u00aa';
const ASCII_ESCAPE = /\\u00[2-7][0-9a-f]/;

/** Whether the bytes of one file may hold every needle (or `also` does: the session's title). */
export function mayHoldAll(bytes: Uint8Array, needles: readonly string[], also = ''): boolean {
  if (needles.length === 0) return true;
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1').toLowerCase();
  if (text.includes('\\u00') && ASCII_ESCAPE.test(text)) return true;
  const kelvin = text.includes(KELVIN);
  return needles.every((n) => text.includes(n) || also.includes(n) || (kelvin && n.includes('k')));
}
