/**
 * A Hermes Agent session as records: the object `hermes sessions export`
 * prints for it, the `sessions` row with its active `messages` rows in a
 * `messages` array (docs/formats/hermes.md). The text layer is the
 * document's own (json-document.ts); a document that is JSON but not a
 * session (no string `id`, no `messages` array) is kept and reported.
 */
import { parseJsonDocument, renderJsonDocument, type JsonDocument } from '../json-document.ts';
import type { Parsed, TextCodec } from '../types.ts';

export type HermesExport = JsonDocument;

export const hermesText: TextCodec<HermesExport> = {
  parse(text: string, source = '<hermes session>'): Parsed<HermesExport> {
    const { doc, warnings } = parseJsonDocument(text, source);
    if (doc.kind === 'object' && (typeof doc.json.id !== 'string' || !Array.isArray(doc.json.messages)))
      warnings.push({
        source,
        message:
          'not a Hermes session export (it needs a string "id" and a "messages" array); kept verbatim, no conversation read',
      });
    return { records: doc, warnings };
  },
  render: renderJsonDocument,
};
