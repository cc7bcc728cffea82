/**
 * A Cursor desktop (editor) session as records: its `composerHeaders` row
 * and its `cursorDiskKV` rows in `state.vscdb`, cell text kept as written
 * (docs/formats/cursor-desktop.md). The text form is one JSON document with
 * the keys the Rust txcript prints for such a session (`header`,
 * `workspace_id`, `created_at`, `last_updated_at`, `is_archived`,
 * `is_subagent`, `recency`, `checkpoint_at`, `composer_data`, `bubbles`,
 * `aux`), so either tool reads the other's; a parsed document renders back
 * to its very bytes (json-document.ts).
 */
import { z } from 'zod';
import type { JsonObject } from '../../model/common.ts';
import { builtDocument, parseJsonDocument, renderJsonDocument, type JsonDocument } from '../json-document.ts';
import type { Parsed, TextCodec, Warning } from '../types.ts';

export interface KvRow {
  key: string;
  value: string;
}

export interface DesktopSession {
  /** `composerHeaders.value`: the `{"type": "head", …}` document, as text. */
  header: string;
  workspaceId?: string;
  createdAt: number;
  lastUpdatedAt: number;
  isArchived: boolean;
  isSubagent: boolean;
  recency: number;
  checkpointAt?: number;
  /** The `composerData:<id>` cell. */
  composerData?: string;
  /** `bubbleId:<id>:<bubble>` rows, in rowid order. */
  bubbles: KvRow[];
  /** Other rows naming the session (checkpoints, row heights, kinds not modelled), kept for a native round trip. */
  aux: KvRow[];
}

export type DesktopRecords = JsonDocument;

const Row = z.object({ key: z.string(), value: z.string() });
const SessionSchema = z.looseObject({
  header: z.string(),
  workspace_id: z.string().nullish(),
  created_at: z.number().optional(),
  last_updated_at: z.number().optional(),
  is_archived: z.boolean().optional(),
  is_subagent: z.boolean().optional(),
  recency: z.number().optional(),
  checkpoint_at: z.number().nullish(),
  composer_data: z.string().nullish(),
  bubbles: z.array(Row),
  aux: z.array(Row).optional(),
});

/** The document a session's rows make (the text form). */
export function desktopDocument(s: DesktopSession): JsonDocument {
  const json: JsonObject = { header: s.header };
  if (s.workspaceId !== undefined) json.workspace_id = s.workspaceId;
  json.created_at = s.createdAt;
  json.last_updated_at = s.lastUpdatedAt;
  if (s.isArchived) json.is_archived = true;
  if (s.isSubagent) json.is_subagent = true;
  json.recency = s.recency;
  if (s.checkpointAt !== undefined) json.checkpoint_at = s.checkpointAt;
  if (s.composerData !== undefined) json.composer_data = s.composerData;
  json.bubbles = s.bubbles.map((r) => ({ key: r.key, value: r.value }));
  if (s.aux.length > 0) json.aux = s.aux.map((r) => ({ key: r.key, value: r.value }));
  return builtDocument(json);
}

/** The rows a document holds; one without the shape gives an empty session and a warning. */
export function desktopSession(
  doc: JsonDocument,
  source: string,
): { session: DesktopSession; warnings: Warning[] } {
  const empty: DesktopSession = {
    header: '{}',
    createdAt: 0,
    lastUpdatedAt: 0,
    isArchived: false,
    isSubagent: false,
    recency: 0,
    bubbles: [],
    aux: [],
  };
  if (doc.kind === 'malformed') return { session: empty, warnings: [] };
  const parsed = SessionSchema.safeParse(doc.json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      session: empty,
      warnings: [
        {
          source,
          message: `not a Cursor desktop session document (${issue?.path.join('.') || '(document)'}: ${issue?.message ?? 'bad shape'}); it needs "header" (text) and "bubbles": [{"key", "value"}]`,
        },
      ],
    };
  }
  const d = parsed.data;
  return {
    session: {
      header: d.header,
      ...(d.workspace_id != null ? { workspaceId: d.workspace_id } : {}),
      createdAt: d.created_at ?? 0,
      lastUpdatedAt: d.last_updated_at ?? 0,
      isArchived: d.is_archived ?? false,
      isSubagent: d.is_subagent ?? false,
      recency: d.recency ?? 0,
      ...(d.checkpoint_at != null ? { checkpointAt: d.checkpoint_at } : {}),
      ...(d.composer_data != null ? { composerData: d.composer_data } : {}),
      bubbles: d.bubbles,
      aux: d.aux ?? [],
    },
    warnings: [],
  };
}

export const desktopText: TextCodec<DesktopRecords> = {
  parse(text: string, source = '<cursor desktop session>'): Parsed<DesktopRecords> {
    const { doc, warnings } = parseJsonDocument(text, source);
    return { records: doc, warnings: [...warnings, ...desktopSession(doc, source).warnings] };
  },
  render: renderJsonDocument,
};
