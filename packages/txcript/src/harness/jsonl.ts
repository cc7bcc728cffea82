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
import { jsonObjectText } from './json-text.ts';
import { type TooLongLine, tooLongText } from './line-cap.ts';
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

/** Where a line is: `[start, stop)` of `text`, then `end`. */
interface LineSpan {
  start: number;
  stop: number;
  end: LineEnd;
}

/** Calls `each` for every line of `text`, with its 1-based number. */
function forEachLine(text: string, each: (span: LineSpan, line: number) => void): void {
  const length = text.length;
  let pos = 0;
  let line = 0;
  while (pos < length) {
    line++;
    const nl = text.indexOf('\n', pos);
    if (nl === -1) {
      each({ start: pos, stop: length, end: '' }, line);
      return;
    }
    const crlf = nl > pos && text.charCodeAt(nl - 1) === 13;
    each({ start: pos, stop: crlf ? nl - 1 : nl, end: crlf ? '\r\n' : '\n' }, line);
    pos = nl + 1;
  }
}

/**
 * The lines of a document, read one by one: calls `each` with every line's
 * text (no terminator), its terminator and its 1-based number, in order.
 * A source is read once per call.
 */
export type LineSource = (
  each: (raw: string, end: LineEnd, line: number) => void,
  /** Told of each line over the reader's cap (line-cap.ts), which is skipped unread; a source of text held whole has none. */
  tooLong?: TooLongLine,
) => void;

/** One line as a source read on demand gives it: its text, or (over the reader's cap, skipped unread) its length. */
export type PulledLine =
  { raw: string; end: LineEnd; line: number } | { tooLong: true; line: number; bytes: number; cap: number };

/** The lines of a document, read again from its start at each call, one at a time as they are asked for. */
export type PulledLines = () => Iterable<PulledLine>;

/** The lines of a text held whole. */
export function linesOfText(text: string): LineSource {
  return (each) =>
    forEachLine(text, ({ start, stop, end }, line) => each(text.slice(start, stop), end, line));
}

/** A line of only white space (or nothing). */
function isBlank(text: string, start: number, stop: number): boolean {
  // Fast path: almost every line is a record starting with `{`.
  if (start < stop && text.charCodeAt(start) === OPEN_BRACE) return false;
  return text.slice(start, stop).trim() === '';
}

/** The decoded line, or why it is not a JSON object (the message JSON.parse gives, or the value's kind). */
function decodeLine(raw: string, line: number): { value: JsonObject } | { error: string } {
  try {
    // A UTF-8 byte-order mark may open the file; JSON.parse does not accept it.
    const value: unknown = JSON.parse(line === 1 && raw.charCodeAt(0) === BOM ? raw.slice(1) : raw);
    const error = malformedReason(value);
    return error === undefined ? { value: value as JsonObject } : { error };
  } catch (e) {
    return { error: `malformed JSON (${e instanceof Error ? e.message : String(e)})` };
  }
}

/**
 * What a warning about a JSONL line that cannot be read says after what is wrong with it: what was
 * done, and what the user can do (the warning names the file and the line).
 */
export const SKIPPED_LINE =
  'the line is skipped and the rest read (the file is left as it is); to read the line, repair its JSON there, or delete it if a crash cut it short';

function malformedLine(
  raw: string,
  end: LineEnd,
  line: number,
  error: string,
  source: string,
  warnings: Warning[],
): JsonlMalformedLine {
  warnings.push({ source, line, message: `${error}; ${SKIPPED_LINE}` });
  return { kind: 'malformed', raw, end, line, error };
}

/**
 * A parsed record line whose object is decoded on first use. Its text stays a
 * span of the source, so an unmodified file renders back as that source with
 * no copying, and a reader that looks at each record once (a codec) can
 * decode it without keeping the decoded tree (`decodeRecord`).
 */
class SourceRecordLine implements JsonlRecordText {
  readonly kind = 'record' as const;
  #json: JsonObject | undefined;

  constructor(
    readonly source: string,
    readonly start: number,
    readonly stop: number,
    readonly end: LineEnd,
    readonly line: number,
  ) {}

  get raw(): string {
    return this.source.slice(this.start, this.stop);
  }

  /** The decoded object, kept once decoded. */
  get json(): JsonObject {
    return (this.#json ??= this.decode());
  }

  /** The decoded object: the kept one, or a fresh one that is not kept. */
  decode(): JsonObject {
    if (this.#json !== undefined) return this.#json;
    const bom = this.line === 1 && this.source.charCodeAt(this.start) === BOM ? 1 : 0;
    return JSON.parse(this.source.slice(this.start + bom, this.stop)) as JsonObject;
  }
}

/**
 * The object of a record line, for a reader that looks at each line once:
 * a line parsed lazily is decoded without keeping the result on the line,
 * so a whole transcript's trees do not outlive the conversion.
 */
export function decodeRecord(line: JsonlRecordLine): JsonObject {
  return line instanceof SourceRecordLine ? line.decode() : line.json;
}

/**
 * Split text into lines, checking that each non-blank line is one JSON
 * object, without decoding any: the records decode on first use. Never
 * throws; a line that is not a JSON object is kept verbatim as `malformed`
 * with a warning naming the source and the 1-based line number.
 */
export function parseJsonlLazily(text: string, source: string): { lines: JsonlLine[]; warnings: Warning[] } {
  const lines: JsonlLine[] = [];
  const warnings: Warning[] = [];
  forEachLine(text, ({ start, stop, end }, line) => {
    if (isBlank(text, start, stop)) {
      lines.push({ kind: 'blank', raw: text.slice(start, stop), end });
      return;
    }
    const bom = line === 1 && text.charCodeAt(start) === BOM ? 1 : 0;
    const shape = jsonObjectText(text, start + bom, stop);
    if (shape === 'object') {
      lines.push(new SourceRecordLine(text, start, stop, end, line));
      return;
    }
    const raw = text.slice(start, stop);
    const decoded = decodeLine(raw, line);
    if ('value' in decoded) lines.push({ kind: 'record', json: decoded.value, raw, end, line });
    else lines.push(malformedLine(raw, end, line, decoded.error, source, warnings));
  });
  return { lines, warnings };
}

export interface JsonlParseOptions {
  /**
   * Recover a record glued to a truncated one: a writer that crashed mid-line
   * leaves a partial record, and its next append lands on the same line. When
   * a line is not JSON but a tail of it starting at `{` is an object this
   * accepts, that tail is the line's record (the line still renders verbatim).
   */
  recoverGlued?: (value: JsonObject) => boolean;
}

/** A record of a format whose every line carries a string `type` (Claude Code, Codex). */
export function hasStringType(value: JsonObject): boolean {
  return typeof value.type === 'string';
}

/** Tails tried per bad line: bounds the work on a long line full of braces. */
const MAX_GLUE_TRIES = 64;

/** The earliest complete record ending a line that does not parse, and where it starts. */
function gluedRecord(
  raw: string,
  accept: (value: JsonObject) => boolean,
): { at: number; value: JsonObject } | undefined {
  let at = raw.indexOf('{"', 1);
  for (let tries = 0; at !== -1 && tries < MAX_GLUE_TRIES; tries++) {
    try {
      const value: unknown = JSON.parse(raw.slice(at));
      if (isJsonObject(value) && accept(value)) return { at, value };
    } catch {
      // not a record start; try the next one
    }
    at = raw.indexOf('{"', at + 1);
  }
  return undefined;
}

/**
 * Classify one line: blank, malformed (with a warning), or a record with the
 * harness's fields. `raw` is the line's text without its terminator.
 */
function classifyLine<F extends { json: object }>(
  raw: string,
  end: LineEnd,
  line: number,
  source: string,
  classify: (value: JsonObject) => Classified<F>,
  options: JsonlParseOptions,
  warnings: Warning[],
): JsonlLine<F> {
  if (isBlank(raw, 0, raw.length)) return { kind: 'blank', raw, end };
  let decoded = decodeLine(raw, line);
  if ('error' in decoded && options.recoverGlued !== undefined) {
    const glued = gluedRecord(raw, options.recoverGlued);
    if (glued !== undefined) {
      warnings.push({
        source,
        line,
        message: `a truncated record (the first ${glued.at} characters) is glued to a complete one; the complete record is read, the truncated part skipped, the line kept verbatim`,
      });
      decoded = { value: glued.value };
    }
  }
  if ('error' in decoded) return malformedLine(raw, end, line, decoded.error, source, warnings);
  const { fields, problem } = classify(decoded.value);
  if (problem !== undefined) warnings.push({ source, line, message: problem });
  return asRecordLine(fields, raw, end, line);
}

/** `fields` made a record line in place (plain assignments: Object.assign costs a session's worth of lines). */
function asRecordLine<F extends { json: object }>(
  fields: F,
  raw: string | undefined,
  end: LineEnd,
  line: number | undefined,
): JsonlRecordLine<F> {
  const record = fields as JsonlRecordLine<F>;
  record.kind = 'record';
  if (raw !== undefined) record.raw = raw;
  record.end = end;
  if (line !== undefined) record.line = line;
  return record;
}

/**
 * Read lines one by one and classify each (see parseJsonl), handing each to
 * `each` as soon as it is read: a reader that keeps only what it makes of
 * the records never holds the whole text or every record at once. Returns
 * the warnings, in line order. `each` must not keep `raw`: for a file source
 * it is a slice of a read chunk, and would keep the chunk alive.
 */
export function readJsonl<F extends { json: object }>(
  lines: LineSource,
  source: string,
  classify: (value: JsonObject) => Classified<F>,
  each: (line: JsonlLine<F>) => void,
  options: JsonlParseOptions = {},
): Warning[] {
  const warnings: Warning[] = [];
  lines(
    (raw, end, line) => each(classifyLine(raw, end, line, source, classify, options, warnings)),
    (line, bytes, cap) => warnings.push({ source, line, message: tooLongText(bytes, cap) }),
  );
  return warnings;
}

/**
 * `readJsonl` for lines pulled one at a time: each line classified as it is
 * asked for, the text layer's warnings pushed to `warnings` in line order.
 */
export function* pullJsonl<F extends { json: object }>(
  lines: Iterable<PulledLine>,
  source: string,
  classify: (value: JsonObject) => Classified<F>,
  warnings: Warning[],
  options: JsonlParseOptions = {},
): Generator<JsonlLine<F>, void, undefined> {
  for (const l of lines) {
    if ('tooLong' in l) warnings.push({ source, line: l.line, message: tooLongText(l.bytes, l.cap) });
    else yield classifyLine(l.raw, l.end, l.line, source, classify, options, warnings);
  }
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
  options: JsonlParseOptions = {},
): { lines: JsonlLine<F>[]; warnings: Warning[] } {
  const lines: JsonlLine<F>[] = [];
  const warnings = readJsonl(linesOfText(text), source, classify, (l) => lines.push(l), options);
  return { lines, warnings };
}

/**
 * The exact inverse of parseJsonl for parsed lines; built lines are
 * stringified. Consecutive lines still standing where they were read are
 * copied from their source as one piece.
 */
export function renderJsonl(lines: readonly JsonlLine<{ json: object }>[]): string {
  let out = '';
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (line instanceof SourceRecordLine) {
      const { source, start } = line;
      let stop = line.stop + line.end.length;
      let j = i + 1;
      for (; j < lines.length; j++) {
        const next = lines[j];
        if (!(next instanceof SourceRecordLine) || next.source !== source || next.start !== stop) break;
        stop = next.stop + next.end.length;
      }
      out += source.slice(start, stop);
      i = j;
      continue;
    }
    out += lineText(line);
    i++;
  }
  return out;
}

/** The text of one line with its terminator: its own text as read, or a built record stringified. */
function lineText(line: JsonlLine<{ json: object }>): string {
  return (line.raw ?? JSON.stringify(line.kind === 'record' ? line.json : null)) + line.end;
}

/** renderJsonl in pieces, one per line, each made when it is asked for: joined, they are renderJsonl's text. */
export function* renderJsonlPieces(lines: Iterable<JsonlLine<{ json: object }>>): Generator<string> {
  for (const line of lines) yield lineText(line);
}

/** A line built in code: rendered with JSON.stringify and a `\n`. */
export function builtLine<F extends { json: object }>(fields: F): JsonlRecordLine<F> {
  return asRecordLine(fields, undefined, '\n', undefined);
}
