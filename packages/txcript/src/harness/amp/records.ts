/**
 * An Amp thread file: one pretty-printed JSON document, `{v, id, created,
 * title, env, messages, …}` (docs/formats/amp.md). The text layer is the
 * document's own (json-document.ts); a document that is JSON but not a
 * thread (no string `id`, no `messages` array) is kept and reported.
 */
import { parseJsonDocument, renderJsonDocument, type JsonDocument } from '../json-document.ts';
import type { Parsed, TextCodec } from '../types.ts';

export type AmpThread = JsonDocument;

export const ampText: TextCodec<AmpThread> = {
  parse(text: string, source = '<amp thread>'): Parsed<AmpThread> {
    const { doc, warnings } = parseJsonDocument(text, source);
    if (doc.kind === 'object' && (typeof doc.json.id !== 'string' || !Array.isArray(doc.json.messages)))
      warnings.push({
        source,
        message:
          'not an Amp thread (it needs a string "id" and a "messages" array); kept verbatim, no conversation read',
      });
    return { records: doc, warnings };
  },
  render: renderJsonDocument,
};
