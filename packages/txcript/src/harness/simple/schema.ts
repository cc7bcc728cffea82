/**
 * What a Simple document may hold, as Zod schemas, and the reading of one
 * message or block out of it. Everything is loose: unknown keys are allowed
 * (they stay in the native document) and a message or block that does not fit
 * is reported with the reason and left out of the conversation, never thrown.
 */
import { z } from 'zod';
import type { JsonObject, JsonValue, Role, StopReason, Usage } from '../../model/common.ts';
import { isRfc3339 } from './timestamp.ts';

const json = z.json() as z.ZodType<JsonValue>;
const timestamp = z.string().refine(isRfc3339, { message: 'not an RFC 3339 timestamp' });
const count = z.int().nonnegative();

const usageSchema = z.looseObject({
  input_tokens: count,
  output_tokens: count,
  cache_read_input_tokens: count.optional(),
  cache_creation_input_tokens: count.optional(),
});

const stopReasonSchema = z.union([
  z.enum(['end_turn', 'tool_use', 'max_tokens', 'stop_sequence', 'aborted', 'error']),
  z.strictObject({ other: z.string() }),
]);

/** Roles are matched case-insensitively (`User`, `ASSISTANT`). */
const roleSchema = z
  .string()
  .transform((r) => r.toLowerCase())
  .pipe(z.enum(['user', 'assistant'], { error: 'unknown role, expected "user" or "assistant"' }));

export const messageSchema = z.looseObject({
  role: roleSchema,
  content: z.union([z.string(), z.array(json)], { error: 'content is neither a string nor an array' }),
  timestamp: timestamp.optional(),
  model: z.string().optional(),
  stop_reason: stopReasonSchema.optional(),
  usage: usageSchema.optional(),
});

const artifactSourceSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string(), media_type: z.string().optional() }),
  z.object({ type: z.literal('base64'), data: z.string(), media_type: z.string().optional() }),
  z.object({ type: z.literal('path'), path: z.string(), media_type: z.string().optional() }),
]);

export const blockSchema = z.discriminatedUnion(
  'type',
  [
    z.looseObject({ type: z.literal('text'), text: z.string() }),
    z.looseObject({
      type: z.literal('thinking'),
      text: z.string(),
      signature: z.string().optional(),
      encrypted: z.string().optional(),
    }),
    z.looseObject({
      type: z.literal('tool_use'),
      name: z.string(),
      input: json.optional(),
      id: z.string().optional(),
    }),
    z.looseObject({
      type: z.literal('tool_result'),
      content: json.optional(),
      tool_use_id: z.string().optional(),
      is_error: z.boolean().optional(),
    }),
    z.looseObject({
      type: z.literal('image'),
      source: z.object({ type: z.string(), media_type: z.string(), data: z.string() }),
    }),
    z.looseObject({
      type: z.literal('artifact'),
      artifact: z.object({ id: z.string(), name: z.string(), source: artifactSourceSchema }),
    }),
  ],
  {
    error: (issue) =>
      `unknown block type ${JSON.stringify((issue.input as { type?: unknown } | undefined)?.type)}`,
  },
);

export type SimpleBlock = z.infer<typeof blockSchema>;

/** A block as read: either one the conversation carries, or one kept aside with the reason. */
export type ReadBlock = { ok: true; block: SimpleBlock } | { ok: false; reason: string };

export interface ReadMessage {
  ok: true;
  role: Role;
  /** Blocks in document order; a string `content` reads as one text block. */
  blocks: ReadBlock[];
  timestamp?: string;
  model?: string;
  stop_reason?: StopReason;
  usage?: Usage;
}

export type MessageReading = ReadMessage | { ok: false; reason: string };

/** The first issue of a failed parse, as `path: message` relative to `base`. */
function describe(error: z.ZodError, base: string): string {
  const issue = error.issues[0];
  if (issue === undefined) return `${base}: invalid`;
  const path = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
  return `${base}${path}: ${issue.message}`;
}

export function readBlock(raw: JsonValue, path: string): ReadBlock {
  const parsed = blockSchema.safeParse(raw);
  return parsed.success
    ? { ok: true, block: parsed.data }
    : { ok: false, reason: describe(parsed.error, path) };
}

export function readMessage(raw: JsonValue, path: string): MessageReading {
  const parsed = messageSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, reason: describe(parsed.error, path) };
  const m = parsed.data;
  const blocks: ReadBlock[] =
    typeof m.content === 'string'
      ? [{ ok: true, block: { type: 'text', text: m.content } }]
      : m.content.map((b, j) => readBlock(b, `${path}.content[${j}]`));
  const usage: Usage | undefined =
    m.usage === undefined
      ? undefined
      : {
          input_tokens: m.usage.input_tokens,
          output_tokens: m.usage.output_tokens,
          ...(m.usage.cache_read_input_tokens !== undefined && {
            cache_read_input_tokens: m.usage.cache_read_input_tokens,
          }),
          ...(m.usage.cache_creation_input_tokens !== undefined && {
            cache_creation_input_tokens: m.usage.cache_creation_input_tokens,
          }),
        };
  return {
    ok: true,
    role: m.role,
    blocks,
    ...(m.timestamp !== undefined && { timestamp: m.timestamp }),
    ...(m.model !== undefined && { model: m.model }),
    ...(m.stop_reason !== undefined && { stop_reason: m.stop_reason }),
    ...(usage !== undefined && { usage }),
  };
}

/** Document-level metadata keys and their readings; a key of the wrong type is ignored with a warning. */
export const META_KEYS = ['id', 'timestamp', 'cwd', 'git_branch', 'title', 'cli_version', 'model'] as const;
export type MetaKey = (typeof META_KEYS)[number];

/** The metadata fields that hold a usable value, and a reason for each that does not. */
export function readMeta(doc: JsonObject): { values: Partial<Record<MetaKey, string>>; problems: string[] } {
  const values: Partial<Record<MetaKey, string>> = {};
  const problems: string[] = [];
  for (const key of META_KEYS) {
    const v = doc[key];
    if (v === undefined) continue;
    if (typeof v !== 'string') {
      problems.push(
        `${key}: expected a string, got ${v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v}`,
      );
    } else if (key === 'timestamp' && !isRfc3339(v)) {
      problems.push(`timestamp: ${JSON.stringify(v)} is not an RFC 3339 timestamp`);
    } else {
      values[key] = v;
    }
  }
  return { values, problems };
}
