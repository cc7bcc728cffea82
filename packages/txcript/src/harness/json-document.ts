/**
 * A harness document that is one JSON object per file (an Amp thread, a
 * Grok CLI `summary.json`, an OpenCode export): the text layer keeps the
 * text it read, so rendering a parsed document gives back the same bytes; a
 * document built in code renders as 2-space JSON with a final newline. Text
 * that is not one JSON object is kept verbatim and reported with the line
 * and column where it goes wrong. Whoever changes a parsed document builds a
 * new one, or the old text wins.
 */
import type { JsonObject } from '../model/common.ts';
import { isJsonObject } from '../model/json.ts';
import { jsonTextProblem } from './json-text.ts';
import type { Warning } from './types.ts';

export type JsonDocument =
  | { kind: 'object'; json: JsonObject; /** The text as read; built documents have none. */ raw?: string }
  | { kind: 'malformed'; raw: string; error: string };

function where(text: string, offset: number): string {
  let line = 1;
  let start = 0;
  for (let i = 0; i < offset && i < text.length; i++)
    if (text.charCodeAt(i) === 10) {
      line++;
      start = i + 1;
    }
  return `line ${line}, column ${offset - start + 1}`;
}

/** Never throws: text that is not one JSON object becomes a `malformed` document with a warning. */
export function parseJsonDocument(text: string, source: string): { doc: JsonDocument; warnings: Warning[] } {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let error: string;
  try {
    const value: unknown = JSON.parse(body);
    if (isJsonObject(value)) return { doc: { kind: 'object', json: value, raw: text }, warnings: [] };
    error = `expected a JSON object, found ${Array.isArray(value) ? 'an array' : value === null ? 'null' : typeof value}`;
  } catch (e) {
    const found = body.trim() === '' ? undefined : jsonTextProblem(body);
    error =
      body.trim() === ''
        ? 'the file is empty'
        : found !== undefined
          ? `not JSON at ${where(body, found.offset)}: ${found.message}`
          : `not JSON (${e instanceof Error ? e.message : String(e)})`;
  }
  return { doc: { kind: 'malformed', raw: text, error }, warnings: [{ source, message: error }] };
}

export function renderJsonDocument(doc: JsonDocument): string {
  if (doc.kind === 'malformed') return doc.raw;
  return doc.raw ?? `${JSON.stringify(doc.json, null, 2)}\n`;
}

/** A document built in code. */
export function builtDocument(json: JsonObject): JsonDocument {
  return { kind: 'object', json };
}
