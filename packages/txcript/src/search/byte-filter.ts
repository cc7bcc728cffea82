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
 *   where the file has one;
 * - an ESC (`\u001b`): a codec may strip the terminal escape sequence it
 *   starts (Claude Code's local command output), joining the text on either
 *   side into a word the bytes do not spell: the file passes.
 *
 * No imports but Node's: the scan worker (scan-worker.ts) runs this module
 * from the TypeScript sources too, with Node's type stripping.
 */

import { readFileSync } from 'node:fs';

/** U+212A in UTF-8, read as Latin-1. */
const KELVIN = '\u00e2\u0084\u00aa';
const ASCII_ESCAPE = /\\u00[2-7][0-9a-f]/;
/** ESC as JSON escapes it (folded: `\u001B` too). */
const ESC = '\\u001b';

/**
 * Whether the bytes of one file may hold every needle, its sessions'
 * `titles` (folded) counting as part of it. `perLine`: the file's messages
 * are each made from one of its lines (Harness `messageInOneLine`), and a
 * title is a search row of its own, so one line, or one title, must hold
 * them all.
 */
export function mayHoldAll(
  bytes: Uint8Array,
  needles: readonly string[],
  titles: readonly string[] = [],
  perLine = false,
): boolean {
  if (needles.length === 0) return true;
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1').toLowerCase();
  if (text.includes('\\u00') && (ASCII_ESCAPE.test(text) || text.includes(ESC))) return true;
  // Needles a Kelvin sign may spell count as held everywhere.
  const kelvin = text.includes(KELVIN);
  const rest = needles.filter((n) => !(kelvin && n.includes('k')));
  if (rest.length === 0) return true;
  if (!perLine) return rest.every((n) => text.includes(n) || titles.some((t) => t.includes(n)));
  return titles.some((t) => rest.every((n) => t.includes(n))) || someLineHoldsAll(text, rest);
}

/** Whether one line of `text` holds every needle: each line holding the longest is checked for the others. */
function someLineHoldsAll(text: string, needles: readonly string[]): boolean {
  const anchor = needles.reduce((a, b) => (b.length > a.length ? b : a));
  const others = needles.filter((n) => n !== anchor);
  for (let at = text.indexOf(anchor); at !== -1;) {
    const start = text.lastIndexOf('\n', at) + 1;
    const newline = text.indexOf('\n', at);
    const end = newline === -1 ? text.length : newline;
    const line = text.slice(start, end);
    if (others.every((n) => line.includes(n))) return true;
    if (newline === -1) return false;
    at = text.indexOf(anchor, end);
  }
  return false;
}

/** The bytes of one or more files, as one text: a line break between two (no needle spans it). */
export function readParts(paths: readonly string[]): Buffer {
  if (paths.length === 1) return readFileSync(paths[0]!);
  const parts: Buffer[] = [];
  for (const p of paths) parts.push(readFileSync(p), NEWLINE);
  return Buffer.concat(parts);
}

const NEWLINE = Buffer.from('\n');
