/**
 * Scrubbing secrets by value: every tool output passes through here before it
 * reaches the model, the transcript or a log. Values are replaced by a marker
 * naming the secret, so the model still knows which variable was printed.
 */

export interface Scrubber {
  /** Replaces every known secret value in `text`. */
  text(text: string): string;
  /** Deep copy of a JSON-like value with every string scrubbed (object keys included). */
  value<T>(value: T): T;
  /** True when `text` contains any known secret value. */
  leaks(text: string): boolean;
}

/** Values shorter than this are not scrubbed: replacing every "a" would destroy output without protecting anything. */
export const MIN_SCRUB_LENGTH = 4;

export function scrubberFor(secrets: ReadonlyMap<string, string>): Scrubber {
  // Longest first, so a secret that contains another is replaced whole.
  const pairs = [...secrets.entries()]
    .filter(([, v]) => v.length >= MIN_SCRUB_LENGTH)
    .sort((a, b) => b[1].length - a[1].length);
  const text = (input: string): string => {
    let out = input;
    for (const [name, secret] of pairs) {
      if (out.includes(secret)) out = out.split(secret).join(`[secret ${name} redacted]`);
    }
    return out;
  };
  const value = <T>(input: T): T => deepMapStrings(input, text);
  return { text, value, leaks: (input) => pairs.some(([, secret]) => input.includes(secret)) };
}

export const noScrub: Scrubber = { text: (t) => t, value: (v) => v, leaks: () => false };

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
