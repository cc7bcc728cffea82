/**
 * pi session entries and the text codec. A pi session file is JSONL: a
 * `session` header, then entries that carry `id` / `parentId` and form a
 * tree (docs/formats/pi.md). Every line keeps its own text; a line that is
 * not an entry pi could have written (no string `type`, a header without an
 * id, a `message` without a role) is kept whole as `other` and reported.
 */
import type { JsonObject } from '../../model/common.ts';
import { isJsonObject } from '../../model/json.ts';
import {
  hasStringType,
  parseJsonl,
  readJsonl,
  renderJsonl,
  type Classified,
  type JsonlLine,
  type LineSource,
} from '../jsonl.ts';
import type { Parsed, TextCodec, Warning } from '../types.ts';

/** An entry the codec reads (`entry`), or a line kept for rendering only (`other`). */
export type PiRecord = { shape: 'entry'; json: JsonObject } | { shape: 'other'; json: JsonObject };

export type PiLine = JsonlLine<PiRecord>;

/** Why an object is not an entry, or undefined when it is one. */
function entryProblem(value: JsonObject): string | undefined {
  const type = value.type;
  if (typeof type !== 'string') return 'no string "type"';
  if (type === 'session' && typeof value.id !== 'string') return 'a session header without a string "id"';
  if (type === 'message') {
    const message = value.message;
    if (!isJsonObject(message) || typeof message.role !== 'string')
      return 'a message entry without a "message" object that has a string "role"';
  }
  if (value.parentId !== undefined && value.parentId !== null && typeof value.parentId !== 'string')
    return '"parentId" is neither a string nor null';
  return undefined;
}

export function classifyPiRecord(value: JsonObject): Classified<PiRecord> {
  const problem = entryProblem(value);
  if (problem === undefined) return { fields: { shape: 'entry', json: value } };
  return {
    fields: { shape: 'other', json: value },
    problem: `not a pi session entry (${problem}); kept verbatim, skipped in the conversation`,
  };
}

export const piText: TextCodec<PiLine[]> = {
  parse(text: string, source = '<pi text>'): Parsed<PiLine[]> {
    const { lines, warnings } = parseJsonl(text, source, classifyPiRecord, { recoverGlued: hasStringType });
    return { records: lines, warnings };
  },
  render(records: PiLine[]): string {
    return renderJsonl(records);
  },
};

/** The lines of a source, classified one by one (for a reader that keeps only what it makes of them). */
export function readPiLines(lines: LineSource, source: string, each: (line: PiLine) => void): Warning[] {
  return readJsonl(lines, source, classifyPiRecord, each, { recoverGlued: hasStringType });
}
