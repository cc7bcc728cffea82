/**
 * Whether a span of text is exactly one JSON object (RFC 8259, the grammar
 * JSON.parse accepts), checked without building it. Lines are decoded only
 * when a codec asks for them; this check is what lets a parse still report
 * every malformed line up front (C17) at a fraction of JSON.parse's cost.
 */

// Parser states.
const VALUE = 0; // a value is expected
const VALUE_OR_CLOSE = 1; // first slot of an array: a value or `]`
const KEY_OR_CLOSE = 2; // first slot of an object: a key or `}`
const KEY = 3; // a key is expected (after `,` in an object)
const COLON = 4; // `:` after a key
const AFTER_VALUE = 5; // `,` or the container's closer

/** Deepest nesting tracked in a bit stack; deeper text is left to JSON.parse (see below). */
const MAX_DEPTH = 31;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isHex(c: number): boolean {
  return isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

/** Index after the closing quote of the string whose opening quote is at `i - 1`, or -1. */
function skipString(s: string, i: number, end: number): number {
  while (i < end) {
    const c = s.charCodeAt(i++);
    if (c === 0x22) return i;
    if (c < 0x20) return -1;
    if (c === 0x5c) {
      const e = s.charCodeAt(i++);
      if (e === 0x75) {
        if (i + 4 > end) return -1;
        for (let k = 0; k < 4; k++) if (!isHex(s.charCodeAt(i++))) return -1;
      } else if (
        e !== 0x22 &&
        e !== 0x5c &&
        e !== 0x2f &&
        e !== 0x62 &&
        e !== 0x66 &&
        e !== 0x6e &&
        e !== 0x72 &&
        e !== 0x74
      )
        return -1;
    }
  }
  return -1;
}

/** Index after the number starting at `i`, or -1. */
function skipNumber(s: string, i: number, end: number): number {
  let c = s.charCodeAt(i);
  if (c === 0x2d) c = s.charCodeAt(++i);
  if (c === 0x30) c = s.charCodeAt(++i);
  else if (c >= 0x31 && c <= 0x39) {
    do c = s.charCodeAt(++i);
    while (i < end && isDigit(c));
  } else return -1;
  if (i < end && c === 0x2e) {
    c = s.charCodeAt(++i);
    if (i >= end || !isDigit(c)) return -1;
    do c = s.charCodeAt(++i);
    while (i < end && isDigit(c));
  }
  if (i < end && (c === 0x65 || c === 0x45)) {
    c = s.charCodeAt(++i);
    if (c === 0x2b || c === 0x2d) c = s.charCodeAt(++i);
    if (i >= end || !isDigit(c)) return -1;
    do c = s.charCodeAt(++i);
    while (i < end && isDigit(c));
  }
  return i > end ? -1 : i;
}

/**
 * `'object'` when `s.slice(start, end)` is one JSON object with optional
 * white space around it, `'invalid'` when it is anything else, and
 * `'unknown'` when it nests deeper than this check follows (the caller then
 * asks JSON.parse). Never `'object'` for text JSON.parse would refuse.
 */
export function jsonObjectText(s: string, start: number, end: number): 'object' | 'invalid' | 'unknown' {
  let i = start;
  while (i < end && isSpace(s.charCodeAt(i))) i++;
  if (i >= end || s.charCodeAt(i) !== 0x7b) return 'invalid';
  // Bit d of `objects` is 1 when the container at depth d is an object.
  let objects = 0;
  let depth = 0;
  let state = VALUE;
  while (i < end) {
    const c = s.charCodeAt(i);
    if (isSpace(c)) {
      i++;
      continue;
    }
    switch (state) {
      case KEY_OR_CLOSE:
      case KEY:
        if (c === 0x22) {
          i = skipString(s, i + 1, end);
          if (i < 0) return 'invalid';
          state = COLON;
          continue;
        }
        if (c !== 0x7d || state === KEY) return 'invalid';
        break; // `{}`: close below
      case COLON:
        if (c !== 0x3a) return 'invalid';
        i++;
        state = VALUE;
        continue;
      case AFTER_VALUE:
        if (c === 0x2c) {
          i++;
          state = (objects >>> (depth - 1)) & 1 ? KEY : VALUE;
          continue;
        }
        if (c !== ((objects >>> (depth - 1)) & 1 ? 0x7d : 0x5d)) return 'invalid';
        break; // close below
      default: {
        // VALUE or VALUE_OR_CLOSE
        if (c === 0x7b || c === 0x5b) {
          if (depth === MAX_DEPTH) return 'unknown';
          objects = c === 0x7b ? objects | (1 << depth) : objects & ~(1 << depth);
          depth++;
          i++;
          state = c === 0x7b ? KEY_OR_CLOSE : VALUE_OR_CLOSE;
          continue;
        }
        if (c === 0x5d && state === VALUE_OR_CLOSE) break; // `[]`: close below
        if (c === 0x22) i = skipString(s, i + 1, end);
        else if (c === 0x74) i = s.startsWith('true', i) && i + 4 <= end ? i + 4 : -1;
        else if (c === 0x66) i = s.startsWith('false', i) && i + 5 <= end ? i + 5 : -1;
        else if (c === 0x6e) i = s.startsWith('null', i) && i + 4 <= end ? i + 4 : -1;
        else i = skipNumber(s, i, end);
        if (i < 0) return 'invalid';
        state = AFTER_VALUE;
        continue;
      }
    }
    // Close the innermost container.
    i++;
    depth--;
    state = AFTER_VALUE;
    if (depth === 0) {
      while (i < end && isSpace(s.charCodeAt(i))) i++;
      return i === end ? 'object' : 'invalid';
    }
  }
  return 'invalid';
}
