/**
 * JSON text checked without building it (RFC 8259, the grammar JSON.parse
 * accepts), by one walk shared by two callers:
 *
 * - `jsonObjectText`: whether a span is exactly one JSON object. JSONL lines
 *   are decoded only when a codec asks for them; this check is what lets a
 *   parse still report every malformed line up front (C17) at a fraction of
 *   JSON.parse's cost.
 * - `jsonTextProblem`: where a document first goes wrong and why. V8's
 *   JSON.parse messages on Node 20 do not always carry a position, and an
 *   error that cannot say where it is sends the reader hunting.
 *
 * Nesting depth is limited only by memory.
 */

// Walk states.
const VALUE = 0; // a value is expected
const VALUE_OR_CLOSE = 1; // first slot of an array: a value or `]`
const KEY_OR_CLOSE = 2; // first slot of an object: a key or `}`
const KEY = 3; // a key is expected (after `,` in an object)
const COLON = 4; // `:` after a key
const AFTER_VALUE = 5; // `,` or the container's closer

// Why a walk stopped.
const UNEXPECTED = 0; // the character at the offset (or the end) does not fit the state
const AFTER_DOCUMENT = 1; // text after a complete value
const UNTERMINATED = 2;
const CONTROL_CHARACTER = 3;
const BAD_ESCAPE = 4;
const BAD_UNICODE_ESCAPE = 5;

const OK = -1;

/** Details of the last failed walk (the walk is synchronous, so one record serves every call). */
const failure = { offset: 0, reason: UNEXPECTED, state: VALUE, inObject: false };

/** Container kinds by depth (1 = object), grown when a text nests deeper. */
let containers = new Uint8Array(64);

function fail(offset: number, reason: number, state = VALUE, inObject = false): number {
  failure.offset = offset;
  failure.reason = reason;
  failure.state = state;
  failure.inObject = inObject;
  return offset;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isHex(c: number): boolean {
  return isDigit(c) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

/** Index after the closing quote of the string whose opening quote is at `i - 1`; -1 (see `failure`) if bad. */
function skipString(s: string, i: number, end: number): number {
  while (i < end) {
    const c = s.charCodeAt(i++);
    if (c === 0x22) return i;
    if (c < 0x20) {
      fail(i - 1, CONTROL_CHARACTER);
      return -1;
    }
    if (c === 0x5c) {
      if (i >= end) break;
      const e = s.charCodeAt(i);
      if (e === 0x75) {
        for (let k = 1; k <= 4; k++) {
          if (i + k >= end || !isHex(s.charCodeAt(i + k))) {
            fail(i, BAD_UNICODE_ESCAPE);
            return -1;
          }
        }
        i += 5;
      } else if (
        e === 0x22 ||
        e === 0x5c ||
        e === 0x2f ||
        e === 0x62 ||
        e === 0x66 ||
        e === 0x6e ||
        e === 0x72 ||
        e === 0x74
      )
        i++;
      else {
        fail(i, BAD_ESCAPE);
        return -1;
      }
    }
  }
  fail(end, UNTERMINATED);
  return -1;
}

/**
 * Index after the longest number starting at `i` (`1.` ends before the dot,
 * which the caller then finds out of place); -1 when none starts there.
 */
function skipNumber(s: string, i: number, end: number): number {
  const start = i;
  if (s.charCodeAt(i) === 0x2d) i++;
  const first = i < end ? s.charCodeAt(i) : -1;
  if (first === 0x30) i++;
  else if (first >= 0x31 && first <= 0x39) while (++i < end && isDigit(s.charCodeAt(i)));
  else {
    fail(start, UNEXPECTED);
    return -1;
  }
  if (i + 1 < end && s.charCodeAt(i) === 0x2e && isDigit(s.charCodeAt(i + 1))) {
    i++;
    while (++i < end && isDigit(s.charCodeAt(i)));
  }
  if (i + 1 < end && (s.charCodeAt(i) | 0x20) === 0x65) {
    let j = i + 1;
    const sign = s.charCodeAt(j);
    if ((sign === 0x2b || sign === 0x2d) && j + 1 < end) j++;
    if (isDigit(s.charCodeAt(j))) {
      i = j;
      while (++i < end && isDigit(s.charCodeAt(i)));
    }
  }
  return i;
}

/** Index after `word` at `i`; -1 (failing at the first character that differs) otherwise. */
function skipLiteral(s: string, i: number, end: number, word: string): number {
  for (let k = 0; k < word.length; k++) {
    if (i + k >= end || s.charCodeAt(i + k) !== word.charCodeAt(k)) {
      fail(i + k, UNEXPECTED);
      return -1;
    }
  }
  return i + word.length;
}

/** Walk `s[start, end)` as one JSON value (an object when `objectOnly`): OK, or the failure offset. */
function walk(s: string, start: number, end: number, objectOnly: boolean): number {
  let i = start;
  while (i < end && isSpace(s.charCodeAt(i))) i++;
  if (objectOnly && (i >= end || s.charCodeAt(i) !== 0x7b)) return fail(i, UNEXPECTED);
  let depth = 0;
  let state = VALUE;
  let inObject = false;
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
          if (i < 0) return failure.offset;
          state = COLON;
          continue;
        }
        if (c !== 0x7d || state === KEY) return fail(i, UNEXPECTED, state, true);
        break; // `{}`: close below
      case COLON:
        if (c !== 0x3a) return fail(i, UNEXPECTED, state, true);
        i++;
        state = VALUE;
        continue;
      case AFTER_VALUE:
        if (c === 0x2c) {
          i++;
          state = inObject ? KEY : VALUE;
          continue;
        }
        if (c !== (inObject ? 0x7d : 0x5d)) return fail(i, UNEXPECTED, state, inObject);
        break; // close below
      default: {
        // VALUE or VALUE_OR_CLOSE
        if (c === 0x7b || c === 0x5b) {
          if (depth === containers.length) {
            const grown = new Uint8Array(depth * 2);
            grown.set(containers);
            containers = grown;
          }
          inObject = c === 0x7b;
          containers[depth++] = inObject ? 1 : 0;
          i++;
          state = inObject ? KEY_OR_CLOSE : VALUE_OR_CLOSE;
          continue;
        }
        if (c === 0x5d && state === VALUE_OR_CLOSE) break; // `[]`: close below
        if (c === 0x22) i = skipString(s, i + 1, end);
        else if (c === 0x74) i = skipLiteral(s, i, end, 'true');
        else if (c === 0x66) i = skipLiteral(s, i, end, 'false');
        else if (c === 0x6e) i = skipLiteral(s, i, end, 'null');
        else if (c === 0x2d || isDigit(c)) i = skipNumber(s, i, end);
        else return fail(i, UNEXPECTED);
        if (i < 0) return failure.offset;
        state = AFTER_VALUE;
        if (depth === 0) return finish(s, i, end);
        continue;
      }
    }
    // Close the innermost container.
    i++;
    depth--;
    state = AFTER_VALUE;
    if (depth === 0) return finish(s, i, end);
    inObject = containers[depth - 1] === 1;
  }
  return fail(end, UNEXPECTED, state, inObject);
}

/** After a complete top-level value: only white space may follow. */
function finish(s: string, i: number, end: number): number {
  while (i < end && isSpace(s.charCodeAt(i))) i++;
  return i === end ? OK : fail(i, AFTER_DOCUMENT);
}

/**
 * `'object'` when `s.slice(start, end)` is one JSON object with optional
 * white space around it, `'invalid'` when it is anything else. Never
 * `'object'` for text JSON.parse would refuse.
 */
export function jsonObjectText(s: string, start: number, end: number): 'object' | 'invalid' {
  return walk(s, start, end, true) === OK ? 'object' : 'invalid';
}

/** Where a text stops being JSON, and why. */
export interface JsonTextProblem {
  /** 0-based offset into the text (its length when the text ends too soon). */
  offset: number;
  message: string;
}

function describe(text: string, at: number): string {
  return at >= text.length ? 'unexpected end of the document' : `unexpected ${JSON.stringify(text[at])}`;
}

/** What the walk expected when it stopped in `state`. */
function expectation(state: number, inObject: boolean): string {
  switch (state) {
    case KEY_OR_CLOSE:
    case KEY:
      return ', expected a key in quotes';
    case COLON:
      return ', expected ":"';
    case AFTER_VALUE:
      return inObject ? ', expected "," or "}"' : ', expected "," or "]"';
    default:
      return '';
  }
}

/** The first place `text` is not one JSON value (any kind), or undefined when it is one. */
export function jsonTextProblem(text: string): JsonTextProblem | undefined {
  if (walk(text, 0, text.length, false) === OK) return undefined;
  const { offset, reason, state, inObject } = failure;
  switch (reason) {
    case AFTER_DOCUMENT:
      return { offset, message: `${describe(text, offset)} after the document` };
    case UNTERMINATED:
      return { offset, message: 'unterminated string' };
    case CONTROL_CHARACTER:
      return { offset, message: 'control character in a string' };
    case BAD_ESCAPE:
      return { offset, message: 'bad escape in a string' };
    case BAD_UNICODE_ESCAPE:
      return { offset, message: 'bad \\u escape' };
    default:
      return { offset, message: describe(text, offset) + expectation(state, inObject) };
  }
}
