/**
 * A Cowork session as records: the app's session record (`local_<id>.json`),
 * the Claude Code transcript under it (one JSON value per line) and the
 * Agent SDK audit log, as the one JSON document the Rust txcript prints for
 * such a session: `{"header": {…}, "transcript": [...], "audit": [...]}`
 * (docs/formats/cowork.md). The text layer is the document's own
 * (json-document.ts): a parsed document renders back to its very bytes.
 */
import type { JsonObject, JsonValue } from '../../model/common.ts';
import { isJsonObject } from '../../model/json.ts';
import { parseJsonDocument, renderJsonDocument, type JsonDocument } from '../json-document.ts';
import type { Parsed, TextCodec } from '../types.ts';

export type CoworkRecords = JsonDocument;

export interface CoworkSession {
  header: JsonObject;
  transcript: JsonValue[];
  audit: JsonValue[];
}

/** The parts of a document; a document without a `header` object has none. */
export function coworkSession(doc: JsonDocument): CoworkSession | undefined {
  if (doc.kind !== 'object' || !isJsonObject(doc.json.header)) return undefined;
  const list = (v: JsonValue | undefined): JsonValue[] => (Array.isArray(v) ? v : []);
  return { header: doc.json.header, transcript: list(doc.json.transcript), audit: list(doc.json.audit) };
}

export const coworkText: TextCodec<CoworkRecords> = {
  parse(text: string, source = '<cowork session>'): Parsed<CoworkRecords> {
    const { doc, warnings } = parseJsonDocument(text, source);
    if (doc.kind === 'object' && coworkSession(doc) === undefined)
      warnings.push({
        source,
        message:
          'not a Cowork session document (it needs a "header" object); kept verbatim, no conversation read',
      });
    return { records: doc, warnings };
  },
  render: renderJsonDocument,
};
