/**
 * The diff an edit shows: for each replacement, the whole lines it touched before and after, with
 * two lines of context, in unified-diff form (`@@ -a,b +c,d @@`, then ` `, `-`, `+` lines). The
 * counts cover every replacement; the text stops after a few hunks and a few thousand characters,
 * saying how much it left out (the UI's tool row and the model read it; the file holds the rest).
 *
 * It reads the file's bytes, not a decoded copy: only the lines it shows are decoded (edit keeps a
 * 1 MB file out of the JavaScript heap; see tools/edit/index.ts).
 */

const CONTEXT_LINES = 2;
const MAX_HUNKS = 5;
const MAX_CHARS = 4_000;

export interface ReplacementDiff {
  text: string;
  linesAdded: number;
  linesRemoved: number;
}

const NEWLINE = 0x0a;

/** The diff of replacing `oldText` at the sorted byte offsets `at` of `before` with `newText`. */
export function replacementDiff(
  before: Buffer,
  at: readonly number[],
  oldText: string,
  newText: string,
): ReplacementDiff {
  const oldLength = Buffer.byteLength(oldText);
  let linesAdded = 0;
  let linesRemoved = 0;
  const hunks: string[] = [];
  let shift = 0; // new line number minus old line number, from earlier replacements
  let line = 1; // line of `scan` in `before`
  let scan = 0;
  for (const start of at) {
    for (let i = before.indexOf(NEWLINE, scan); i !== -1 && i < start; i = before.indexOf(NEWLINE, i + 1))
      line += 1;
    scan = start;
    // The whole lines the match spans.
    const lineStart = lineStartOf(before, start);
    const endAt = before.indexOf(NEWLINE, start + oldLength);
    const lineEnd = endAt === -1 ? before.length : endAt;
    const oldLines = before.toString('utf8', lineStart, lineEnd).split('\n');
    const newLines = (
      before.toString('utf8', lineStart, start) +
      newText +
      before.toString('utf8', start + oldLength, lineEnd)
    ).split('\n');
    // Lines both sides share at the edges are context, not changes.
    let head = 0;
    while (head < oldLines.length - 1 && head < newLines.length - 1 && oldLines[head] === newLines[head])
      head += 1;
    let tail = 0;
    while (
      tail < oldLines.length - head - 1 &&
      tail < newLines.length - head - 1 &&
      oldLines[oldLines.length - 1 - tail] === newLines[newLines.length - 1 - tail]
    )
      tail += 1;
    const removed = oldLines.slice(head, oldLines.length - tail);
    const added = newLines.slice(head, newLines.length - tail);
    const same = removed.length === 1 && added.length === 1 && removed[0] === added[0];
    if (!same) {
      linesRemoved += removed.length;
      linesAdded += added.length;
    }
    if (hunks.length < MAX_HUNKS && !same) {
      const first = line + head; // first changed line, old numbering
      const contextBefore = linesAround(before, first, -CONTEXT_LINES);
      const contextAfter = linesAround(before, first + removed.length - 1, CONTEXT_LINES);
      const oldStart = first - contextBefore.length;
      const oldCount = contextBefore.length + removed.length + contextAfter.length;
      const newCount = contextBefore.length + added.length + contextAfter.length;
      hunks.push(
        [
          `@@ -${oldStart},${oldCount} +${oldStart + shift},${newCount} @@`,
          ...contextBefore.map((l) => ` ${l}`),
          ...removed.map((l) => `-${l}`),
          ...added.map((l) => `+${l}`),
          ...contextAfter.map((l) => ` ${l}`),
        ].join('\n'),
      );
    }
    shift += same ? 0 : added.length - removed.length;
  }
  let text = hunks.join('\n');
  const omitted = at.length - hunks.length;
  if (text.length > MAX_CHARS) text = `${text.slice(0, MAX_CHARS)}\n… (diff cut at ${MAX_CHARS} characters)`;
  if (omitted > 0 && hunks.length === MAX_HUNKS)
    text += `\n… (${omitted} more replacement${omitted === 1 ? '' : 's'} not shown)`;
  return { text, linesAdded, linesRemoved };
}

/** The offset where the line holding offset `at` starts. */
function lineStartOf(text: Buffer, at: number): number {
  // Buffer's lastIndexOf reads a negative start from the end: the first line starts at 0.
  return at === 0 ? 0 : text.lastIndexOf(NEWLINE, at - 1) + 1;
}

/** Up to `count` lines before (negative) or after (positive) 1-based line `line` of `text`. */
function linesAround(text: Buffer, line: number, count: number): string[] {
  const lines: string[] = [];
  if (count < 0) {
    let end = nthLineStart(text, line) - 1; // the newline ending the line before
    for (let k = 0; k < -count && end >= 0; k++) {
      const start = lineStartOf(text, end);
      lines.unshift(text.toString('utf8', start, end));
      end = start - 1;
    }
  } else {
    let start = text.indexOf(NEWLINE, nthLineStart(text, line));
    // A final newline ends the last line; it does not open another one.
    for (let k = 0; k < count && start !== -1 && start + 1 < text.length; k++) {
      const next = text.indexOf(NEWLINE, start + 1);
      lines.push(text.toString('utf8', start + 1, next === -1 ? text.length : next));
      start = next;
    }
  }
  return lines;
}

function nthLineStart(text: Buffer, line: number): number {
  let at = 0;
  for (let k = 1; k < line; k++) {
    const next = text.indexOf(NEWLINE, at);
    if (next === -1) return text.length;
    at = next + 1;
  }
  return at;
}
