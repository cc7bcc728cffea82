/**
 * Cheap scans of JSONL text for discovery, which must stay fast on big files:
 * lines without terminators, and a top-level string value found without
 * parsing the line.
 */
import type { JsonObject } from '../model/common.ts';
import { isJsonObject } from '../model/json.ts';

/**
 * Where the value of a top-level key of a JSON object line starts, found
 * without parsing the line: a small scanner that tracks nesting and strings
 * and stops at the first match. -1 when the key is absent or the line is
 * not an object. Used by discovery, which must stay cheap on big files.
 */
function topLevelValueAt(line: string, key: string): number {
  let i = 0;
  const n = line.length;
  while (i < n && line.charCodeAt(i) <= 32) i++;
  if (line[i] !== '{') return -1;
  i++;
  let depth = 1;
  let expectKey = true;
  while (i < n) {
    const c = line[i];
    if (c === '"') {
      const end = stringEnd(line, i);
      if (end === -1) return -1;
      if (depth === 1 && expectKey) {
        const isKey = end - i - 1 === key.length && line.startsWith(key, i + 1);
        let j = end + 1;
        while (j < n && line.charCodeAt(j) <= 32) j++;
        if (line[j] !== ':') return -1;
        j++;
        while (j < n && line.charCodeAt(j) <= 32) j++;
        if (isKey) return j;
        expectKey = false;
        i = j;
        continue;
      }
      i = end + 1;
      continue;
    }
    if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return -1;
    } else if (c === ',' && depth === 1) expectKey = true;
    i++;
  }
  return -1;
}

/**
 * The string value of a top-level key of a JSON object line, found without
 * parsing the line. undefined when the key is absent, not a string, or the
 * line is not an object.
 */
export function topLevelString(line: string, key: string): string | undefined {
  const j = topLevelValueAt(line, key);
  if (j === -1 || line[j] !== '"') return undefined;
  const vEnd = stringEnd(line, j);
  if (vEnd === -1) return undefined;
  const rawValue = line.slice(j, vEnd + 1);
  return rawValue.includes('\\') ? (JSON.parse(rawValue) as string) : rawValue.slice(1, -1);
}

/** The text of a top-level literal value (`true`, `false`, `null`, a number), or undefined. */
export function topLevelLiteral(line: string, key: string): string | undefined {
  const j = topLevelValueAt(line, key);
  if (j === -1) return undefined;
  return /^(?:true|false|null|-?\d[\d.eE+-]*)/.exec(line.slice(j, j + 32))?.[0];
}

/** Index of the closing quote of the JSON string starting at `start`, or -1. */
function stringEnd(s: string, start: number): number {
  let i = start + 1;
  for (;;) {
    const q = s.indexOf('"', i);
    if (q === -1) return -1;
    let backslashes = 0;
    for (let k = q - 1; k > start && s[k] === '\\'; k--) backslashes++;
    if (backslashes % 2 === 0) return q;
    i = q + 1;
  }
}

/** A line's JSON object, or undefined when the line is not valid JSON or not an object. */
export function parseObjectLine(line: string): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
