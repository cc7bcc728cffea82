/**
 * An OpenCode session as one document: the shape `opencode export` prints
 * and `opencode import` reads, `{info, messages: [{info, parts}]}`
 * (docs/formats/opencode.md). The store assembles it from the database's
 * `session`, `message` and `part` rows; the text layer is the document's own
 * (json-document.ts), byte for byte.
 */
import { parseJsonDocument, renderJsonDocument, type JsonDocument } from '../json-document.ts';
import type { Parsed, TextCodec } from '../types.ts';

export type OpenCodeExport = JsonDocument;

export const openCodeText: TextCodec<OpenCodeExport> = {
  parse(text: string, source = '<opencode export>'): Parsed<OpenCodeExport> {
    const { doc, warnings } = parseJsonDocument(text, source);
    if (doc.kind === 'object' && (typeof doc.json.info !== 'object' || !Array.isArray(doc.json.messages)))
      warnings.push({
        source,
        message:
          'not an OpenCode export (it needs an "info" object and a "messages" array); kept verbatim, no conversation read',
      });
    return { records: doc, warnings };
  },
  render: renderJsonDocument,
};
