/**
 * Scrubbing secrets: every tool output passes through here before it reaches
 * the model, the transcript or a log, and every file the agent attaches or
 * the user uploads is checked here before it is stored. A secret is found in
 * its common encodings, not only as its value:
 *
 * - the value with any of its characters escaped the way URLs and JSON do, in
 *   any mix: `%XX` (every byte of a character, `+` for a space), `\uXXXX`
 *   and JSON's short escapes (`\"`, `\/`, `\\`, `\n`…). That covers
 *   `encodeURIComponent`, form encoding, Python's `quote()` (which keeps `/`)
 *   and `quote_plus()`, PHP's `json_encode` (`\/` with `\uXXXX`) and escaping
 *   every byte; matched case-insensitively, as these encodings allow;
 * - hex (either case), and base64, standard and URL-safe, padded or not, at
 *   each of the three byte offsets a value can start at inside a longer base64
 *   text (for an offset, only the characters that depend on the value's bytes
 *   alone are matched; base64 is matched case-sensitively). These two are also
 *   found across line breaks, as `base64` (76 columns), `openssl base64` (64)
 *   and `xxd -p` (60) wrap them by default.
 *
 * Matches are replaced by a marker naming the secret, so the model still
 * knows which variable was printed. A text still being written (a streamed
 * draft) shows only what cannot be the start of a secret (`draft`).
 * Reversed or otherwise split values are not found.
 */

import { joinedLines, wholeView, type TextView } from './text-views.ts';

/** How a text is spelled: as JavaScript text, or a file's bytes read as latin1 (one character per byte). */
type TextUnit = 'text' | 'bytes';

export interface Scrubber {
  /** Replaces every known secret, in every encoding, in `text`. */
  text(text: string): string;
  /**
   * `text` is the start of a text still being written: it is scrubbed, and a tail that could
   * be the start of a secret is held back until the text goes on, so no prefix of a secret is
   * ever shown (the finished text goes through `text`).
   */
  draft(text: string): string;
  /** Deep copy of a JSON-like value with every string scrubbed (object keys included). */
  value<T>(value: T): T;
  /** True when `text` contains any known secret in any encoding. */
  leaks(text: string): boolean;
  /** A scanner for bytes arriving in chunks (files); empty when there are no secrets. */
  scanner(): SecretScanner;
}

export interface SecretScanner {
  /** Feeds the next chunk; returns the name of a secret found so far (across chunk borders), else null. */
  push(chunk: Uint8Array): string | null;
}

/** Values shorter than this are not scrubbed: replacing every "a" would destroy output without protecting anything. */
export const MIN_SCRUB_LENGTH = 4;
/** Encoded forms shorter than this are not matched (they would match unrelated text). */
export const MIN_ENCODED_LENGTH = 6;

/** A secret in a file is refused: what the model (or the user, for an upload) reads. */
export class SecretInFileError extends Error {
  constructor(
    readonly fileName: string,
    readonly secretName: string,
  ) {
    super(
      `${fileName} contains the secret ${secretName} (as its value or an encoding of it: base64, hex, ` +
        'URL or JSON escaping), so it was not attached. Secrets never leave the box in files: ' +
        'remove it from the file (refer to the environment variable by name instead) and send the file again.',
    );
    this.name = 'SecretInFileError';
  }
}

/**
 * A rendering pattern: per character, every way it may be written. Matching one means matching
 * a choice per character, so escaped and plain characters may mix in any way.
 */
type Spelling = readonly (readonly string[])[];

/** One secret's matchable forms. */
interface SecretForms {
  name: string;
  /** The value, each character plain or in URL or JSON escaping (lower-cased; matched in any case). */
  value: Spelling;
  /** Hex of the value's bytes (matched in any case, across line breaks). */
  hex: string;
  /** Base64 forms, `/`, `+` and `=` also %-escaped or JSON's `\/` (case-sensitive, across line breaks). */
  base64: Spelling[];
}

/**
 * Representative renderings of a secret: `folded` ones match in any case, `exact` ones (base64)
 * as they are. Every one of them is found by the scrubber (its tests check each); the escaped
 * forms in any mix, not only these.
 */
export function encodedForms(value: string): { folded: string[]; exact: string[] } {
  const bytes = Buffer.from(value, 'utf8');
  const folded = new Set<string>([value, bytes.toString('hex')]);
  folded.add(encodeURIComponent(value));
  folded.add(new URLSearchParams({ v: value }).toString().slice(2));
  folded.add([...bytes].map((byte) => `%${hex2(byte)}`).join(''));
  const json = JSON.stringify(value).slice(1, -1);
  folded.add(json);
  folded.add(json.replace(/[\u007f-\uffff]/g, (c) => `\\u${hex4(c.charCodeAt(0))}`));
  folded.add(json.replace(/\//g, '\\/'));
  folded.add(
    value
      .split('')
      .map((c) => `\\u${hex4(c.charCodeAt(0))}`)
      .join(''),
  );
  const long = (form: string) => form.length >= MIN_ENCODED_LENGTH || form === value;
  return { folded: [...folded].filter(long), exact: base64Forms(bytes).filter(long) };
}

function base64Forms(bytes: Buffer): string[] {
  const exact = new Set<string>();
  for (let offset = 0; offset < 3; offset++) {
    const padded = Buffer.concat([Buffer.alloc(offset), bytes]);
    const b64 = padded.toString('base64');
    // Characters made only of the value's bits: from ceil(8·offset/6) to floor(8·(offset+n)/6).
    const core = b64.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6));
    exact.add(core);
    exact.add(toUrlSafe(core));
  }
  const whole = bytes.toString('base64');
  exact.add(whole);
  exact.add(toUrlSafe(whole));
  exact.add(toUrlSafe(whole).replace(/=+$/, ''));
  return [...exact];
}

function toUrlSafe(b64: string): string {
  return b64.replace(/\+/g, '-').replace(/\//g, '_');
}

const JSON_SHORT: Readonly<Record<string, string>> = {
  '"': '\\"',
  '\\': '\\\\',
  '/': '\\/',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

const hex2 = (n: number) => n.toString(16).padStart(2, '0');
const hex4 = (n: number) => n.toString(16).padStart(4, '0');

/**
 * The ways one character of a value may be written, lower-cased: plain (as `unit` spells it:
 * the character, or its UTF-8 bytes read as latin1), every byte %-escaped, as `\uXXXX` units,
 * JSON's short escape, and `+` for a space.
 */
function characterForms(char: string, unit: TextUnit): string[] {
  const utf8 = Buffer.from(char, 'utf8');
  const forms = new Set<string>([
    unit === 'text' ? char : utf8.toString('latin1'),
    [...utf8].map((byte) => `%${hex2(byte)}`).join(''),
    Array.from({ length: char.length }, (_, i) => `\\u${hex4(char.charCodeAt(i))}`).join(''),
  ]);
  const short = JSON_SHORT[char];
  if (short !== undefined) forms.add(short);
  if (char === ' ') forms.add('+');
  return [...forms].map((form) => form.toLowerCase());
}

/** Base64's own characters that URLs and JSON escape, and how (a URL carries base64 %-escaped). */
const BASE64_ESCAPES: Readonly<Record<string, readonly string[]>> = {
  '/': ['/', '\\/', '%2F', '%2f'],
  '+': ['+', '%2B', '%2b'],
  '=': ['=', '%3D', '%3d'],
};

function base64Spelling(form: string): Spelling {
  return [...form].map((char) => BASE64_ESCAPES[char] ?? [char]);
}

/** A secret's forms as `unit` spells them: text, or a file's bytes read as latin1. */
function formsOf(name: string, value: string, unit: TextUnit): SecretForms {
  const bytes = Buffer.from(value, 'utf8');
  return {
    name,
    value: [...value].map((char) => characterForms(char, unit)),
    hex: bytes.toString('hex'),
    base64: base64Forms(bytes)
      .filter((form) => form.length >= MIN_ENCODED_LENGTH)
      .map(base64Spelling),
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function spellingSource(spelling: Spelling): string {
  return spelling
    .map((forms) =>
      forms.length === 1 ? escapeRegExp(forms[0]!) : `(?:${forms.map(escapeRegExp).join('|')})`,
    )
    .join('');
}

/** A hit: where (in the text searched) and which secret. */
interface Hit {
  start: number;
  end: number;
  name: string;
}

/**
 * One pass: one regular expression, one capturing group per secret form (the longest first, so
 * a secret that contains another is replaced whole), over the text or its joined-lines view.
 */
interface Pass {
  regex: RegExp;
  names: string[];
  joined: boolean;
}

/**
 * The regular expression starts with a lookahead for the characters a match can start with: the
 * engine then skips most of a text without trying each alternative (3–4 times faster on
 * ordinary output).
 */
function pass(
  parts: ReadonlyArray<{ name: string; spelling: Spelling }>,
  flags: string,
  joined: boolean,
): Pass | null {
  if (parts.length === 0) return null;
  const sorted = [...parts].sort((a, b) => b.spelling.length - a.spelling.length);
  const firsts = new Set(sorted.flatMap((part) => (part.spelling[0] ?? []).map((form) => form[0] ?? '')));
  const lookahead = `(?=[${[...firsts].map((char) => char.replace(/[\\\]^-]/g, '\\$&')).join('')}])`;
  return {
    regex: new RegExp(
      `${lookahead}(?:${sorted.map((part) => `(${spellingSource(part.spelling)})`).join('|')})`,
      `g${flags}`,
    ),
    names: sorted.map((part) => part.name),
    joined,
  };
}

function passesFor(secrets: readonly SecretForms[]): Pass[] {
  const value = pass(
    secrets.map((secret) => ({ name: secret.name, spelling: secret.value })),
    'i',
    false,
  );
  const hex = pass(
    secrets
      .filter((secret) => secret.hex.length >= MIN_ENCODED_LENGTH)
      .map((secret) => ({ name: secret.name, spelling: [...secret.hex].map((char) => [char]) })),
    'i',
    true,
  );
  const base64 = pass(
    secrets.flatMap((secret) => secret.base64.map((spelling) => ({ name: secret.name, spelling }))),
    '',
    true,
  );
  return [value, hex, base64].filter((p) => p !== null);
}

/** Every hit of the passes in `text` (only the first one when `first`), in the text's positions. */
function hitsOf(passes: readonly Pass[], text: string, first: boolean): Hit[] {
  const whole = wholeView(text);
  let joined: TextView | undefined;
  const hits: Hit[] = [];
  for (const { regex, names, joined: onJoined } of passes) {
    const view = onJoined ? (joined ??= joinedLines(whole) ?? whole) : whole;
    regex.lastIndex = 0;
    for (let match = regex.exec(view.text); match !== null; match = regex.exec(view.text)) {
      const group = match.findIndex((part, index) => index > 0 && part !== undefined);
      const start = view.origin(match.index).start;
      const end = view.origin(match.index + match[0].length - 1).end;
      hits.push({ start, end, name: names[group - 1] ?? 'secret' });
      if (first) {
        regex.lastIndex = 0;
        return hits;
      }
    }
  }
  return hits;
}

/** Replaces the hits (earliest first; of overlapping ones, the longest) with markers. */
function redact(text: string, hits: Hit[]): string {
  if (hits.length === 0) return text;
  hits.sort((a, b) => a.start - b.start || b.end - a.end);
  let out = '';
  let at = 0;
  for (const hit of hits) {
    if (hit.start < at) continue;
    out += `${text.slice(at, hit.start)}[secret ${hit.name} redacted]`;
    at = hit.end;
  }
  return out + text.slice(at);
}

/**
 * Whether `rest` could be how a rendering begins (it runs out first), or a whole rendering that
 * may still grow (base64 padding). A value's spelling is lower-case: the caller lower-cases `rest`.
 */
function begins(rest: string, spelling: Spelling, index = 0): boolean {
  if (rest === '') return true;
  const forms = spelling[index];
  if (forms === undefined) return false;
  for (const form of forms) {
    if (rest.length <= form.length) {
      if (form.startsWith(rest)) return true;
    } else if (rest.startsWith(form) && begins(rest.slice(form.length), spelling, index + 1)) {
      return true;
    }
  }
  return false;
}

/** Whether a secret's rendering could begin at `rest` (a text's tail) and go on past its end. */
function couldBeginSecret(rest: string, secrets: readonly SecretForms[]): boolean {
  const lower = rest.toLowerCase();
  const joined = rest.replace(/[\r\n]+/g, '');
  const joinedLower = joined.toLowerCase();
  return secrets.some(
    (secret) =>
      begins(lower, secret.value) ||
      (secret.hex.length >= MIN_ENCODED_LENGTH && secret.hex.startsWith(joinedLower)) ||
      secret.base64.some((form) => begins(joined, form)),
  );
}

/** The most characters a rendering of the secret can take (all escaped, or wrapped down to one per line). */
function longestSpan(secret: SecretForms): number {
  const longest = (spelling: Spelling) =>
    spelling.reduce((sum, forms) => sum + Math.max(...forms.map((form) => form.length)), 0);
  const wrapped = 3 * Math.max(secret.hex.length, ...secret.base64.map(longest));
  return Math.max(longest(secret.value), wrapped);
}

export function scrubberFor(secrets: ReadonlyMap<string, string>): Scrubber {
  const kept = [...secrets].filter(([, value]) => value.length >= MIN_SCRUB_LENGTH);
  if (kept.length === 0) return noScrub;
  const textForms = kept.map(([name, value]) => formsOf(name, value, 'text'));
  const textPasses = passesFor(textForms);
  const bytePasses = passesFor(kept.map(([name, value]) => formsOf(name, value, 'bytes')));
  const span = Math.max(...textForms.map(longestSpan));

  const text = (input: string): string => redact(input, hitsOf(textPasses, input, false));
  return {
    text,
    draft(input) {
      // The earliest place from which the tail could still become (or extend) a secret: only
      // the text before it is shown, scrubbed as a finished text would be.
      for (let at = Math.max(0, input.length - span); at < input.length; at++) {
        const ch = input.charCodeAt(at);
        if (ch === 10 || ch === 13) continue;
        if (couldBeginSecret(input.slice(at), textForms)) return text(input.slice(0, at));
      }
      return text(input);
    },
    value: <T>(input: T): T => deepMapStrings(input, text),
    leaks: (input) => hitsOf(textPasses, input, true).length > 0,
    scanner: () => {
      let tail = '';
      return {
        push(chunk) {
          const window =
            tail + Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('latin1');
          const [hit] = hitsOf(bytePasses, window, true);
          // UTF-8 takes up to 4 bytes per character: a byte window covers any rendering the text span does.
          tail = window.slice(Math.max(0, window.length - (4 * span - 1)));
          return hit?.name ?? null;
        },
      };
    },
  };
}

export const noScrub: Scrubber = {
  text: (t) => t,
  draft: (t) => t,
  value: (v) => v,
  leaks: () => false,
  scanner: () => ({ push: () => null }),
};

/** The name of a secret found anywhere in `bytes`, else null. */
export function secretIn(scrub: Scrubber, bytes: Uint8Array): string | null {
  return scrub.scanner().push(bytes);
}

function deepMapStrings<T>(input: T, map: (s: string) => string): T {
  if (typeof input === 'string') return map(input) as T;
  if (Array.isArray(input)) return input.map((item: unknown) => deepMapStrings(item, map)) as T;
  if (input !== null && typeof input === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(input as Record<string, unknown>)) {
      out[map(key)] = deepMapStrings(item, map);
    }
    return out as T;
  }
  return input;
}
