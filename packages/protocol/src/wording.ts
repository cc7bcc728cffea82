/**
 * Small helpers for text written to the model: how a received value is shown
 * and how a field path is named. Kept in one place so every message quotes
 * values the same way.
 */

/** Longest slice of a received string quoted back to the model. */
const QUOTE_LIMIT = 60;

/** A string as it appears in a message: in backticks, line breaks escaped, truncated with an ellipsis. */
export function quote(text: string, limit = QUOTE_LIMIT): string {
  const flat = text.replace(/\r/g, '\\r').replace(/\n/g, '\\n').replace(/`/g, "'");
  const short = flat.length > limit ? `${flat.slice(0, limit)}…` : flat;
  return `\`${short}\``;
}

/** What the model sent, in a few words: `you sent ${describeValue(x)}`. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string')
    return value.trim() === '' ? 'an empty string' : `the string ${quote(value)}`;
  if (typeof value === 'number' || typeof value === 'boolean') return `the ${typeof value} ${String(value)}`;
  if (Array.isArray(value))
    return value.length === 0 ? 'an empty list' : `a list of ${count(value.length, 'item')}`;
  if (typeof value === 'object') {
    const keys = Object.keys(value);
    return keys.length === 0 ? 'an empty object' : `an object with ${keys.slice(0, 6).join(', ')}`;
  }
  return `a ${typeof value}`;
}

/** `widget.options[2].label`; the root is `the input`. */
export function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return 'the input';
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out;
}

/** `widget.options[].label`: a path with indices erased, for looking up per-field hints. */
export function pathPattern(path: readonly PropertyKey[]): string {
  return formatPath(path.map((key) => (typeof key === 'number' ? -1 : key))).replace(/\[-1\]/g, '[]');
}

export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

/** `a, b or c` */
export function listOr(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} or ${items[items.length - 1] ?? ''}`;
}
