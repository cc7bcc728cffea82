/**
 * Grok Bot codec: native JSONL records <-> Common.
 *
 * Rules (grok-bot-format.md §2–§5, §11, sendbox decisions C1–C6, C10, C17):
 * - `user` -> user message, `assistant` -> assistant message, `tool` -> user
 *   message carrying tool results; unknown roles, blank and malformed lines
 *   stay in the native records and are left out of Common.
 * - A record whose blocks all come out empty yields no message.
 * - The leading address tag of user text is stripped (C6) and not regenerated.
 * - `shell` -> Bash (`timeout` -> `timeout_ms`), `read` -> Read (`path` ->
 *   `file_path`), typed only when exact; everything else, `send_message`
 *   included (C1), is Raw.
 * - Tool-call ids: `input.toolCallId`, then block-level ids (C2); synthetic
 *   UUIDv5 otherwise. Results pair by id, else FIFO by tool name, else orphan (C3).
 * - `is_error` per C4; a result's Common content is its whole `result` JSON.
 */
import type {
  Artifact,
  Block,
  ImageSource,
  JsonObject,
  JsonValue,
  Message,
  StopReason,
  Tool,
  Transcript,
  Usage,
} from '../../model/common.ts';
import { toolFromCanonical, toolToCanonical } from '../../model/tool.ts';
import { uuidV5 } from '../../model/uuid.ts';
import { PendingCalls } from '../pending-calls.ts';
import type { Codec, CodecContext } from '../types.ts';
import { isJsonObject as isObject } from '../../model/json.ts';
import { decodeRecord } from '../jsonl.ts';
import { recordLine } from './text.ts';
import { stripAddressTag } from './address-tag.ts';
import type { GrokBotRecords } from './text.ts';

/** Namespace of every synthetic Grok Bot id (UUIDv5). */
export const GROK_BOT_ID_NAMESPACE = '0b07a9e7-4c2d-5f18-9a3b-6e1c8d4f2a70';

/** The session timestamp when neither the records nor the caller give one. */
export const UNIX_EPOCH = '1970-01-01T00:00:00.000Z';

/** Synthetic id of a tool call that carries none: `{session}:{recordIndex}:{blockIndex}:{name}`. */
export function syntheticCallId(
  session: string,
  recordIndex: number,
  blockIndex: number,
  name: string,
): string {
  return uuidV5(GROK_BOT_ID_NAMESPACE, `${session}:${recordIndex}:${blockIndex}:${name}`);
}

/** Id of a result that matches no call: `{session}:{recordIndex}:{blockIndex}:orphan:{name}`. */
export function orphanResultId(
  session: string,
  recordIndex: number,
  blockIndex: number,
  name: string,
): string {
  return uuidV5(GROK_BOT_ID_NAMESPACE, `${session}:${recordIndex}:${blockIndex}:orphan:${name}`);
}

/** Cheap pre-check before hashing: a synthetic id is a version-5 UUID. */
function looksSynthetic(id: string): boolean {
  return id.length === 36 && id.charCodeAt(14) === 0x35 && id.charCodeAt(8) === 0x2d;
}

/** Name written on a result whose call is not in the transcript (the native name is unknown). */
export const ORPHAN_RESULT_NAME = 'unknown';

/** Block-level id keys, in the order they are read (C2). */
const BLOCK_ID_KEYS = ['toolCallId', 'tool_call_id', 'tool_use_id'] as const;

/** The address (`t3u`) of the tag that opens a user record's first text block, if any. */
function addressOf(blocks: readonly JsonValue[]): string | undefined {
  const first = blocks.find((b) => isObject(b) && b.type === 'text');
  if (!isObject(first) || typeof first.text !== 'string') return undefined;
  return /^\[(t[0-9a-z]+)\]/.exec(first.text)?.[1];
}

// C4: every envelope key but `success` marks an error; MCP also flags success.isError.
const ERROR_KEYS = ['failure', 'rejected', 'error', 'spawnError'] as const;
const ENVELOPE_KEYS = ['success', ...ERROR_KEYS] as const;

/** Whether a native `result` is an error (sendbox decision C4). */
export function isErrorResult(result: JsonValue): boolean {
  if (!isObject(result)) return false;
  for (const k of ERROR_KEYS) if (Object.hasOwn(result, k)) return true;
  const success = result.success;
  return isObject(success) && success.isError === true;
}

function isEnvelope(result: JsonValue): boolean {
  return isObject(result) && ENVELOPE_KEYS.some((k) => Object.hasOwn(result, k));
}

const RFC3339_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z$/;
const EPOCH_MS = /^-?\d+$/;

/**
 * A record-level timestamp as RFC 3339 UTC (C10: epoch-ms string, number or
 * ISO string). RFC 3339 UTC strings are kept verbatim; unusable values are ignored.
 */
export function normalizeTimestamp(value: JsonValue | undefined): string | undefined {
  let ms: number;
  if (typeof value === 'number') ms = value;
  else if (typeof value === 'string') {
    if (RFC3339_UTC.test(value) && !Number.isNaN(Date.parse(value))) return value;
    ms = EPOCH_MS.test(value) ? Number(value) : Date.parse(value);
  } else return undefined;
  if (!Number.isFinite(ms)) return undefined;
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

function renameKey(input: JsonValue, from: string, to: string): JsonValue | undefined {
  if (!isObject(input)) return undefined;
  if (!Object.hasOwn(input, from)) return input;
  if (Object.hasOwn(input, to)) return undefined;
  const out: JsonObject = {};
  for (const k in input) out[k === from ? to : k] = input[k]!;
  return out;
}

/** Native tool name and input -> Common tool (typed only when the native form comes back exactly). */
export function toolFromNative(name: string, input: JsonValue): Tool {
  const raw: Tool = { name: 'Raw', tool_name: name, input };
  // The rename is undone exactly on the way back unless the input already holds the
  // canonical key (then it would come back renamed): such an input stays Raw.
  let typed: Tool;
  if (name === 'shell') {
    if (!isObject(input) || Object.hasOwn(input, 'timeout_ms')) return raw;
    typed = toolFromCanonical('Bash', renameKey(input, 'timeout', 'timeout_ms') ?? input);
  } else if (name === 'read') {
    if (!isObject(input) || Object.hasOwn(input, 'file_path')) return raw;
    typed = toolFromCanonical('Read', renameKey(input, 'path', 'file_path') ?? input);
  } else if (name === 'edit') {
    // The box's edit (docs/formats/grok-bot.md, "Work tools") is Common's Edit with `path`.
    if (!isObject(input) || Object.hasOwn(input, 'file_path')) return raw;
    typed = toolFromCanonical('Edit', renameKey(input, 'path', 'file_path') ?? input);
  } else if (name !== 'Bash' && name !== 'Read' && name !== 'Edit') {
    // Canonical names from other harnesses (Write, Edit, /command ...) keep their typing;
    // native Grok Bot names are lower_snake and always stay Raw.
    return toolFromCanonical(name, input);
  } else return raw;
  // toolFromCanonical types only what comes back exactly; the rename is a bijection here.
  return typed.name === 'Raw' ? raw : typed;
}

/** Common tool -> native name and input (inverse of toolFromNative). */
/** The native name toolToNative gives, without building the input. */
function nativeToolName(tool: Tool): string {
  switch (tool.name) {
    case 'Bash':
      return 'shell';
    case 'Read':
      return 'read';
    case 'Edit':
      return 'edit';
    case 'Raw':
      return tool.tool_name;
    case 'Command':
      return tool.command;
    case 'Write':
    case 'MultiEdit':
      return tool.name;
  }
}

export function toolToNative(tool: Tool): { name: string; input: JsonValue } {
  const { name, input } = toolToCanonical(tool);
  if (tool.name === 'Bash')
    return { name: 'shell', input: renameKey(input, 'timeout_ms', 'timeout') ?? input };
  if (tool.name === 'Read') return { name: 'read', input: renameKey(input, 'file_path', 'path') ?? input };
  if (tool.name === 'Edit') return { name: 'edit', input: renameKey(input, 'file_path', 'path') ?? input };
  return { name, input };
}

function withoutKey(o: JsonObject, key: string): JsonObject {
  const out: JsonObject = {};
  for (const k in o) if (k !== key) out[k] = o[k]!;
  return out;
}

/** The id a native tool_use carries, and its input with `toolCallId` removed (C2). */
function nativeCallId(block: JsonObject): { id: string | undefined; input: JsonValue } {
  const input = block.input === undefined ? {} : block.input;
  if (isObject(input) && typeof input.toolCallId === 'string') {
    return { id: input.toolCallId, input: withoutKey(input, 'toolCallId') };
  }
  return { id: blockLevelId(block), input };
}

function blockLevelId(block: JsonObject): string | undefined {
  for (const k of BLOCK_ID_KEYS) {
    const v = block[k];
    if (typeof v === 'string') return v;
  }
  return undefined;
}

function imageSource(v: JsonValue | undefined): ImageSource | undefined {
  if (!isObject(v)) return undefined;
  const { type, media_type, data } = v;
  if (typeof type !== 'string' || typeof media_type !== 'string' || typeof data !== 'string')
    return undefined;
  return { type, media_type, data };
}

function artifact(v: JsonValue | undefined): Artifact | undefined {
  if (!isObject(v) || typeof v.id !== 'string' || typeof v.name !== 'string') return undefined;
  const s = v.source;
  if (!isObject(s)) return undefined;
  const media = typeof s.media_type === 'string' ? { media_type: s.media_type } : {};
  let source: Artifact['source'];
  if (s.type === 'text' && typeof s.text === 'string') source = { type: 'text', text: s.text, ...media };
  else if (s.type === 'base64' && typeof s.data === 'string')
    source = { type: 'base64', data: s.data, ...media };
  else if (s.type === 'path' && typeof s.path === 'string') source = { type: 'path', path: s.path, ...media };
  else return undefined;
  return { id: v.id, name: v.name, source };
}

function stopReason(v: JsonValue | undefined): StopReason | undefined {
  const plain = ['end_turn', 'tool_use', 'max_tokens', 'stop_sequence', 'aborted', 'error'] as const;
  if (typeof v === 'string')
    return (plain as readonly string[]).includes(v) ? (v as StopReason) : { other: v };
  if (isObject(v) && typeof v.other === 'string' && Object.keys(v).length === 1) return { other: v.other };
  return undefined;
}

function usage(v: JsonValue | undefined): Usage | undefined {
  if (!isObject(v) || typeof v.input_tokens !== 'number' || typeof v.output_tokens !== 'number')
    return undefined;
  const u: Usage = { input_tokens: v.input_tokens, output_tokens: v.output_tokens };
  if (typeof v.cache_read_input_tokens === 'number') u.cache_read_input_tokens = v.cache_read_input_tokens;
  if (typeof v.cache_creation_input_tokens === 'number') {
    u.cache_creation_input_tokens = v.cache_creation_input_tokens;
  }
  return u;
}

/** Native records -> Common. Pure; never throws on odd records (they are left out). */
export function grokBotToCommon(records: GrokBotRecords, ctx: CodecContext): Transcript {
  const session = ctx.sessionId;
  const pending = new PendingCalls();
  const messages: Message[] = [];
  const clocks = new MessageClocks();
  /** The message index of each tool call, so a result's time can date its call too. */
  const callAt = new Map<string, number>();
  // recordIndex counts JSON-object lines only: blank and malformed lines do not shift synthetic ids.
  let recordIndex = -1;
  for (const line of records) {
    if (line.kind !== 'record') continue;
    recordIndex++;
    // Each record is looked at once: decode it without keeping the tree on the line.
    const rec = decodeRecord(line);
    const ts = normalizeTimestamp(rec.timestamp);
    if (ts !== undefined) clocks.record(recordIndex, ts);
    const role = rec.role;
    if (role !== 'user' && role !== 'assistant' && role !== 'tool') continue;
    const envelope = rec.message;
    if (!isObject(envelope)) continue;
    const nativeBlocks: JsonValue[] =
      typeof envelope.content === 'string'
        ? [{ type: 'text', text: envelope.content }]
        : Array.isArray(envelope.content)
          ? envelope.content
          : [];
    const content: Block[] = [];
    let firstText = true;
    let resultClock: string | undefined;
    for (let b = 0; b < nativeBlocks.length; b++) {
      const block = nativeBlocks[b];
      if (!isObject(block)) continue;
      const type = typeof block.type === 'string' ? block.type : '';
      switch (type) {
        case 'text': {
          if (typeof block.text !== 'string') break;
          const text = role === 'user' && firstText ? stripAddressTag(block.text) : block.text;
          firstText = false;
          // txcript: text that is only whitespace (after the tag) gives no block.
          if (text.trim() !== '') content.push({ type: 'text', text });
          break;
        }
        case 'thinking': {
          const text =
            typeof block.thinking === 'string'
              ? block.thinking
              : typeof block.text === 'string'
                ? block.text
                : '';
          const signature = typeof block.signature === 'string' ? block.signature : undefined;
          const encrypted = typeof block.encrypted === 'string' ? block.encrypted : undefined;
          if (text === '' && signature === undefined && encrypted === undefined) break;
          content.push({
            type: 'thinking',
            text,
            ...(signature !== undefined ? { signature } : {}),
            ...(encrypted !== undefined ? { encrypted } : {}),
          });
          break;
        }
        case 'tool_use': {
          if (typeof block.name !== 'string') break;
          const { id: explicit, input } = nativeCallId(block);
          const id = explicit ?? syntheticCallId(session, recordIndex, b, block.name);
          pending.add(block.name, id);
          callAt.set(id, messages.length);
          content.push({ type: 'tool_use', id, tool: toolFromNative(block.name, input) });
          break;
        }
        case 'tool_result': {
          const name = typeof block.name === 'string' ? block.name : '';
          const result = block.result === undefined ? null : block.result;
          let id = blockLevelId(block);
          if (id !== undefined) pending.answer(id);
          else id = pending.take(name) ?? orphanResultId(session, recordIndex, b, name);
          content.push({
            type: 'tool_result',
            tool_use_id: id,
            content: result,
            ...(isErrorResult(result) ? { is_error: true } : {}),
          });
          // A send's result carries when it was delivered: the time of the result and of its call.
          const at =
            isObject(result) && isObject(result.success)
              ? normalizeTimestamp(result.success.timestamp)
              : undefined;
          if (at !== undefined) {
            resultClock ??= at;
            clocks.dateCall(callAt.get(id), recordIndex, at);
          }
          break;
        }
        case 'image': {
          // sendbox extension: Grok Bot has no observed image slot (format doc §3).
          const source = imageSource(block.source);
          if (source !== undefined) content.push({ type: 'image', source });
          break;
        }
        case 'artifact': {
          const a = artifact(block.artifact);
          if (a !== undefined) content.push({ type: 'artifact', artifact: a });
          break;
        }
        default:
          break;
      }
    }
    if (content.length === 0) continue;
    const addressed = role === 'user' && ctx.addressTime !== undefined ? addressOf(nativeBlocks) : undefined;
    const addressClock = addressed === undefined ? undefined : ctx.addressTime!(addressed);
    clocks.message(messages.length, recordIndex, ts ?? resultClock ?? addressClock);
    const message: Message = {
      role: role === 'assistant' ? 'assistant' : 'user',
      content,
      timestamp: '',
    };
    if (typeof rec.model === 'string') message.model = rec.model;
    const stop = stopReason(rec.stop_reason);
    if (stop !== undefined) message.stop_reason = stop;
    const u = usage(rec.usage);
    if (u !== undefined) message.usage = u;
    messages.push(message);
  }
  const metaTimestamp = clocks.apply(messages, ctx.timestamp ?? UNIX_EPOCH, ctx.untimed);
  return { meta: { id: session, timestamp: metaTimestamp }, messages };
}

/**
 * The real clocks of a Grok Bot file, and which message each dates. Records carry no time of their
 * own (seed; a record-level `timestamp` is read when present, C10); a tool result's
 * `success.timestamp` (every delivered send has one) dates that result and its call. A message with
 * no clock takes the nearest earlier one (else the first of the file, else the caller's) and is
 * reported as untimed, so a view can leave its time out rather than invent one.
 */
class MessageClocks {
  /** Record-level times, in record order. */
  private readonly records: Array<{ at: number; ts: string }> = [];
  /** Per message: its record, and its own clock with the record that gave it. */
  private readonly byMessage: Array<{ at: number; own?: { at: number; ts: string } }> = [];

  record(recordIndex: number, ts: string): void {
    this.records.push({ at: recordIndex, ts });
  }

  /** A message at `index` from record `recordIndex`, dated by that record or its first result. */
  message(index: number, recordIndex: number, own: string | undefined): void {
    this.byMessage[index] = {
      at: recordIndex,
      ...(own !== undefined ? { own: { at: recordIndex, ts: own } } : {}),
    };
  }

  /** A result's time also dates its call, when the call's record has no time of its own. */
  dateCall(callIndex: number | undefined, recordIndex: number, ts: string): void {
    const call = callIndex === undefined ? undefined : this.byMessage[callIndex];
    if (call !== undefined && call.own === undefined) call.own = { at: recordIndex, ts };
  }

  /** Sets every message's timestamp; returns the session's. Untimed message indexes go into `untimed`. */
  apply(messages: Message[], fallback: string, untimed: Set<number> | undefined): string {
    const first =
      this.byMessage.find((m) => m?.own !== undefined)?.own?.ts ?? this.records[0]?.ts ?? fallback;
    // Walk in file order: the nearest earlier clock is the later of a record time and a message clock.
    let last: { at: number; ts: string } | undefined;
    let r = 0;
    messages.forEach((m, i) => {
      const info = this.byMessage[i]!;
      while (r < this.records.length && this.records[r]!.at <= info.at) {
        const rec = this.records[r++]!;
        if (last === undefined || rec.at >= last.at) last = rec;
      }
      if (info.own !== undefined) {
        m.timestamp = info.own.ts;
        if (last === undefined || info.own.at >= last.at) last = info.own;
        return;
      }
      untimed?.add(i);
      m.timestamp = last?.ts ?? first;
    });
    return first;
  }
}

function artifactToJson(a: Artifact): JsonObject {
  const source: JsonObject = { ...a.source };
  if (a.source.media_type === undefined) delete source.media_type;
  return { id: a.id, name: a.name, source };
}

function resultToNative(content: JsonValue, isError: boolean): JsonValue {
  // Content read from Grok Bot is already the envelope; anything else gets one, so files stay Grok-shaped.
  if (isEnvelope(content) && isErrorResult(content) === isError) return content;
  return isError ? { failure: content } : { success: content };
}

/**
 * Common -> native records, one record per message (the native round trip
 * `toCommon(fromCommon(c))` gives `c` back for representable transcripts; see
 * docs/formats/grok-bot.md). Ids are written only where re-reading would not
 * recover them: a synthetic call id is omitted, a result id is omitted when
 * FIFO-by-name pairing finds the same call.
 */
export function grokBotFromCommon(transcript: Transcript): GrokBotRecords {
  const session = transcript.meta.id;
  const nativeNameOf = new Map<string, string>();
  for (const m of transcript.messages) {
    for (const b of m.content) if (b.type === 'tool_use') nativeNameOf.set(b.id, nativeToolName(b.tool));
  }
  const pending = new PendingCalls();
  const out: GrokBotRecords = [];
  // A transcript that never had a time (all Unix epoch, as read from plain Grok Bot files) gets none written.
  const timeless =
    transcript.meta.timestamp === UNIX_EPOCH && transcript.messages.every((m) => m.timestamp === UNIX_EPOCH);
  let previous: string | undefined = timeless ? UNIX_EPOCH : undefined;
  const { messages } = transcript;
  for (let recordIndex = 0; recordIndex < messages.length; recordIndex++) {
    const message = messages[recordIndex]!;
    const at: BlockPosition = { session, recordIndex, blockIndex: 0, pending, nativeNameOf };
    const content: JsonValue[] = [];
    let onlyResults = message.content.length > 0;
    for (const block of message.content) {
      if (block.type !== 'tool_result') onlyResults = false;
      content.push(nativeBlock(block, at));
      at.blockIndex++;
    }
    const role = message.role === 'assistant' ? 'assistant' : onlyResults ? 'tool' : 'user';
    const rec: JsonObject = { role, message: { content } };
    // The first record always carries the time (it is the session's); later ones only when it changes.
    if (message.timestamp !== previous) rec.timestamp = message.timestamp;
    previous = message.timestamp;
    if (message.model !== undefined) rec.model = message.model;
    if (message.stop_reason !== undefined) rec.stop_reason = message.stop_reason;
    if (message.usage !== undefined) rec.usage = { ...message.usage };
    out.push(recordLine(rec));
  }
  return out;
}

/** Where grokBotFromCommon writes a block, and what it knows of the calls so far. */
interface BlockPosition {
  session: string;
  recordIndex: number;
  blockIndex: number;
  pending: PendingCalls;
  nativeNameOf: ReadonlyMap<string, string>;
}

/** One Common block as a native block, with ids written only where re-reading would not recover them. */
function nativeBlock(block: Block, at: BlockPosition): JsonValue {
  const { pending } = at;
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'thinking': {
      const native: JsonObject = { type: 'thinking', thinking: block.text };
      if (block.signature !== undefined) native.signature = block.signature;
      if (block.encrypted !== undefined) native.encrypted = block.encrypted;
      return native;
    }
    case 'tool_use': {
      const { name, input } = toolToNative(block.tool);
      pending.add(name, block.id);
      const native: JsonObject = { type: 'tool_use', name, input };
      if (
        looksSynthetic(block.id) &&
        block.id === syntheticCallId(at.session, at.recordIndex, at.blockIndex, name)
      )
        return native;
      // C2: the box's placement is inside the input; a non-object input can only carry it on the block.
      if (isObject(input) && !Object.hasOwn(input, 'toolCallId'))
        native.input = { ...input, toolCallId: block.id };
      else native.toolCallId = block.id;
      return native;
    }
    case 'tool_result': {
      const name = at.nativeNameOf.get(block.tool_use_id) ?? ORPHAN_RESULT_NAME;
      const native: JsonObject = {
        type: 'tool_result',
        name,
        result: resultToNative(block.content, block.is_error === true),
      };
      // Without an id, a reader pairs the result with the oldest waiting call of its name (C3).
      if (at.nativeNameOf.has(block.tool_use_id) && pending.peek(name) === block.tool_use_id)
        pending.take(name);
      else {
        native.toolCallId = block.tool_use_id;
        pending.answer(block.tool_use_id);
      }
      return native;
    }
    case 'image':
      return { type: 'image', source: { ...block.source } };
    case 'artifact':
      return { type: 'artifact', artifact: artifactToJson(block.artifact) };
  }
}

export const grokBotCodec: Codec<GrokBotRecords> = {
  toCommon: grokBotToCommon,
  fromCommon: grokBotFromCommon,
};
