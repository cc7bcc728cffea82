/**
 * Scrubbing secrets: every tool output passes through here before it reaches
 * the model, the transcript or a log, and every file the agent attaches or
 * the user uploads is checked here before it is stored. A secret is found in
 * its common encodings, not only as its value:
 *
 * - the value itself, and hex (either case), URL-encoding (`%XX`, `+` for
 *   space, every byte escaped) and JSON escaping (`\"`, `\uXXXX`, `\/`):
 *   all matched case-insensitively, as these encodings allow;
 * - base64, standard and URL-safe, padded or not, at each of the three byte
 *   offsets a value can start at inside a longer base64 text (for an offset,
 *   only the characters that depend on the value's bytes alone are matched):
 *   case-sensitively.
 *
 * Matches are replaced by a marker naming the secret, so the model still
 * knows which variable was printed. Reversed or split values are not found.
 */

export interface Scrubber {
  /** Replaces every known secret, in every encoding, in `text`. */
  text(text: string): string;
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

interface Form {
  needle: string;
  name: string;
}

/** The encoded forms of one secret, as latin1 strings of their bytes; `exact` ones are case-sensitive. */
export function encodedForms(value: string): { folded: string[]; exact: string[] } {
  const bytes = Buffer.from(value, 'utf8');
  const folded = new Set<string>([bytes.toString('latin1'), bytes.toString('hex')]);
  folded.add(encodeURIComponent(value));
  folded.add(new URLSearchParams({ v: value }).toString().slice(2));
  folded.add([...bytes].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join(''));
  const json = JSON.stringify(value).slice(1, -1);
  folded.add(Buffer.from(json, 'utf8').toString('latin1'));
  folded.add(json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
  folded.add(json.replace(/\//g, '\\/'));
  folded.add(
    value
      .split('')
      .map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
      .join(''),
  );
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
  const long = (form: string) => form.length >= MIN_ENCODED_LENGTH || form === bytes.toString('latin1');
  return { folded: [...folded].filter(long), exact: [...exact].filter(long) };
}

function toUrlSafe(b64: string): string {
  return b64.replace(/\+/g, '-').replace(/\//g, '_');
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

interface Matcher {
  regex: RegExp;
  /** Needle (lower-cased when folded) → secret name. */
  names: Map<string, string>;
  folded: boolean;
}

/**
 * One regular expression over all needles, longest first so a form that contains another is
 * replaced whole. A folded matcher's needles are lower-cased: scanning lower-cases the haystack
 * once instead of asking the regex engine to fold (several times faster on large files).
 */
function matcher(forms: Form[], folded: boolean, flags = ''): Matcher | null {
  if (forms.length === 0) return null;
  const names = new Map<string, string>();
  for (const form of forms) {
    const key = folded ? form.needle.toLowerCase() : form.needle;
    if (!names.has(key)) names.set(key, form.name);
  }
  const needles = [...names.keys()].sort((a, b) => b.length - a.length);
  return { regex: new RegExp(needles.map(escapeRegExp).join('|'), `g${flags}`), names, folded };
}

export function scrubberFor(secrets: ReadonlyMap<string, string>): Scrubber {
  const folded: Form[] = [];
  const exact: Form[] = [];
  for (const [name, value] of secrets) {
    if (value.length < MIN_SCRUB_LENGTH) continue;
    const forms = encodedForms(value);
    for (const needle of forms.folded) folded.push({ needle, name });
    for (const needle of forms.exact) exact.push({ needle, name });
  }
  if (folded.length === 0 && exact.length === 0) return noScrub;
  // Text is matched as UTF-16; the forms are byte strings (latin1), equal for ASCII. Non-ASCII
  // values are also matched as text.
  const textForms = (forms: Form[]) =>
    forms.map((form) => ({ needle: Buffer.from(form.needle, 'latin1').toString('utf8'), name: form.name }));
  // Replacing needs the original text's positions, so text passes fold in the regex ('i').
  const passes = [matcher(textForms(folded), true, 'i'), matcher(textForms(exact), false)].filter(
    (m) => m !== null,
  );
  const bytePasses = [matcher(folded, true), matcher(exact, false)].filter((m) => m !== null);
  const longest = Math.max(...[...folded, ...exact].map((form) => form.needle.length));

  const text = (input: string): string => {
    let out = input;
    for (const { regex, names, folded: fold } of passes) {
      out = out.replace(
        regex,
        (hit) => `[secret ${names.get(fold ? hit.toLowerCase() : hit) ?? 'secret'} redacted]`,
      );
    }
    return out;
  };
  const found = (input: string, which: Matcher[]): string | null => {
    let lower: string | undefined;
    for (const { regex, names, folded: fold } of which) {
      // A byte pass has no 'i' flag: it searches the lower-cased input.
      const haystack = fold && !regex.flags.includes('i') ? (lower ??= input.toLowerCase()) : input;
      regex.lastIndex = 0;
      const match = regex.exec(haystack);
      regex.lastIndex = 0;
      if (match) return names.get(fold ? match[0].toLowerCase() : match[0]) ?? 'secret';
    }
    return null;
  };
  return {
    text,
    value: <T>(input: T): T => deepMapStrings(input, text),
    leaks: (input) => found(input, passes) !== null,
    scanner: () => {
      let tail = '';
      return {
        push(chunk) {
          const window =
            tail + Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('latin1');
          const hit = found(window, bytePasses);
          tail = window.slice(Math.max(0, window.length - (longest - 1)));
          return hit;
        },
      };
    },
  };
}

export const noScrub: Scrubber = {
  text: (t) => t,
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
