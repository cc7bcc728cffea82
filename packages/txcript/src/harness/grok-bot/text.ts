/**
 * Grok Bot text codec: JSONL text <-> native lines, lossless.
 *
 * Every line keeps its exact text and its terminator, so
 * `renderGrokBotJsonl(parseGrokBotJsonl(t).records) === t` for any string t:
 * LF and CRLF per line, blank and whitespace-only lines, a missing final
 * newline, malformed JSON (sendbox decision C17: kept verbatim, reported with
 * its 1-based line) and records the codec does not understand.
 */
import { isUtf8 } from 'node:buffer';
import type { JsonObject, JsonValue } from '../../model/common.ts';
import type { Parsed, TextCodec, Warning } from '../types.ts';

/** The terminator that followed a line: `''` only on a last line without a final newline. */
export type LineEnd = '\n' | '\r\n' | '';

/** A line that held a JSON object: an envelope, an unknown role, anything. */
export interface GrokBotRecordLine {
  kind: 'record';
  /** The decoded object. Edit it only together with dropping `raw`. */
  json: JsonObject;
  /**
   * The exact text of the line as read (no terminator). Rendering prefers it,
   * so unmodified records come back byte for byte; records built by the codec
   * have none and render as `JSON.stringify(json)`.
   */
  raw?: string;
  end: LineEnd;
  /** 1-based line number in the source, for parsed lines. */
  line?: number;
}

/** An empty or whitespace-only line: ignored by the codec, kept for rendering. */
export interface GrokBotBlankLine {
  kind: 'blank';
  raw: string;
  end: LineEnd;
}

/** A line that is not a JSON object (C17): skipped by the codec, kept verbatim. */
export interface GrokBotMalformedLine {
  kind: 'malformed';
  raw: string;
  end: LineEnd;
  line: number;
  error: string;
}

export type GrokBotLine = GrokBotRecordLine | GrokBotBlankLine | GrokBotMalformedLine;

/** The native records of one Grok Bot transcript: its lines, in file order. */
export type GrokBotRecords = GrokBotLine[];

const OPEN_BRACE = 0x7b;
const BOM = '\ufeff';

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function classify(raw: string, end: LineEnd, line: number, source: string, warnings: Warning[]): GrokBotLine {
  // Fast path: almost every line is a record starting with `{`.
  if (raw.charCodeAt(0) !== OPEN_BRACE && raw.trim() === '') return { kind: 'blank', raw, end };
  // A UTF-8 byte-order mark may open the file; JSON.parse does not accept it.
  const text = line === 1 && raw.startsWith(BOM) ? raw.slice(1) : raw;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const error = e instanceof Error ? e.message : String(e);
    warnings.push({ source, line, message: `malformed JSON, line skipped and kept verbatim: ${error}` });
    return { kind: 'malformed', raw, end, line, error };
  }
  if (!isObject(value)) {
    const error = `expected a JSON object, found ${Array.isArray(value) ? 'an array' : typeof value}`;
    warnings.push({ source, line, message: `${error}; line skipped and kept verbatim` });
    return { kind: 'malformed', raw, end, line, error };
  }
  return { kind: 'record', json: value, raw, end, line };
}

/** Split Grok Bot JSONL into lines. Never throws: bad lines are kept and reported. */
export function parseGrokBotJsonl(text: string, source = '<jsonl>'): Parsed<GrokBotRecords> {
  const records: GrokBotRecords = [];
  const warnings: Warning[] = [];
  let pos = 0;
  let line = 1;
  const length = text.length;
  while (pos < length) {
    const nl = text.indexOf('\n', pos);
    if (nl === -1) {
      records.push(classify(text.slice(pos), '', line, source, warnings));
      break;
    }
    const crlf = nl > pos && text.charCodeAt(nl - 1) === 0x0d;
    const raw = text.slice(pos, crlf ? nl - 1 : nl);
    records.push(classify(raw, crlf ? '\r\n' : '\n', line, source, warnings));
    pos = nl + 1;
    line++;
  }
  return { records, warnings };
}

/** Lines back to text: raw text where kept, else `JSON.stringify`, each with its terminator. */
export function renderGrokBotJsonl(records: readonly GrokBotLine[]): string {
  const parts = new Array<string>(records.length);
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    const body = r.raw ?? JSON.stringify(r.kind === 'record' ? r.json : null);
    parts[i] = body + r.end;
  }
  return parts.join('');
}

/** A record line built from a value (no raw text): renders as one `JSON.stringify` line plus `\n`. */
export function recordLine(json: JsonObject): GrokBotRecordLine {
  return { kind: 'record', json, end: '\n' };
}

/** The text codec object the harness exposes. */
export const grokBotText: TextCodec<GrokBotRecords> = {
  parse: parseGrokBotJsonl,
  render: renderGrokBotJsonl,
};

/**
 * Decode JSONL bytes. Invalid UTF-8 never throws: bad sequences become U+FFFD
 * and a warning names the file (the reader must not crash on one bad byte).
 */
export function decodeJsonlBytes(bytes: Uint8Array, source: string): { text: string; warnings: Warning[] } {
  const buffer = Buffer.isBuffer(bytes)
    ? bytes
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const text = buffer.toString('utf8');
  const warnings: Warning[] = isUtf8(buffer)
    ? []
    : [{ source, message: 'invalid UTF-8: bad byte sequences were replaced with U+FFFD while reading' }];
  return { text, warnings };
}

/** True when a decoded value is a JSON object (not null, not an array). */
export function isJsonObject(v: JsonValue | undefined): v is JsonObject {
  return isObject(v);
}
