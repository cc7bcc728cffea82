/**
 * Line-preserving JSONL: the text layer under the Grok Bot, Claude Code and
 * Codex codecs.
 *
 * Every line keeps its exact text and its terminator, so rendering parsed
 * lines gives back the same string for any input: LF and CRLF per line,
 * blank and whitespace-only lines, a missing final newline, a byte-order mark
 * before the first record, malformed lines (kept verbatim and reported with
 * their 1-based line, sendbox decision C17) and records no codec understands.
 * A line built in code (no `raw`) renders as `JSON.stringify(json)`.
 * Whoever changes a parsed record must build a new line, or the old text wins.
 */
import { isJsonObject } from '../model/json.ts';
import type { JsonObject } from '../model/common.ts';
import type { Warning } from './types.ts';

/** The terminator that followed a line: `''` only on a last line without a final newline. */
export type LineEnd = '\n' | '\r\n' | '';

/** What a line that held a JSON object carries besides the harness's own fields. */
export interface JsonlRecordText {
  kind: 'record';
  /**
   * The exact text of the line as read (no terminator). Rendering prefers it,
   * so unmodified records come back byte for byte; built records have none.
   */
  raw?: string;
  end: LineEnd;
  /** 1-based line number in the source, for parsed lines. */
  line?: number;
}

/** A record line: the harness's fields (at least the line's own object, `json`) plus its text. */
export type JsonlRecordLine<F extends { json: object } = { json: JsonObject }> = F & JsonlRecordText;

/** An empty or whitespace-only line: ignored by codecs, kept for rendering. */
export interface JsonlBlankLine {
  kind: 'blank';
  raw: string;
  end: LineEnd;
}

/** A line that is not a JSON object (C17): skipped by codecs, kept verbatim. */
export interface JsonlMalformedLine {
  kind: 'malformed';
  raw: string;
  end: LineEnd;
  line: number;
  error: string;
}

export type JsonlLine<F extends { json: object } = { json: JsonObject }> =
  JsonlRecordLine<F> | JsonlBlankLine | JsonlMalformedLine;

/** What a harness makes of one JSON object line: its fields and, if it looked wrong, why. */
export interface Classified<F> {
  fields: F;
  /** A problem worth telling the user (the record is still kept). */
  problem?: string;
}

const BOM = 0xfeff;
const OPEN_BRACE = 0x7b;

/** Warning text for a line that is not a JSON object; `undefined` when it is one. */
function malformedReason(value: unknown): string | undefined {
  if (isJsonObject(value)) return undefined;
  return `expected a JSON object, found ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}`;
}

/**
 * Split text into lines and classify each JSON object line. Never throws: a
 * line that is not a JSON object is kept verbatim as `malformed` with a
 * warning naming the source and the 1-based line number.
 */
export function parseJsonl<F extends { json: object }>(
  text: string,
  source: string,
  classify: (value: JsonObject) => Classified<F>,
): { lines: JsonlLine<F>[]; warnings: Warning[] } {
  const lines: JsonlLine<F>[] = [];
  const warnings: Warning[] = [];
  const length = text.length;
  let pos = 0;
  let line = 0;
  while (pos < length) {
    line++;
    const nl = text.indexOf('\n', pos);
    let stop: number;
    let end: LineEnd;
    if (nl === -1) {
      stop = length;
      end = '';
    } else if (nl > pos && text.charCodeAt(nl - 1) === 13) {
      stop = nl - 1;
      end = '\r\n';
    } else {
      stop = nl;
      end = '\n';
    }
    const raw = text.slice(pos, stop);
    pos = nl === -1 ? length : nl + 1;
    // Fast path: almost every line is a record starting with `{`.
    if (raw.charCodeAt(0) !== OPEN_BRACE && raw.trim() === '') {
      lines.push({ kind: 'blank', raw, end });
      continue;
    }
    let value: unknown;
    let error: string | undefined;
    try {
      // A UTF-8 byte-order mark may open the file; JSON.parse does not accept it.
      value = JSON.parse(line === 1 && raw.charCodeAt(0) === BOM ? raw.slice(1) : raw);
      error = malformedReason(value);
    } catch (e) {
      error = `malformed JSON (${e instanceof Error ? e.message : String(e)})`;
    }
    if (error !== undefined) {
      lines.push({ kind: 'malformed', raw, end, line, error });
      warnings.push({ source, line, message: `${error}; line skipped and kept verbatim` });
      continue;
    }
    const { fields, problem } = classify(value as JsonObject);
    lines.push(Object.assign(fields, { kind: 'record' as const, raw, end, line }));
    if (problem !== undefined) warnings.push({ source, line, message: problem });
  }
  return { lines, warnings };
}

/** The exact inverse of parseJsonl for parsed lines; built lines are stringified. */
export function renderJsonl(lines: readonly JsonlLine<{ json: object }>[]): string {
  let out = '';
  for (const line of lines) {
    out += (line.raw ?? JSON.stringify(line.kind === 'record' ? line.json : null)) + line.end;
  }
  return out;
}

/** A line built in code: rendered with JSON.stringify and a `\n`. */
export function builtLine<F extends { json: object }>(fields: F): JsonlRecordLine<F> {
  return Object.assign(fields, { kind: 'record' as const, end: '\n' as const });
}
