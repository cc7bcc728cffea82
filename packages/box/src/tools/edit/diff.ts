/**
 * The diff an edit shows: for each replacement, the whole lines it touched before and after, with
 * two lines of context, in unified-diff form (`@@ -a,b +c,d @@`, then ` `, `-`, `+` lines). The
 * counts cover every replacement; the text stops after a few hunks and a few thousand characters,
 * saying how much it left out (the UI's tool row and the model read it; the file holds the rest).
 */

const CONTEXT_LINES = 2;
const MAX_HUNKS = 5;
const MAX_CHARS = 4_000;

export interface ReplacementDiff {
  text: string;
  linesAdded: number;
  linesRemoved: number;
}

/** The diff of replacing `oldText` at the sorted offsets `at` of `before` with `newText`. */
export function replacementDiff(
  before: string,
  at: readonly number[],
  oldText: string,
  newText: string,
): ReplacementDiff {
  let linesAdded = 0;
  let linesRemoved = 0;
  const hunks: string[] = [];
  let shift = 0; // new line number minus old line number, from earlier replacements
  let line = 1; // line of `scan` in `before`
  let scan = 0;
  for (const start of at) {
    for (let i = before.indexOf('\n', scan); i !== -1 && i < start; i = before.indexOf('\n', i + 1))
      line += 1;
    scan = start;
    // The whole lines the match spans.
    const lineStart = before.lastIndexOf('\n', start - 1) + 1;
    const endAt = before.indexOf('\n', start + oldText.length);
    const lineEnd = endAt === -1 ? before.length : endAt;
    const oldLines = before.slice(lineStart, lineEnd).split('\n');
    const newLines = (
      before.slice(lineStart, start) +
      newText +
      before.slice(start + oldText.length, lineEnd)
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

/** Up to `count` lines before (negative) or after (positive) 1-based line `line` of `text`. */
function linesAround(text: string, line: number, count: number): string[] {
  const lines: string[] = [];
  if (count < 0) {
    let end = nthLineStart(text, line) - 1; // the newline ending the line before
    for (let k = 0; k < -count && end >= 0; k++) {
      const start = text.lastIndexOf('\n', end - 1) + 1;
      lines.unshift(text.slice(start, end));
      end = start - 1;
    }
  } else {
    let start = text.indexOf('\n', nthLineStart(text, line));
    // A final newline ends the last line; it does not open another one.
    for (let k = 0; k < count && start !== -1 && start + 1 < text.length; k++) {
      const next = text.indexOf('\n', start + 1);
      lines.push(text.slice(start + 1, next === -1 ? text.length : next));
      start = next;
    }
  }
  return lines;
}

function nthLineStart(text: string, line: number): number {
  let at = 0;
  for (let k = 1; k < line; k++) {
    const next = text.indexOf('\n', at);
    if (next === -1) return text.length;
    at = next + 1;
  }
  return at;
}
