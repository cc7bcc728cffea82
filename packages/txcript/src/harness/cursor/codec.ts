/**
 * Cursor CLI records <-> Common (docs/formats/cursor.md).
 *
 * The conversation is the JSON blobs of `store.db` in row order: Vercel AI
 * SDK style messages, `user` (text wrapped in `<user_query>`), `assistant`
 * (`text`, `reasoning`, `redacted-reasoning`, `tool-call`, `image`) and
 * `tool` (`tool-result` parts). Blobs that are not JSON are Cursor's
 * protobuf turn graph and carry no message of their own. A user blob holding
 * `<user_info>` is context the CLI injects, not the user's turn.
 *
 * Writing makes the JSON blobs, the turn graph the CLI resumes from
 * (graph.ts), the agent record (`meta` key `0`, hex JSON) and `meta.json`.
 */
import { z } from 'zod';
import type { Block, JsonObject, JsonValue, Message, Meta, Transcript } from '../../model/common.ts';
import { isJsonObject } from '../../model/json.ts';
import { uuidV5 } from '../../model/uuid.ts';
import { artifactText, normalizeTimestamp, titleFromText } from '../common-values.ts';
import { repairToolPairing } from '../orphans.ts';
import type { WarningCodec, WarningContext } from '../types.ts';
import { outputText, turnGraph } from './graph.ts';
import {
  cursorDb,
  cursorDocument,
  sha256Hex,
  type CursorBlob,
  type CursorDb,
  type CursorRecords,
} from './records.ts';
import { commonToolToCursor, cursorToolToCommon } from './tools.ts';
import { millisTime, nonEmpty } from '../native-values.ts';

/** Namespace of call ids minted for a `tool-call` without one (fixed, random). */
const CALL_NS = '3e5b7a10-2c4d-4f6e-8a9b-0c1d2e3f4a5b';
const UNIX_EPOCH = '1970-01-01T00:00:00.000Z';

const PartSchema = z.looseObject({ type: z.string() });
const MessageBlobSchema = z.looseObject({
  role: z.string(),
  content: z.union([z.string(), z.array(PartSchema)]).optional(),
  createdAt: z.union([z.number(), z.string()]).optional(),
  timestamp: z.union([z.number(), z.string()]).optional(),
  isError: z.boolean().optional(),
});
type MessageBlob = z.infer<typeof MessageBlobSchema>;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A blob's JSON object, or undefined for graph bytes; a blob that starts like JSON but is not is `malformed`. */
function blobJson(blob: CursorBlob): JsonObject | 'malformed' | undefined {
  if (blob.data[0] !== 0x7b) return undefined; // `{`: a protobuf message never starts with a group tag
  try {
    const v: unknown = JSON.parse(utf8.decode(blob.data));
    return isJsonObject(v) ? v : 'malformed';
  } catch {
    return 'malformed';
  }
}

/** The agent record in `meta` key `0`: hex-encoded JSON, or plain JSON in some versions. */
export function agentRecord(db: CursorDb): JsonObject | undefined {
  const raw = db.meta.find((m) => m.key === '0')?.value;
  if (raw === undefined) return undefined;
  for (const text of [raw, /^(?:[0-9a-f]{2})+$/i.test(raw) ? Buffer.from(raw, 'hex').toString('utf8') : '']) {
    try {
      const v: unknown = JSON.parse(text);
      if (isJsonObject(v)) return v;
    } catch {
      // the other encoding
    }
  }
  return undefined;
}

function blobTime(b: MessageBlob): string | undefined {
  for (const v of [b.createdAt, b.timestamp]) {
    if (typeof v === 'number') return millisTime(v);
    if (typeof v === 'string') return normalizeTimestamp(v);
  }
  return undefined;
}

function stripUserQuery(text: string): string {
  const m = /^\s*<user_query>\s*([\s\S]*?)\s*<\/user_query>\s*$/.exec(text);
  return m !== null ? m[1]! : text;
}

/** `[REDACTED]` marks text the CLI withheld from its store; it is not the message's. */
function withoutRedactions(text: string): string {
  return text
    .replaceAll('\n\n[REDACTED]', '')
    .replaceAll('[REDACTED]\n\n', '')
    .replaceAll('[REDACTED]', '')
    .trim();
}

function contentStrings(content: MessageBlob['content']): string[] {
  if (typeof content === 'string') return [content];
  if (content === undefined) return [];
  const out: string[] = [];
  for (const p of content) {
    if (typeof p.text === 'string') out.push(p.text);
    else if (typeof p.result === 'string') out.push(p.result);
  }
  return out;
}

const isInjectedContext = (b: MessageBlob): boolean =>
  contentStrings(b.content).some((s) => s.includes('<user_info>'));

function imageBlock(p: JsonObject): Block | undefined {
  const source = p.source;
  if (isJsonObject(source) && typeof source.media_type === 'string' && typeof source.data === 'string')
    return {
      type: 'image',
      source: {
        type: typeof source.type === 'string' ? source.type : 'base64',
        media_type: source.media_type,
        data: source.data,
      },
    };
  // The AI SDK's own image part: base64 `image` with `mimeType` (v4) or `mediaType` (v5).
  const media =
    typeof p.mimeType === 'string' ? p.mimeType : typeof p.mediaType === 'string' ? p.mediaType : undefined;
  if (typeof p.image === 'string' && media !== undefined)
    return { type: 'image', source: { type: 'base64', media_type: media, data: p.image } };
  return undefined;
}

function userBlocks(b: MessageBlob): Block[] {
  const text = (t: string): Block[] => {
    const clean = withoutRedactions(stripUserQuery(t));
    return clean === '' ? [] : [{ type: 'text', text: clean }];
  };
  if (typeof b.content === 'string') return text(b.content);
  const out: Block[] = [];
  for (const p of b.content ?? []) {
    if (p.type === 'text' && typeof p.text === 'string') out.push(...text(p.text));
    else if (p.type === 'image') {
      const image = imageBlock(p as JsonObject);
      if (image !== undefined) out.push(image);
    }
  }
  return out;
}

/** Cursor writes no error flag on results; an `Error:` start or a failed exit is how an error reads. */
const looksLikeError = (text: string): boolean =>
  text.startsWith('Error:') || text.includes(' exited with code ');

function assistantBlocks(b: MessageBlob, sessionId: string, index: number): Block[] {
  if (!Array.isArray(b.content)) return [];
  const out: Block[] = [];
  b.content.forEach((p, j) => {
    const part = p as JsonObject;
    switch (p.type) {
      case 'text': {
        const text = typeof p.text === 'string' ? withoutRedactions(p.text) : '';
        if (text !== '') out.push({ type: 'text', text });
        break;
      }
      case 'reasoning':
      case 'thinking': {
        const text = nonEmpty(part.text) ?? nonEmpty(part.thinking) ?? '';
        const signature = nonEmpty(part.signature);
        const encrypted = nonEmpty(part.data);
        out.push({
          type: 'thinking',
          text,
          ...(signature !== undefined ? { signature } : {}),
          ...(encrypted !== undefined ? { encrypted } : {}),
        });
        break;
      }
      case 'redacted-reasoning':
        out.push({
          type: 'thinking',
          text: '',
          ...(nonEmpty(part.data) !== undefined ? { encrypted: nonEmpty(part.data)! } : {}),
        });
        break;
      case 'tool-call': {
        const name = nonEmpty(part.toolName);
        if (name === undefined) break;
        const id = nonEmpty(part.toolCallId) ?? uuidV5(CALL_NS, `${sessionId}:${index}:${j}:${name}`);
        out.push({ type: 'tool_use', id, tool: cursorToolToCommon(name, part.args ?? {}) });
        break;
      }
      case 'image': {
        const image = imageBlock(part);
        if (image !== undefined) out.push(image);
        break;
      }
    }
  });
  return out;
}

function toolResultBlocks(b: MessageBlob): Block[] {
  if (!Array.isArray(b.content)) return [];
  const out: Block[] = [];
  for (const p of b.content) {
    const part = p as JsonObject;
    const id = nonEmpty(part.toolCallId);
    if (p.type !== 'tool-result' || id === undefined) continue;
    const content: JsonValue = part.result === undefined ? '' : part.result;
    const flag = typeof part.isError === 'boolean' ? part.isError : b.isError;
    const isError = flag ?? (typeof content === 'string' && looksLikeError(content));
    out.push({ type: 'tool_result', tool_use_id: id, content, ...(isError ? { is_error: true } : {}) });
  }
  return out;
}

function blobModel(json: JsonObject): string | undefined {
  const options = json.providerOptions;
  if (isJsonObject(options) && isJsonObject(options.cursor)) return nonEmpty(options.cursor.modelName);
  return undefined;
}

function toCommon(records: CursorRecords, ctx: WarningContext): Transcript {
  const source = ctx.source ?? ctx.sessionId;
  const { db } = cursorDb(records, source);
  const agent = agentRecord(db);
  const sessionMeta = db.sessionMeta ?? {};
  const id = nonEmpty(agent?.agentId) ?? ctx.sessionId;
  const messages: Message[] = [];
  const untimed: number[] = [];
  let cwd = nonEmpty(agent?.workspacePath);
  let model = nonEmpty(agent?.lastUsedModel);
  for (const blob of db.blobs) {
    const json = blobJson(blob);
    if (json === undefined) continue;
    const parsed = json === 'malformed' ? undefined : MessageBlobSchema.safeParse(json);
    if (parsed?.success === false && !('role' in (json as JsonObject))) continue; // JSON state, not a message
    if (parsed === undefined || !parsed.success) {
      ctx.onWarning?.({
        source,
        message: `blob ${blob.id.slice(0, 16)}… looks like a JSON message but is not one; skipped (Cursor wrote it partly, or another program changed it)`,
      });
      continue;
    }
    const b = parsed.data;
    let message: Message | undefined;
    if (b.role === 'user') {
      if (isInjectedContext(b)) {
        cwd ??= contentStrings(b.content)
          .flatMap((s) => s.split('\n'))
          .find((l) => l.startsWith('Workspace Path: '))
          ?.slice('Workspace Path: '.length)
          .trim();
        continue;
      }
      const content = userBlocks(b);
      if (content.length > 0) message = { role: 'user', content, timestamp: '' };
    } else if (b.role === 'assistant') {
      const content = assistantBlocks(b, id, messages.length);
      const m = blobModel(json as JsonObject);
      model ??= m;
      if (content.length > 0)
        message = {
          role: 'assistant',
          content,
          timestamp: '',
          ...((m ?? model) !== undefined ? { model: m ?? model! } : {}),
        };
    } else if (b.role === 'tool') {
      const content = toolResultBlocks(b);
      if (content.length > 0) message = { role: 'user', content, timestamp: '' };
    }
    if (message === undefined) continue;
    const at = blobTime(b);
    if (at === undefined) untimed.push(messages.length);
    message.timestamp = at ?? '';
    messages.push(message);
  }
  const start =
    millisTime(sessionMeta.createdAtMs) ??
    millisTime(agent?.createdAt) ??
    messages.find((m) => m.timestamp !== '')?.timestamp ??
    ctx.timestamp ??
    UNIX_EPOCH;
  // An untimed message takes the time of the one before it (or the session's start).
  let last = start;
  for (const m of messages) {
    if (m.timestamp === '') m.timestamp = last;
    else last = m.timestamp;
  }
  for (const i of untimed) ctx.untimed?.add(i);
  const firstUser = messages.find((m) => m.role === 'user' && m.content[0]?.type === 'text')?.content[0];
  const title =
    nonEmpty(sessionMeta.title) ??
    nonEmpty(agent?.name) ??
    (firstUser?.type === 'text' ? titleFromText(firstUser.text) : undefined);
  const meta: Meta = {
    id,
    timestamp: start,
    ...(cwd !== undefined ? { cwd } : {}),
    ...(title !== undefined ? { title } : {}),
    ...(model !== undefined ? { model } : {}),
  };
  return { meta, messages };
}

function userPart(b: Block): JsonObject {
  switch (b.type) {
    case 'text':
      return { type: 'text', text: `<user_query>\n${b.text}\n</user_query>` };
    case 'image':
      return {
        type: 'image',
        source: { type: b.source.type, media_type: b.source.media_type, data: b.source.data },
      };
    case 'thinking':
      return { type: 'text', text: b.text };
    case 'artifact':
      return { type: 'text', text: artifactText(b.artifact) };
    case 'tool_use':
      return { type: 'text', text: JSON.stringify(commonToolToCursor(b.tool)) };
    case 'tool_result':
      return { type: 'text', text: outputText(b.content) };
  }
}

function assistantPart(b: Block): JsonObject | undefined {
  switch (b.type) {
    case 'text':
      return { type: 'text', text: b.text };
    case 'thinking':
      if (b.encrypted !== undefined && b.text === '')
        return { type: 'redacted-reasoning', data: b.encrypted };
      return {
        type: 'reasoning',
        text: b.text,
        ...(b.signature !== undefined ? { signature: b.signature } : {}),
        ...(b.encrypted !== undefined ? { data: b.encrypted } : {}),
      };
    case 'tool_use': {
      const { name, args } = commonToolToCursor(b.tool);
      return { type: 'tool-call', toolCallId: b.id, toolName: name, args };
    }
    case 'image':
      return {
        type: 'image',
        source: { type: b.source.type, media_type: b.source.media_type, data: b.source.data },
      };
    case 'artifact':
      return { type: 'text', text: artifactText(b.artifact) };
    case 'tool_result':
      return undefined; // results ride `tool` blobs
  }
}

/** The message blobs of a conversation, in order. */
function messageBlobs(transcript: Transcript): JsonObject[] {
  const names = new Map<string, string>();
  const out: JsonObject[] = [];
  for (const m of transcript.messages) {
    const at = Date.parse(m.timestamp);
    const createdAt = Number.isFinite(at) ? at : 0;
    if (m.role === 'assistant') {
      const content = m.content.flatMap((b) => {
        if (b.type === 'tool_use') names.set(b.id, commonToolToCursor(b.tool).name);
        return assistantPart(b) ?? [];
      });
      const model = m.model ?? transcript.meta.model;
      if (content.length > 0)
        out.push({
          role: 'assistant',
          content,
          createdAt,
          ...(model !== undefined ? { providerOptions: { cursor: { modelName: model } } } : {}),
        });
      continue;
    }
    const rest: JsonObject[] = [];
    for (const b of m.content) {
      if (b.type !== 'tool_result') rest.push(userPart(b));
      else
        out.push({
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: b.tool_use_id,
              toolName: names.get(b.tool_use_id) ?? 'tool',
              result: b.content,
              isError: b.is_error === true,
            },
          ],
          createdAt,
        });
    }
    if (rest.length > 0) out.push({ role: 'user', content: rest, createdAt });
  }
  return out;
}

function fromCommon(input: Transcript): CursorRecords {
  const transcript = repairToolPairing(input);
  const { meta } = transcript;
  const blobs: CursorBlob[] = messageBlobs(transcript).map((json) => {
    const data = Buffer.from(JSON.stringify(json), 'utf8');
    return { id: sha256Hex(data), data };
  });
  const graph = turnGraph(meta, transcript.messages);
  blobs.push(...graph.blobs);
  const created = Date.parse(meta.timestamp);
  const last = transcript.messages.reduce((t, m) => Math.max(t, Date.parse(m.timestamp) || 0), created);
  const title = meta.title ?? 'Imported session';
  // No `isRunEverything` or approval mode: a continued session starts with Cursor's own defaults.
  const agent: JsonObject = {
    agentId: meta.id,
    latestRootBlobId: graph.root,
    name: title,
    createdAt: created,
    mode: 'default',
    ...(meta.model !== undefined ? { lastUsedModel: meta.model } : {}),
    ...(meta.cwd !== undefined ? { workspacePath: meta.cwd } : {}),
  };
  return cursorDocument({
    blobs,
    meta: [{ key: '0', value: Buffer.from(JSON.stringify(agent), 'utf8').toString('hex') }],
    sessionMeta: {
      schemaVersion: 1,
      title,
      createdAtMs: created,
      updatedAtMs: last,
      hasConversation: blobs.length > 0,
    },
  });
}

export const cursorCodec: WarningCodec<CursorRecords> = {
  toCommon,
  fromCommon,
};
