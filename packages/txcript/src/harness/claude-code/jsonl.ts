/**
 * Line-preserving JSONL: the text layer under the Claude Code and Codex codecs.
 *
 * Every line keeps its exact text and its terminator, so rendering a parsed
 * file gives back the same bytes: CRLF, blank lines, malformed lines and a
 * missing final newline all survive. A line built in code (no `raw`) is
 * rendered with `JSON.stringify`. Whoever changes a parsed record must drop
 * its `raw`, or the old text wins.
 */
import type { JsonObject } from '../../model/common.ts';
import type { Warning } from '../types.ts';

export type Eol = '\n' | '\r\n' | '';

export type JsonlLine<R> =
  | { kind: 'record'; record: R; raw?: string; eol: Eol }
  | { kind: 'blank'; raw: string; eol: Eol }
  | { kind: 'malformed'; raw: string; eol: Eol; error: string };

/** What a harness makes of one JSON object line: its record and, if it looked wrong, why. */
export interface Classified<R> {
  record: R;
  /** A problem worth telling the user (the record is still kept). */
  problem?: string;
}

export function isJsonObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Split text into lines and classify each JSON object line. Never throws: a
 * line that is not a JSON object is kept verbatim as `malformed` with a
 * warning naming the source and the 1-based line number.
 */
export function parseJsonl<R>(
  text: string,
  source: string,
  classify: (value: JsonObject) => Classified<R>,
): { lines: JsonlLine<R>[]; warnings: Warning[] } {
  const lines: JsonlLine<R>[] = [];
  const warnings: Warning[] = [];
  let start = 0;
  let lineNo = 0;
  while (start < text.length) {
    lineNo += 1;
    const nl = text.indexOf('\n', start);
    let raw: string;
    let eol: Eol;
    if (nl === -1) {
      raw = text.slice(start);
      eol = '';
      start = text.length;
    } else if (nl > start && text.charCodeAt(nl - 1) === 13) {
      raw = text.slice(start, nl - 1);
      eol = '\r\n';
      start = nl + 1;
    } else {
      raw = text.slice(start, nl);
      eol = '\n';
      start = nl + 1;
    }
    if (raw.trim() === '') {
      lines.push({ kind: 'blank', raw, eol });
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      const error = `not valid JSON (${(e as Error).message}); kept verbatim, skipped in the conversation`;
      lines.push({ kind: 'malformed', raw, eol, error });
      warnings.push({ source, line: lineNo, message: error });
      continue;
    }
    if (!isJsonObject(value)) {
      const error = 'a JSONL record must be a JSON object; kept verbatim, skipped in the conversation';
      lines.push({ kind: 'malformed', raw, eol, error });
      warnings.push({ source, line: lineNo, message: error });
      continue;
    }
    const { record, problem } = classify(value);
    lines.push({ kind: 'record', record, raw, eol });
    if (problem !== undefined) warnings.push({ source, line: lineNo, message: problem });
  }
  return { lines, warnings };
}

/** The exact inverse of parseJsonl for parsed lines; built lines are stringified. */
export function renderJsonl<R>(lines: readonly JsonlLine<R>[], toJson: (record: R) => JsonObject): string {
  const parts: string[] = [];
  for (const line of lines) {
    parts.push(line.raw ?? JSON.stringify(line.kind === 'record' ? toJson(line.record) : {}), line.eol);
  }
  return parts.join('');
}

/** A line built in code: rendered with JSON.stringify and a `\n`. */
export function builtLine<R>(record: R): JsonlLine<R> {
  return { kind: 'record', record, eol: '\n' };
}

/**
 * The string value of a top-level key of a JSON object line, found without
 * parsing the line: a small scanner that tracks nesting and strings and stops
 * at the first match. Used by discovery, which must stay cheap on big files.
 * Returns undefined when the key is absent, not a string, or the line is
 * not an object.
 */
export function topLevelString(line: string, key: string): string | undefined {
  let i = 0;
  const n = line.length;
  while (i < n && line.charCodeAt(i) <= 32) i++;
  if (line[i] !== '{') return undefined;
  i++;
  let depth = 1;
  let expectKey = true;
  while (i < n) {
    const c = line[i];
    if (c === '"') {
      const end = stringEnd(line, i);
      if (end === -1) return undefined;
      if (depth === 1 && expectKey) {
        const name = line.slice(i + 1, end);
        let j = end + 1;
        while (j < n && line.charCodeAt(j) <= 32) j++;
        if (line[j] !== ':') return undefined;
        j++;
        while (j < n && line.charCodeAt(j) <= 32) j++;
        if (name === key) {
          if (line[j] !== '"') return undefined;
          const vEnd = stringEnd(line, j);
          if (vEnd === -1) return undefined;
          const rawValue = line.slice(j, vEnd + 1);
          return rawValue.includes('\\') ? (JSON.parse(rawValue) as string) : rawValue.slice(1, -1);
        }
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
      if (depth === 0) return undefined;
    } else if (c === ',' && depth === 1) expectKey = true;
    i++;
  }
  return undefined;
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

/** Split text into lines (without terminators) lazily, for cheap scans. */
export function* textLines(text: string): Generator<string> {
  let start = 0;
  while (start < text.length) {
    const nl = text.indexOf('\n', start);
    const end = nl === -1 ? text.length : nl;
    yield text.slice(start, end > start && text.charCodeAt(end - 1) === 13 ? end - 1 : end);
    start = end + 1;
  }
}
