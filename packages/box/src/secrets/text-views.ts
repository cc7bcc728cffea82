/**
 * Views of a text that the scrubber searches besides the text itself, each knowing where its
 * characters came from, so a hit in a view redacts the right span of the original:
 *
 * - `joinedLines`: the line breaks taken out, so base64 or hex that a tool wrapped over several
 *   lines (`base64` at 76 columns, `xxd -p` at 60) reads as one run;
 * - `unescaped`: URL and JSON escapes decoded (`%XX` runs, `\uXXXX` runs, `\"`, `\/`, `\n`…),
 *   so a value written with any mix of escaped and plain characters reads as the value.
 *
 * `unit` says what the text is: 'text' (UTF-16, as JavaScript strings) or 'bytes' (a file's
 * bytes read as latin1, one character per byte), which is how decoded characters are written.
 */

export interface TextView {
  text: string;
  /** The span of the viewed text that character `index` of this view stands for. */
  origin(index: number): { start: number; end: number };
}

export type TextUnit = 'text' | 'bytes';

export function wholeView(text: string): TextView {
  return { text, origin: (index) => ({ start: index, end: index + 1 }) };
}

/**
 * A view built from `source` by replacing some spans; `marks` records, for each character of the
 * view that stands for a replaced span, where that span was. Characters between marks are
 * copied one for one.
 */
class MarkedView implements TextView {
  readonly #at: number[] = [];
  readonly #start: number[] = [];
  readonly #end: number[] = [];
  text = '';

  constructor(private readonly source: TextView) {}

  copy(from: string): void {
    this.text += from;
  }

  /** Appends `chars`, each standing for `[start, end)` of the source. */
  replaced(chars: string, spans: ReadonlyArray<{ start: number; end: number }>): void {
    for (let i = 0; i < chars.length; i++) {
      this.#at.push(this.text.length + i);
      this.#start.push(spans[i]!.start);
      this.#end.push(spans[i]!.end);
    }
    this.text += chars;
  }

  origin(index: number): { start: number; end: number } {
    // The last mark at or before `index`.
    let low = 0;
    let high = this.#at.length - 1;
    let found = -1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if (this.#at[middle]! <= index) {
        found = middle;
        low = middle + 1;
      } else {
        high = middle - 1;
      }
    }
    let inSource: { start: number; end: number };
    if (found === -1) inSource = { start: index, end: index + 1 };
    else if (this.#at[found] === index) inSource = { start: this.#start[found]!, end: this.#end[found]! };
    else {
      const at = this.#end[found]! + (index - this.#at[found]! - 1);
      inSource = { start: at, end: at + 1 };
    }
    const first = this.source.origin(inSource.start);
    return inSource.end - inSource.start === 1
      ? first
      : { start: first.start, end: this.source.origin(inSource.end - 1).end };
  }
}

/**
 * The view without line breaks; null when there are none. The joined text is made in one
 * replace; where its characters were is worked out only when a hit asks (hits are rare).
 */
export function joinedLines(view: TextView): TextView | null {
  const text = view.text;
  if (text.indexOf('\n') === -1 && text.indexOf('\r') === -1) return null;
  /** Per run of line breaks: the joined index of the character after it, and how many were removed up to there. */
  let after: Int32Array | null = null;
  let removed: Int32Array | null = null;
  const index = (): void => {
    const at: number[] = [];
    const total: number[] = [];
    let count = 0;
    const breaks = /[\r\n]+/g;
    for (let match = breaks.exec(text); match !== null; match = breaks.exec(text)) {
      count += match[0].length;
      at.push(match.index + match[0].length - count);
      total.push(count);
    }
    after = Int32Array.from(at);
    removed = Int32Array.from(total);
  };
  return {
    text: text.replace(/[\r\n]+/g, ''),
    origin(position) {
      if (after === null) index();
      // The last run of breaks that comes before this character.
      let low = 0;
      let high = after!.length - 1;
      let shift = 0;
      while (low <= high) {
        const middle = (low + high) >> 1;
        if (after![middle]! <= position) {
          shift = removed![middle]!;
          low = middle + 1;
        } else {
          high = middle - 1;
        }
      }
      return view.origin(position + shift);
    },
  };
}

const ESCAPES = /(?:%[0-9A-Fa-f]{2})+|(?:\\u[0-9A-Fa-f]{4})+|\\["\\/bfnrt]/g;
const SHORT: Readonly<Record<string, string>> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

/** The view with URL and JSON escapes decoded; null when it has none. */
export function unescaped(view: TextView, unit: TextUnit): TextView | null {
  const text = view.text;
  if (text.indexOf('%') === -1 && text.indexOf('\\') === -1) return null;
  const decoded = new MarkedView(view);
  let last = 0;
  let any = false;
  ESCAPES.lastIndex = 0;
  for (let match = ESCAPES.exec(text); match !== null; match = ESCAPES.exec(text)) {
    any = true;
    decoded.copy(text.slice(last, match.index));
    const run = match[0];
    if (run[0] === '%') decodePercentRun(run, match.index, unit, decoded);
    else if (run[1] === 'u') decodeUnicodeRun(run, match.index, unit, decoded);
    else decoded.replaced(SHORT[run[1]!]!, [{ start: match.index, end: match.index + 2 }]);
    last = match.index + run.length;
  }
  if (!any) return null;
  decoded.copy(text.slice(last));
  return decoded;
}

/** `%C3%A4`: the bytes; as text, decoded as UTF-8 where they are valid UTF-8, else one character per byte. */
function decodePercentRun(run: string, at: number, unit: TextUnit, into: MarkedView): void {
  const bytes = Buffer.from(run.replace(/%/g, ''), 'hex');
  const spanOf = (byte: number, count: number) => ({ start: at + 3 * byte, end: at + 3 * (byte + count) });
  const asText = unit === 'text' ? bytes.toString('utf8') : null;
  if (asText === null || !Buffer.from(asText, 'utf8').equals(bytes)) {
    into.replaced(
      bytes.toString('latin1'),
      [...bytes].map((_, index) => spanOf(index, 1)),
    );
    return;
  }
  let byte = 0;
  for (const char of asText) {
    const size = Buffer.byteLength(char, 'utf8');
    into.replaced(
      char,
      Array.from(char, () => spanOf(byte, size)),
    );
    byte += size;
  }
}

/** `\u00e4\ud83d\ude00`: UTF-16 code units; as bytes, written as their UTF-8. */
function decodeUnicodeRun(run: string, at: number, unit: TextUnit, into: MarkedView): void {
  const units = run.split('\\u').slice(1);
  const text = String.fromCharCode(...units.map((hex) => parseInt(hex, 16)));
  if (unit === 'text') {
    into.replaced(
      text,
      units.map((_, index) => ({ start: at + 6 * index, end: at + 6 * (index + 1) })),
    );
    return;
  }
  let unitIndex = 0;
  for (const char of text) {
    const span = { start: at + 6 * unitIndex, end: at + 6 * (unitIndex + char.length) };
    const bytes = Buffer.from(char, 'utf8').toString('latin1');
    into.replaced(
      bytes,
      Array.from(bytes, () => span),
    );
    unitIndex += char.length;
  }
}
