/**
 * Amp threads <-> Common. Amp already keeps Anthropic-style messages: user
 * messages (a prompt, with `meta.sentAt`, or the carrier of tool results),
 * assistant messages with `state` (the stop reason) and `usage` (the model,
 * token counts and, in newer files, a timestamp). Messages map one to one.
 * A message without a time of its own takes the last time seen before it
 * (the thread's creation at first).
 */
import type {
  Block,
  ImageSource,
  JsonObject,
  JsonValue,
  Message,
  Meta,
  StopReason,
  ToolOutput,
  Transcript,
  Usage,
} from '../../model/common.ts';
import { isJsonObject } from '../../model/json.ts';
import { uuidV5 } from '../../model/uuid.ts';
import { apiSafeName } from '../api-names.ts';
import {
  artifactText,
  normalizeTimestamp,
  stopReasonFromString,
  stopReasonToString,
  titleFromText,
} from '../common-values.ts';
import { builtDocument } from '../json-document.ts';
import type { WarningCodec, WarningContext } from '../types.ts';
import type { AmpThread } from './records.ts';
import { ampToolToCommon, commonToolToAmp } from './tools.ts';
import { millisTime, str } from '../native-values.ts';

function imageOf(block: JsonObject): ImageSource | undefined {
  const source = block.source;
  if (!isJsonObject(source)) return undefined;
  const data = str(source, 'data');
  const media = str(source, 'mediaType') ?? str(source, 'media_type');
  if (data === undefined || media === undefined) return undefined;
  return { type: str(source, 'type') ?? 'base64', media_type: media, data };
}

function errorText(error: JsonValue | undefined): string {
  if (typeof error === 'string') return error;
  if (isJsonObject(error) && typeof error.message === 'string') return error.message;
  return error === undefined ? 'the tool call failed' : JSON.stringify(error);
}

function resultOf(block: JsonObject): Block | undefined {
  const id = str(block, 'toolUseID');
  const run = block.run;
  if (id === undefined || !isJsonObject(run)) return undefined;
  const reason = str(run, 'reason');
  switch (str(run, 'status') ?? '') {
    case 'done': {
      const result = run.result;
      const content: ToolOutput = result === undefined || result === null ? '' : result;
      return { type: 'tool_result', tool_use_id: id, content };
    }
    case 'error':
      return { type: 'tool_result', tool_use_id: id, content: errorText(run.error), is_error: true };
    case 'cancelled':
      return { type: 'tool_result', tool_use_id: id, content: reason ?? 'cancelled', is_error: true };
    case 'rejected-by-user':
      return {
        type: 'tool_result',
        tool_use_id: id,
        content: reason ?? 'rejected by the user',
        is_error: true,
      };
    default:
      // still running (`in-progress`, `queued`): no result yet
      return undefined;
  }
}

function blocksOf(m: JsonObject, role: 'user' | 'assistant'): Block[] {
  const content: JsonValue | undefined =
    typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
  if (!Array.isArray(content)) return [];
  const blocks: Block[] = [];
  for (const b of content) {
    if (!isJsonObject(b)) continue;
    switch (str(b, 'type') ?? '') {
      case 'text': {
        const text = str(b, 'text');
        if (text !== undefined && text.trim() !== '') blocks.push({ type: 'text', text });
        break;
      }
      case 'thinking': {
        const text = str(b, 'thinking');
        const signature = str(b, 'signature');
        if (role === 'assistant' && text !== undefined)
          blocks.push({ type: 'thinking', text, ...(signature !== undefined ? { signature } : {}) });
        break;
      }
      case 'image': {
        const source = imageOf(b);
        if (source !== undefined) blocks.push({ type: 'image', source });
        break;
      }
      case 'tool_use': {
        const id = str(b, 'id');
        const name = str(b, 'name');
        if (role === 'assistant' && id !== undefined && name !== undefined)
          blocks.push({ type: 'tool_use', id, tool: ampToolToCommon(name, b.input ?? {}) });
        break;
      }
      case 'tool_result': {
        const result = role === 'user' ? resultOf(b) : undefined;
        if (result !== undefined) blocks.push(result);
        break;
      }
      default:
        break;
    }
  }
  return blocks;
}

function stopOf(state: JsonValue | undefined): StopReason | undefined {
  if (!isJsonObject(state)) return undefined;
  if (state.type === 'cancelled') return 'aborted';
  const reason = state.type === 'complete' ? str(state, 'stopReason') : undefined;
  return reason !== undefined ? stopReasonFromString(reason) : undefined;
}

function usageOf(u: JsonObject): Usage | undefined {
  const n = (k: string): number | undefined => {
    const v = u[k];
    return typeof v === 'number' && v >= 0 ? v : undefined;
  };
  const usage: Usage = { input_tokens: n('inputTokens') ?? 0, output_tokens: n('outputTokens') ?? 0 };
  const read = n('cacheReadInputTokens');
  const created = n('cacheCreationInputTokens');
  if (read) usage.cache_read_input_tokens = read;
  if (created) usage.cache_creation_input_tokens = created;
  return usage.input_tokens + usage.output_tokens + (read ?? 0) + (created ?? 0) > 0 ? usage : undefined;
}

/** `file:///a/b%20c` -> `/a/b c`; anything that is not a file URI stays as it is. */
function pathOfUri(uri: string): string {
  if (!uri.startsWith('file://')) return uri;
  try {
    return decodeURIComponent(new URL(uri).pathname);
  } catch {
    return uri.slice('file://'.length);
  }
}

function metaOf(thread: JsonObject, ctx: WarningContext): Meta {
  const meta: Meta = {
    id: str(thread, 'id') ?? ctx.sessionId,
    timestamp: millisTime(thread.created) ?? ctx.timestamp ?? new Date(0).toISOString(),
  };
  const title = str(thread, 'title')?.trim();
  if (title) meta.title = title;
  const initial =
    isJsonObject(thread.env) && isJsonObject(thread.env.initial) ? thread.env.initial : undefined;
  const tree = initial !== undefined && Array.isArray(initial.trees) ? initial.trees[0] : undefined;
  if (isJsonObject(tree)) {
    const uri = str(tree, 'uri');
    if (uri) meta.cwd = pathOfUri(uri);
    const ref = isJsonObject(tree.repository) ? str(tree.repository, 'ref') : undefined;
    if (ref) meta.git_branch = ref.replace(/^refs\/heads\//, '');
  }
  const version =
    initial !== undefined && isJsonObject(initial.platform)
      ? str(initial.platform, 'clientVersion')
      : undefined;
  if (version) meta.cli_version = version;
  return meta;
}

function toCommon(thread: AmpThread, ctx: WarningContext): Transcript {
  const json = thread.kind === 'object' ? thread.json : {};
  const meta = metaOf(json, ctx);
  const messages: Message[] = [];
  let last = meta.timestamp;
  for (const m of Array.isArray(json.messages) ? json.messages : []) {
    if (!isJsonObject(m)) continue;
    const role = m.role;
    if (role !== 'user' && role !== 'assistant') continue; // shared-thread records and the like
    const usage = role === 'assistant' && isJsonObject(m.usage) ? m.usage : undefined;
    const own =
      role === 'user'
        ? millisTime(isJsonObject(m.meta) ? m.meta.sentAt : undefined)
        : normalizeTimestamp(usage !== undefined ? str(usage, 'timestamp') : undefined);
    last = own ?? last;
    const content = blocksOf(m, role);
    if (content.length === 0) continue;
    const message: Message = { role, content, timestamp: last };
    if (usage !== undefined) {
      const model = str(usage, 'model');
      if (model) message.model = model;
      const counts = usageOf(usage);
      if (counts !== undefined) message.usage = counts;
    }
    const stop = role === 'assistant' ? stopOf(m.state) : undefined;
    if (stop !== undefined) message.stop_reason = stop;
    messages.push(message);
  }
  meta.model ??= messages.findLast((m) => m.model !== undefined)?.model;
  if (meta.model === undefined) delete meta.model;
  if (meta.title === undefined) {
    const first = messages.find((m) => m.role === 'user' && m.content.some((b) => b.type === 'text'));
    const text = first?.content.find((b) => b.type === 'text');
    const title = text?.type === 'text' ? titleFromText(text.text) : undefined;
    if (title !== undefined) meta.title = title;
  }
  return { meta, messages };
}

// ── fromCommon ─────────────────────────────────────────────────────────

/** Namespace of the thread ids given to sessions whose id is not Amp's `T-…` (UUIDv5 of the id). */
const THREAD_NS = '7a1e3c55-2b90-4d1f-8e64-3f0a9c2d5b18';

/** An Amp thread id for a Common id: `T-` and 8 or more letters, digits and dashes, as Amp checks it. */
export function ampThreadId(id: string): string {
  return /^T-[A-Za-z0-9-]{8,}$/.test(id) ? id : `T-${uuidV5(THREAD_NS, id)}`;
}

function resultToAmp(content: ToolOutput, isError: boolean): JsonObject {
  if (isError)
    return {
      status: 'error',
      error: { message: typeof content === 'string' ? content : JSON.stringify(content) },
    };
  return { status: 'done', result: content };
}

function fileUri(path: string): string {
  return `file://${path.split('/').map(encodeURIComponent).join('/')}`;
}

function fromCommon(t: Transcript): AmpThread {
  const messages: JsonObject[] = t.messages.map((m, messageId) => {
    const content: JsonObject[] = [];
    for (const b of m.content) {
      switch (b.type) {
        case 'text':
          content.push({ type: 'text', text: b.text });
          break;
        case 'artifact':
          content.push({ type: 'text', text: artifactText(b.artifact) });
          break;
        case 'image':
          content.push({
            type: 'image',
            source: { type: b.source.type, data: b.source.data, mediaType: b.source.media_type },
          });
          break;
        case 'thinking':
          if (m.role === 'assistant')
            content.push({
              type: 'thinking',
              thinking: b.text,
              ...(b.signature !== undefined ? { signature: b.signature, provider: 'anthropic' } : {}),
            });
          break;
        case 'tool_use': {
          const call = commonToolToAmp(b.tool);
          content.push({
            type: 'tool_use',
            complete: true,
            id: b.id,
            name: apiSafeName(call.name),
            input: call.input,
          });
          break;
        }
        case 'tool_result':
          content.push({
            type: 'tool_result',
            toolUseID: b.tool_use_id,
            run: resultToAmp(b.content, b.is_error === true),
          });
          break;
      }
    }
    const ms = Date.parse(m.timestamp);
    if (m.role === 'user') {
      const user: JsonObject = { role: 'user', messageId, content };
      if (!m.content.some((b) => b.type === 'tool_result')) user.meta = { sentAt: ms };
      return user;
    }
    const usage: JsonObject = { model: m.model ?? t.meta.model ?? 'unknown', timestamp: m.timestamp };
    if (m.usage !== undefined) {
      usage.inputTokens = m.usage.input_tokens;
      usage.outputTokens = m.usage.output_tokens;
      if (m.usage.cache_read_input_tokens !== undefined)
        usage.cacheReadInputTokens = m.usage.cache_read_input_tokens;
      if (m.usage.cache_creation_input_tokens !== undefined)
        usage.cacheCreationInputTokens = m.usage.cache_creation_input_tokens;
    }
    const state: JsonObject =
      m.stop_reason === 'aborted'
        ? { type: 'cancelled' }
        : { type: 'complete', stopReason: stopReasonToString(m.stop_reason ?? 'end_turn') };
    return { role: 'assistant', messageId, content, state, usage };
  });
  const thread: JsonObject = { v: 1, id: ampThreadId(t.meta.id), created: Date.parse(t.meta.timestamp) };
  if (t.meta.title !== undefined) thread.title = t.meta.title;
  const initial: JsonObject = {};
  if (t.meta.cwd !== undefined && t.meta.cwd !== '') {
    const tree: JsonObject = {
      uri: fileUri(t.meta.cwd),
      displayName: t.meta.cwd.split('/').pop() ?? t.meta.cwd,
    };
    if (t.meta.git_branch !== undefined)
      tree.repository = { type: 'git', ref: `refs/heads/${t.meta.git_branch}` };
    initial.trees = [tree];
  }
  if (t.meta.cli_version !== undefined)
    initial.platform = { client: 'CLI', clientVersion: t.meta.cli_version };
  if (Object.keys(initial).length > 0) thread.env = { initial };
  thread.nextMessageId = messages.length;
  thread.messages = messages;
  return builtDocument(thread);
}

export const ampCodec: WarningCodec<AmpThread> = { toCommon, fromCommon };
