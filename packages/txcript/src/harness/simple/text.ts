/**
 * Simple text codec: document text ⇄ the document as a JSON value.
 *
 * The record is the parsed object itself, so unknown keys, their order, and
 * messages or blocks the conversation cannot use are all kept verbatim.
 * Fidelity is at the JSON value level: `render` writes the canonical layout
 * (2-space indent, trailing newline), so `render(parse(t).records) === t`
 * holds for canonical text, and for any text up to whitespace and number
 * spelling.
 */
import type { JsonObject, JsonValue } from '../../model/common.ts';
import type { Parsed, TextCodec, Warning } from '../types.ts';
import { jsonTextProblem } from '../json-text.ts';
import { readMessage, readMeta } from './schema.ts';

/** A Simple document: a JSON object with a `messages` array and any other keys. */
export type SimpleDocument = JsonObject & { messages: JsonValue[] };

/** The document cannot be read at all: not JSON, or not an object with a `messages` array. */
export class SimpleFormatError extends Error {
  override readonly name = 'SimpleFormatError';
  constructor(
    /** What was wrong. */
    readonly problem: string,
    /** The file (or `-` for stdin). */
    readonly source: string,
    readonly line?: number,
    readonly column?: number,
  ) {
    const where =
      line === undefined ? source : `${source}:${line}${column === undefined ? '' : `:${column}`}`;
    super(`${problem} (${where})`);
  }
}

const DEFAULT_SOURCE = '<simple document>';

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

function parseJson(text: string, source: string): JsonValue {
  // A leading byte-order mark (common from Windows editors) is not part of the document.
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return JSON.parse(body) as JsonValue;
  } catch (err) {
    if (body.trim() === '') throw new SimpleFormatError('not JSON: the document is empty', source);
    const found = jsonTextProblem(body);
    if (found !== undefined) {
      const { line, column } = lineAndColumn(body, found.offset);
      throw new SimpleFormatError(`not JSON: ${found.message}`, source, line, column);
    }
    throw new SimpleFormatError(`not JSON: ${err instanceof Error ? err.message : String(err)}`, source);
  }
}

function kind(v: JsonValue): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/** Parse document text; throws SimpleFormatError only for the two hard errors. */
export function parseSimple(text: string, source = DEFAULT_SOURCE): Parsed<SimpleDocument> {
  const value = parseJson(text, source);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SimpleFormatError(
      `the top level is ${kind(value)}, expected an object with a "messages" array`,
      source,
    );
  }
  const messages = value.messages;
  if (messages === undefined) throw new SimpleFormatError('the document has no "messages" array', source);
  if (!Array.isArray(messages)) {
    throw new SimpleFormatError(`"messages" is ${kind(messages)}, expected an array`, source);
  }
  const warnings: Warning[] = [];
  const warn = (message: string): void => {
    warnings.push({ source, message });
  };
  for (const problem of readMeta(value).problems) warn(`${problem}; ignored, kept in the document`);
  messages.forEach((raw, i) => {
    const read = readMessage(raw, `messages[${i}]`);
    if (!read.ok) {
      warn(`${read.reason}; message kept in the document, left out of the conversation`);
      return;
    }
    for (const b of read.blocks) {
      if (!b.ok) warn(`${b.reason}; block kept in the document, left out of the conversation`);
    }
  });
  return { records: value as SimpleDocument, warnings };
}

/** The canonical text of a document: 2-space JSON with a trailing newline. */
export function renderSimple(doc: SimpleDocument): string {
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/** Where a message stands in `JSON.stringify({ messages: [message] }, null, 2)`: after the opening, before the closing. */
const MESSAGE_START = '{\n  "messages": [\n'.length;
const MESSAGE_END = '\n  ]\n}'.length;

/**
 * renderSimple in pieces, for a document given as its other keys (`head`)
 * and its messages, which come last and are stringified one at a time:
 * joined, the pieces are renderSimple({ ...head, messages }).
 */
export function* renderSimplePieces(head: JsonObject, messages: Iterable<JsonValue>): Generator<string> {
  // `"messages": []` closes the document; the messages go between the brackets, two levels deep.
  const empty = JSON.stringify({ ...head, messages: [] }, null, 2);
  const open = `${empty.slice(0, -'[]\n}'.length)}[\n`;
  let first = true;
  for (const message of messages) {
    // Stringified at its depth in the document: inside `{"messages": [...]}`, then cut out of it.
    const alone = JSON.stringify({ messages: [message] }, null, 2);
    yield `${first ? open : ',\n'}${alone.slice(MESSAGE_START, alone.length - MESSAGE_END)}`;
    first = false;
  }
  yield first ? `${empty}\n` : '\n  ]\n}\n';
}

export const simpleText: TextCodec<SimpleDocument> = {
  parse: parseSimple,
  render: renderSimple,
};
