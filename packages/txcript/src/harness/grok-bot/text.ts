/**
 * Grok Bot text codec: JSONL text <-> native lines, lossless, on the shared
 * line-preserving JSONL layer (`../jsonl.ts`):
 * `renderGrokBotJsonl(parseGrokBotJsonl(t).records) === t` for any string t.
 * Every JSON object line is a record, whatever its role (the codec decides
 * what it understands); a line that is not one is kept and reported (C17).
 */
import { isUtf8 } from 'node:buffer';
import type { JsonObject } from '../../model/common.ts';
import {
  parseJsonlLazily,
  renderJsonl,
  type JsonlBlankLine,
  type JsonlLine,
  type JsonlMalformedLine,
  type JsonlRecordLine,
  type LineEnd,
} from '../jsonl.ts';
import type { Parsed, TextCodec, Warning } from '../types.ts';

export type { LineEnd };

/**
 * A line that held a JSON object: an envelope, an unknown role, anything.
 * `json` is the decoded object; `raw` the exact text, preferred when rendering.
 */
export type GrokBotRecordLine = JsonlRecordLine;
/** An empty or whitespace-only line: ignored by the codec, kept for rendering. */
export type GrokBotBlankLine = JsonlBlankLine;
/** A line that is not a JSON object (C17): skipped by the codec, kept verbatim. */
export type GrokBotMalformedLine = JsonlMalformedLine;
export type GrokBotLine = JsonlLine;

/** The native records of one Grok Bot transcript: its lines, in file order. */
export type GrokBotRecords = GrokBotLine[];

/**
 * Split Grok Bot JSONL into lines. Never throws: bad lines are kept and
 * reported. Records decode on first use of `json` (see `decodeRecord`).
 */
export function parseGrokBotJsonl(text: string, source = '<jsonl>'): Parsed<GrokBotRecords> {
  const { lines, warnings } = parseJsonlLazily(text, source);
  return { records: lines, warnings };
}

/** Lines back to text: raw text where kept, else `JSON.stringify`, each with its terminator. */
export function renderGrokBotJsonl(records: readonly GrokBotLine[]): string {
  return renderJsonl(records);
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
