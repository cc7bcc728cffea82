/**
 * A Cursor CLI session as records: the rows of its `store.db` (`blobs`,
 * `meta`) and its `meta.json` (docs/formats/cursor.md). The text form is one
 * JSON document, `{"blobs": [{"id", "data"}], "meta": [{"key", "value"}],
 * "session_meta": {...}}`, blob bytes in lower-case hex, the shape the Rust
 * txcript prints for a Cursor session, so either tool reads the other's
 * files. The text layer is the document's own (json-document.ts): a parsed
 * document renders back to its very bytes.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { JsonObject } from '../../model/common.ts';
import { isJsonObject } from '../../model/json.ts';
import { builtDocument, parseJsonDocument, renderJsonDocument, type JsonDocument } from '../json-document.ts';
import type { Parsed, TextCodec, Warning } from '../types.ts';

export interface CursorBlob {
  /** The row's id: the SHA-256 of `data`, in hex, for every blob Cursor writes. */
  id: string;
  data: Uint8Array;
}

export interface CursorMetaRow {
  key: string;
  value: string;
}

export interface CursorDb {
  /** In `rowid` order: nothing else orders the conversation. */
  blobs: CursorBlob[];
  meta: CursorMetaRow[];
  /** `meta.json` beside `store.db`, when there is one that parses. */
  sessionMeta?: JsonObject;
}

export type CursorRecords = JsonDocument;

const HEX = /^(?:[0-9a-f]{2})*$/i;

const DocumentSchema = z.looseObject({
  blobs: z.array(z.object({ id: z.string(), data: z.string().regex(HEX, 'expected hex bytes') })),
  meta: z.array(z.object({ key: z.string(), value: z.string() })).optional(),
  session_meta: z.record(z.string(), z.unknown()).optional(),
});

export function sha256Hex(data: Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The document a session's rows make (the text form). */
export function cursorDocument(db: CursorDb): JsonDocument {
  return builtDocument({
    blobs: db.blobs.map((b) => ({ id: b.id, data: Buffer.from(b.data).toString('hex') })),
    meta: db.meta.map((m) => ({ key: m.key, value: m.value })),
    ...(db.sessionMeta !== undefined ? { session_meta: db.sessionMeta } : {}),
  });
}

/** The rows a document holds; a document that does not have the shape gives none, with a warning. */
export function cursorDb(doc: JsonDocument, source: string): { db: CursorDb; warnings: Warning[] } {
  if (doc.kind === 'malformed') return { db: { blobs: [], meta: [] }, warnings: [] };
  const parsed = DocumentSchema.safeParse(doc.json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      db: { blobs: [], meta: [] },
      warnings: [
        {
          source,
          message: `not a Cursor session document (${issue?.path.join('.') || '(document)'}: ${issue?.message ?? 'bad shape'}); it needs "blobs": [{"id", "data" in hex}]`,
        },
      ],
    };
  }
  const sessionMeta = doc.json.session_meta;
  return {
    db: {
      blobs: parsed.data.blobs.map((b) => ({ id: b.id, data: Buffer.from(b.data, 'hex') })),
      meta: parsed.data.meta ?? [],
      ...(isJsonObject(sessionMeta) ? { sessionMeta } : {}),
    },
    warnings: [],
  };
}

export const cursorText: TextCodec<CursorRecords> = {
  parse(text: string, source = '<cursor session>'): Parsed<CursorRecords> {
    const { doc, warnings } = parseJsonDocument(text, source);
    return { records: doc, warnings: [...warnings, ...cursorDb(doc, source).warnings] };
  },
  render: renderJsonDocument,
};
