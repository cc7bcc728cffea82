/**
 * An Antigravity CLI conversation as records: the rows of its
 * `conversations/<id>.db` and the display logs in `brain/<id>/`
 * (docs/formats/antigravity.md). The text form is one JSON document in the
 * shape the Rust txcript prints for an Antigravity session (snake_case
 * tables, blob columns in lower-case hex, empty optional tables and blobs
 * left out), so either tool reads the other's text. The text layer is the
 * document's own (json-document.ts): a parsed document renders back to its
 * very bytes.
 */
import type { JsonObject, JsonValue } from '../../model/common.ts';
import { isJsonObject } from '../../model/json.ts';
import { builtDocument, parseJsonDocument, renderJsonDocument, type JsonDocument } from '../json-document.ts';
import type { Parsed, TextCodec, Warning } from '../types.ts';

export interface TrajectoryMetaRow {
  trajectory_id: string;
  cascade_id: string;
  trajectory_type: number;
  source: number;
}

/** One row of `steps`; blob columns hold protobuf bytes (a NULL reads as empty). */
export interface StepRow {
  idx: number;
  step_type: number;
  status: number;
  has_subtrajectory: boolean;
  metadata: Uint8Array;
  error_details: Uint8Array;
  permissions: Uint8Array;
  task_details: Uint8Array;
  render_info: Uint8Array;
  step_payload: Uint8Array;
  step_format: number;
}

/** A row of `executor_metadata`, `parent_references` or `battle_mode_infos`. */
export interface IndexedBlobRow {
  idx: number;
  data: Uint8Array;
}

/** A row of `gen_metadata`. */
export interface SizedBlobRow extends IndexedBlobRow {
  size: number;
}

/** A row of `trajectory_metadata_blob` (`id` is `main` in every conversation seen). */
export interface KeyedBlobRow {
  id: string;
  data: Uint8Array;
}

export interface AntigravityDb {
  trajectory_meta: TrajectoryMetaRow[];
  /** In `idx` order. */
  steps: StepRow[];
  gen_metadata: SizedBlobRow[];
  executor_metadata: IndexedBlobRow[];
  parent_references: IndexedBlobRow[];
  battle_mode_infos: IndexedBlobRow[];
  trajectory_metadata_blob: KeyedBlobRow[];
  /** `brain/<id>/.system_generated/logs/transcript.jsonl`, verbatim. */
  transcript?: string;
  /** `brain/<id>/.system_generated/logs/transcript_full.jsonl`, verbatim. */
  transcript_full?: string;
}

export type AntigravityRecords = JsonDocument;

/** The blob-holding tables besides `steps`, as the text form names them. */
export const INDEXED_TABLES = ['executor_metadata', 'parent_references', 'battle_mode_infos'] as const;

const STEP_BLOBS = [
  'metadata',
  'error_details',
  'permissions',
  'task_details',
  'render_info',
  'step_payload',
] as const;
/** Step blobs the text form always writes (the others only when not empty). */
const ALWAYS = new Set<string>(['metadata', 'step_payload']);

export function emptyDb(): AntigravityDb {
  return {
    trajectory_meta: [],
    steps: [],
    gen_metadata: [],
    executor_metadata: [],
    parent_references: [],
    battle_mode_infos: [],
    trajectory_metadata_blob: [],
  };
}

const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');

/** The document a conversation's rows make (the text form). */
export function antigravityDocument(db: AntigravityDb): JsonDocument {
  const steps = db.steps.map((s): JsonObject => {
    const row: JsonObject = { idx: s.idx, step_type: s.step_type, status: s.status };
    if (s.has_subtrajectory) row.has_subtrajectory = true;
    for (const k of STEP_BLOBS) if (ALWAYS.has(k) || s[k].length > 0) row[k] = hex(s[k]);
    row.step_format = s.step_format;
    return row;
  });
  const json: JsonObject = {
    trajectory_meta: db.trajectory_meta.map((r) => ({ ...r })),
    steps,
  };
  if (db.gen_metadata.length > 0)
    json.gen_metadata = db.gen_metadata.map((r) => ({ idx: r.idx, data: hex(r.data), size: r.size }));
  for (const t of INDEXED_TABLES)
    if (db[t].length > 0) json[t] = db[t].map((r) => ({ idx: r.idx, data: hex(r.data) }));
  if (db.trajectory_metadata_blob.length > 0)
    json.trajectory_metadata_blob = db.trajectory_metadata_blob.map((r) => ({ id: r.id, data: hex(r.data) }));
  if (db.transcript !== undefined) json.transcript = db.transcript;
  if (db.transcript_full !== undefined) json.transcript_full = db.transcript_full;
  return builtDocument(json);
}

/** Reading a document's fields; the first problem is thrown with its path. */
class Shape {
  constructor(readonly path: string) {}

  static fail(path: string, wanted: string): never {
    throw new Error(`${path}: expected ${wanted}`);
  }

  rows(v: JsonValue | undefined, optional: boolean): JsonObject[] {
    if (v === undefined && optional) return [];
    if (!Array.isArray(v)) return Shape.fail(this.path, 'an array of rows');
    return v.map((r, i) => (isJsonObject(r) ? r : Shape.fail(`${this.path}[${i}]`, 'an object')));
  }
}

function int(row: JsonObject, key: string, at: string, fallback?: number): number {
  const v = row[key];
  if (v === undefined && fallback !== undefined) return fallback;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
  return Shape.fail(`${at}.${key}`, 'an integer');
}

function text(row: JsonObject, key: string, at: string): string {
  const v = row[key];
  return typeof v === 'string' ? v : Shape.fail(`${at}.${key}`, 'a string');
}

const HEX = /^(?:[0-9a-f]{2})*$/i;

function bytes(row: JsonObject, key: string, at: string, optional: boolean): Buffer {
  const v = row[key];
  if (v === undefined && optional) return Buffer.alloc(0);
  if (typeof v !== 'string' || !HEX.test(v)) return Shape.fail(`${at}.${key}`, 'hex bytes');
  return Buffer.from(v, 'hex');
}

function dbOf(json: JsonObject): AntigravityDb {
  const db = emptyDb();
  db.trajectory_meta = new Shape('trajectory_meta').rows(json.trajectory_meta, false).map((r, i) => {
    const at = `trajectory_meta[${i}]`;
    return {
      trajectory_id: text(r, 'trajectory_id', at),
      cascade_id: text(r, 'cascade_id', at),
      trajectory_type: int(r, 'trajectory_type', at),
      source: int(r, 'source', at),
    };
  });
  db.steps = new Shape('steps').rows(json.steps, false).map((r, i): StepRow => {
    const at = `steps[${i}]`;
    const flag = r.has_subtrajectory;
    if (flag !== undefined && typeof flag !== 'boolean') Shape.fail(`${at}.has_subtrajectory`, 'a boolean');
    return {
      idx: int(r, 'idx', at),
      step_type: int(r, 'step_type', at),
      status: int(r, 'status', at),
      has_subtrajectory: flag === true,
      metadata: bytes(r, 'metadata', at, false),
      error_details: bytes(r, 'error_details', at, true),
      permissions: bytes(r, 'permissions', at, true),
      task_details: bytes(r, 'task_details', at, true),
      render_info: bytes(r, 'render_info', at, true),
      step_payload: bytes(r, 'step_payload', at, false),
      step_format: int(r, 'step_format', at, 0),
    };
  });
  db.gen_metadata = new Shape('gen_metadata').rows(json.gen_metadata, true).map((r, i) => {
    const at = `gen_metadata[${i}]`;
    return { idx: int(r, 'idx', at), data: bytes(r, 'data', at, false), size: int(r, 'size', at, 0) };
  });
  for (const t of INDEXED_TABLES)
    db[t] = new Shape(t).rows(json[t], true).map((r, i) => {
      const at = `${t}[${i}]`;
      return { idx: int(r, 'idx', at), data: bytes(r, 'data', at, false) };
    });
  db.trajectory_metadata_blob = new Shape('trajectory_metadata_blob')
    .rows(json.trajectory_metadata_blob, true)
    .map((r, i) => {
      const at = `trajectory_metadata_blob[${i}]`;
      return { id: text(r, 'id', at), data: bytes(r, 'data', at, false) };
    });
  for (const k of ['transcript', 'transcript_full'] as const) {
    const v = json[k];
    if (v === undefined) continue;
    if (typeof v !== 'string') Shape.fail(k, 'a string');
    db[k] = v;
  }
  return db;
}

/** The rows a document holds; a document that does not have the shape gives none, with a warning. */
export function antigravityDb(doc: JsonDocument, source: string): { db: AntigravityDb; warnings: Warning[] } {
  if (doc.kind === 'malformed') return { db: emptyDb(), warnings: [] };
  try {
    return { db: dbOf(doc.json), warnings: [] };
  } catch (e) {
    return {
      db: emptyDb(),
      warnings: [
        {
          source,
          message: `not an Antigravity conversation document (${(e as Error).message}); it needs "trajectory_meta" and "steps" rows with blobs in hex`,
        },
      ],
    };
  }
}

export const antigravityText: TextCodec<AntigravityRecords> = {
  parse(text: string, source = '<antigravity conversation>'): Parsed<AntigravityRecords> {
    const { doc, warnings } = parseJsonDocument(text, source);
    return { records: doc, warnings: [...warnings, ...antigravityDb(doc, source).warnings] };
  },
  render: renderJsonDocument,
};
