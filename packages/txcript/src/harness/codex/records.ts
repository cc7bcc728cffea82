/**
 * Codex rollout records and the text codec. Every rollout line is the same
 * envelope, `{timestamp, type, payload}`; the envelope is checked with Zod,
 * and so are the payloads the codec relies on (`session_meta` needs an `id`,
 * a `response_item` a `type`). A line that fails is kept whole as `other`
 * with a warning. The kept JSON is the line's own object, never rebuilt.
 */
import { z } from 'zod';
import type { JsonObject } from '../../model/common.ts';
import { isJsonObject } from '../../model/json.ts';
import { hasStringType, parseJsonl, renderJsonl, type Classified, type JsonlLine } from '../jsonl.ts';
import type { Parsed, TextCodec } from '../types.ts';

export const RolloutLineSchema = z.looseObject({
  timestamp: z.string().optional(),
  type: z.string(),
  payload: z.unknown().optional(),
});

const payloadChecks: Record<string, z.ZodType> = {
  session_meta: z.looseObject({ id: z.string() }),
  response_item: z.looseObject({ type: z.string() }),
  event_msg: z.looseObject({ type: z.string() }),
  turn_context: z.looseObject({}),
};

export type RolloutLine = z.infer<typeof RolloutLineSchema>;

/** What a line's object is to the codec: a rollout line, or anything else (kept whole). */
export type CodexRecord = { shape: 'rollout'; json: RolloutLine } | { shape: 'other'; json: JsonObject };

export type CodexLine = JsonlLine<CodexRecord>;

/** The payload checks written out, so the schemas are asked only about a line that fails them. */
const payloadFits: Record<string, (p: unknown) => boolean> = {
  session_meta: (p) => isJsonObject(p) && typeof p.id === 'string',
  response_item: (p) => isJsonObject(p) && typeof p.type === 'string',
  event_msg: (p) => isJsonObject(p) && typeof p.type === 'string',
  turn_context: isJsonObject,
};

function fitsRollout(value: JsonObject): boolean {
  if (typeof value.type !== 'string') return false;
  if (value.timestamp !== undefined && typeof value.timestamp !== 'string') return false;
  // Own keys only: a line typed `constructor` is not a known kind.
  const fits = Object.hasOwn(payloadFits, value.type) ? payloadFits[value.type] : undefined;
  return fits === undefined || fits(value.payload);
}

export function classifyCodexRecord(value: JsonObject): Classified<CodexRecord> {
  if (fitsRollout(value)) return { fields: { shape: 'rollout', json: value as RolloutLine } };
  const envelope = RolloutLineSchema.safeParse(value);
  if (!envelope.success) {
    const issue = envelope.error.issues[0];
    return {
      fields: { shape: 'other', json: value },
      problem: `not a rollout line (${issue ? `${issue.path.join('.') || '(record)'}: ${issue.message}` : 'bad envelope'}); kept verbatim, skipped in the conversation`,
    };
  }
  const check = Object.hasOwn(payloadChecks, envelope.data.type)
    ? payloadChecks[envelope.data.type]
    : undefined;
  if (check !== undefined) {
    const payload = check.safeParse(value.payload);
    if (!payload.success) {
      const issue = payload.error.issues[0];
      return {
        fields: { shape: 'other', json: value },
        problem: `${envelope.data.type} payload does not fit (${issue ? `payload.${issue.path.join('.')}: ${issue.message}` : 'bad payload'}); kept verbatim, skipped in the conversation`,
      };
    }
  }
  return { fields: { shape: 'rollout', json: value as RolloutLine } };
}

export const codexText: TextCodec<CodexLine[]> = {
  parse(text: string, source = '<codex text>'): Parsed<CodexLine[]> {
    const { lines, warnings } = parseJsonl(text, source, classifyCodexRecord, {
      recoverGlued: hasStringType,
    });
    return { records: lines, warnings };
  },
  render(records: CodexLine[]): string {
    return renderJsonl(records);
  },
};
