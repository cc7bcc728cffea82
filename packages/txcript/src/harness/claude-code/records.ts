/**
 * Claude Code native records and the text codec: one JSONL line per record.
 * `user` / `assistant` lines are checked against the envelope schema and
 * `summary` lines against theirs; every other line type is kept whole as
 * `other`. The JSON kept is the line's own object (the schema checks it, it
 * does not rebuild it), so nothing outside the schema is lost.
 */
import { z } from 'zod';
import type { JsonObject } from '../../model/common.ts';
import type { Parsed, TextCodec } from '../types.ts';
import { hasStringType, parseJsonl, renderJsonl, type Classified, type JsonlLine } from '../jsonl.ts';

const ContentBlockShape = z.looseObject({ type: z.string() });

export const ClaudeMessageSchema = z.looseObject({
  role: z.string().optional(),
  content: z.union([z.string(), z.array(ContentBlockShape)]),
  model: z.string().optional(),
  id: z.string().optional(),
  stop_reason: z.string().nullable().optional(),
  usage: z.unknown().optional(),
});

export const ClaudeEntrySchema = z.looseObject({
  type: z.enum(['user', 'assistant']),
  uuid: z.string(),
  parentUuid: z.string().nullable().optional(),
  sessionId: z.string().optional(),
  timestamp: z.string().optional(),
  cwd: z.string().optional(),
  gitBranch: z.string().optional(),
  version: z.string().optional(),
  isSidechain: z.boolean().optional(),
  isMeta: z.boolean().optional(),
  userType: z.string().optional(),
  message: ClaudeMessageSchema,
});

export const ClaudeSummarySchema = z.looseObject({
  type: z.literal('summary'),
  summary: z.string(),
  leafUuid: z.string().optional(),
});

export type ClaudeEntry = z.infer<typeof ClaudeEntrySchema>;
export type ClaudeSummary = z.infer<typeof ClaudeSummarySchema>;

/** What a line's object is to the codec: a conversation entry, a summary, or anything else (kept whole). */
export type ClaudeRecord =
  | { shape: 'entry'; json: ClaudeEntry }
  | { shape: 'summary'; json: ClaudeSummary }
  | { shape: 'other'; json: JsonObject };

export type ClaudeLine = JsonlLine<ClaudeRecord>;

function issueText(error: z.ZodError): string {
  const first = error.issues[0];
  if (first === undefined) return 'does not fit the schema';
  return `${first.path.length > 0 ? first.path.join('.') : '(record)'}: ${first.message}`;
}

const optionalString = (v: unknown): boolean => v === undefined || typeof v === 'string';
const optionalBoolean = (v: unknown): boolean => v === undefined || typeof v === 'boolean';

/**
 * The envelope schema's test written out, for the lines that pass it (all but
 * broken ones): a long session has one per line, and the schema is asked only
 * when this says no, for its message. It accepts nothing the schema refuses.
 */
function fitsEnvelope(v: JsonObject): boolean {
  const m = v.message;
  if (typeof v.uuid !== 'string' || typeof m !== 'object' || m === null || Array.isArray(m)) return false;
  const c = m.content;
  const content =
    typeof c === 'string' ||
    (Array.isArray(c) &&
      c.every((b) => typeof b === 'object' && b !== null && !Array.isArray(b) && typeof b.type === 'string'));
  return (
    content &&
    (v.parentUuid === undefined || v.parentUuid === null || typeof v.parentUuid === 'string') &&
    optionalString(v.sessionId) &&
    optionalString(v.timestamp) &&
    optionalString(v.cwd) &&
    optionalString(v.gitBranch) &&
    optionalString(v.version) &&
    optionalString(v.userType) &&
    optionalBoolean(v.isSidechain) &&
    optionalBoolean(v.isMeta) &&
    optionalString(m.role) &&
    optionalString(m.model) &&
    optionalString(m.id) &&
    (m.stop_reason === undefined || m.stop_reason === null || typeof m.stop_reason === 'string')
  );
}

export function classifyClaudeRecord(value: JsonObject): Classified<ClaudeRecord> {
  const type = value.type;
  if (type === 'user' || type === 'assistant') {
    if (fitsEnvelope(value)) return { fields: { shape: 'entry', json: value as ClaudeEntry } };
    const checked = ClaudeEntrySchema.safeParse(value);
    if (checked.success) return { fields: { shape: 'entry', json: value as ClaudeEntry } };
    return {
      fields: { shape: 'other', json: value },
      problem: `${type} record does not fit the Claude Code envelope (${issueText(checked.error)}); kept verbatim, skipped in the conversation`,
    };
  }
  if (type === 'summary') {
    const checked = ClaudeSummarySchema.safeParse(value);
    if (checked.success) return { fields: { shape: 'summary', json: value as ClaudeSummary } };
    return {
      fields: { shape: 'other', json: value },
      problem: `summary record does not fit its schema (${issueText(checked.error)}); kept verbatim, not used as the title`,
    };
  }
  return { fields: { shape: 'other', json: value } };
}

export const claudeCodeText: TextCodec<ClaudeLine[]> = {
  parse(text: string, source = '<claude_code text>'): Parsed<ClaudeLine[]> {
    const { lines, warnings } = parseJsonl(text, source, classifyClaudeRecord, {
      recoverGlued: hasStringType,
    });
    return { records: lines, warnings };
  },
  render(records: ClaudeLine[]): string {
    return renderJsonl(records);
  },
};
