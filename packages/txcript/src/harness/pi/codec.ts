/**
 * pi session entries <-> Common. pi keeps a tree: every entry names its
 * parent, branches grow in place, and the conversation pi resumes is the
 * path from the last entry back to the root. That path is what this codec
 * reads; entries on other branches are kept in the file but are not
 * conversation. A file whose tree is broken (a parent that is not in it) is
 * read in file order, with a warning.
 *
 * Entries on the path: `message` (roles user, assistant, toolResult,
 * bashExecution, custom), `custom_message` (context an extension injected,
 * read as user text), `session_info` (the title) and `model_change` (the
 * model). Compaction and branch summaries, labels, thinking levels and
 * extension state have no Common form.
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
import { artifactText, normalizeTimestamp, titleFromText } from '../common-values.ts';
import { builtLine } from '../jsonl.ts';
import { repairToolPairing } from '../orphans.ts';
import { sessionUuid } from '../session-id.ts';
import type { WarningCodec, WarningContext } from '../types.ts';
import type { PiLine, PiRecord } from './records.ts';
import { commonToolToPi, piToolToCommon } from './tools.ts';
import { str } from '../native-values.ts';

/** pi's stop reasons (packages/ai types) and Common's. */
const STOPS: Record<string, StopReason> = {
  stop: 'end_turn',
  length: 'max_tokens',
  toolUse: 'tool_use',
  error: 'error',
  aborted: 'aborted',
};

function stopToPi(r: StopReason | undefined): string {
  if (r === 'max_tokens') return 'length';
  if (r === 'tool_use') return 'toolUse';
  if (r === 'error' || r === 'aborted') return r;
  // pi has no word for a stop sequence or another reason: the turn ended.
  return 'stop';
}

function imageOf(part: JsonObject): ImageSource | undefined {
  const data = str(part, 'data');
  if (data === undefined) return undefined;
  return { type: 'base64', media_type: str(part, 'mimeType') ?? 'image/png', data };
}

/** User-side content (a string, or text and image parts) as blocks. */
function userBlocks(content: JsonValue | undefined): Block[] {
  if (typeof content === 'string') return content.trim() === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  const blocks: Block[] = [];
  for (const part of content) {
    if (!isJsonObject(part)) continue;
    if (part.type === 'text' && typeof part.text === 'string' && part.text.trim() !== '')
      blocks.push({ type: 'text', text: part.text });
    else if (part.type === 'image') {
      const source = imageOf(part);
      if (source !== undefined) blocks.push({ type: 'image', source });
    }
  }
  return blocks;
}

function assistantBlocks(content: JsonValue | undefined): Block[] {
  if (typeof content === 'string') return content.trim() === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  const blocks: Block[] = [];
  for (const part of content) {
    if (!isJsonObject(part)) continue;
    if (part.type === 'text' && typeof part.text === 'string') {
      if (part.text.trim() !== '') blocks.push({ type: 'text', text: part.text });
    } else if (part.type === 'thinking' && typeof part.thinking === 'string') {
      const signature = str(part, 'thinkingSignature');
      if (part.thinking.trim() !== '' || signature !== undefined)
        blocks.push({
          type: 'thinking',
          text: part.thinking,
          ...(signature !== undefined ? { signature } : {}),
        });
    } else if (part.type === 'toolCall') {
      blocks.push({
        type: 'tool_use',
        id: str(part, 'id') ?? '',
        tool: piToolToCommon(str(part, 'name') ?? 'tool', part.arguments ?? {}),
      });
    }
  }
  return blocks;
}

/** A tool result's content: text when it is only text, else Claude-style blocks (images kept). */
function resultContent(content: JsonValue | undefined): ToolOutput {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content ?? '';
  const parts = content.filter(isJsonObject);
  if (parts.every((p) => p.type === 'text'))
    return parts.map((p) => (typeof p.text === 'string' ? p.text : '')).join('\n');
  return parts.flatMap((p): JsonValue[] => {
    if (p.type === 'text' && typeof p.text === 'string') return [{ type: 'text', text: p.text }];
    const source = p.type === 'image' ? imageOf(p) : undefined;
    return source !== undefined ? [{ type: 'image', source: { ...source } }] : [];
  });
}

function usageOf(u: JsonValue | undefined): Usage | undefined {
  if (!isJsonObject(u)) return undefined;
  const n = (k: string): number => {
    const v = u[k];
    return typeof v === 'number' && v >= 0 ? v : 0;
  };
  const usage: Usage = { input_tokens: n('input'), output_tokens: n('output') };
  if (n('cacheRead') > 0) usage.cache_read_input_tokens = n('cacheRead');
  if (n('cacheWrite') > 0) usage.cache_creation_input_tokens = n('cacheWrite');
  const any = usage.input_tokens + usage.output_tokens + n('cacheRead') + n('cacheWrite');
  return any > 0 ? usage : undefined;
}

/**
 * The entries of the conversation: the path from the last tree entry back to
 * the root, in order; every entry in file order when the file has no tree
 * (version 1) or a broken one.
 */
function conversationEntries(entries: JsonObject[], ctx: WarningContext): JsonObject[] {
  const byId = new Map<string, JsonObject>();
  let leaf: JsonObject | undefined;
  for (const e of entries) {
    const id = str(e, 'id');
    if (e.type === 'session' || id === undefined) continue;
    byId.set(id, e);
    leaf = e;
  }
  const tree = leaf !== undefined && entries.some((e) => e.type !== 'session' && 'parentId' in e);
  if (!tree) return entries;
  const path: JsonObject[] = [];
  const seen = new Set<string>();
  for (let e: JsonObject | undefined = leaf; e !== undefined;) {
    const id = str(e, 'id')!;
    if (seen.has(id)) break; // a loop: the path ends where it closes
    seen.add(id);
    path.push(e);
    const parent = str(e, 'parentId');
    if (parent === undefined) break;
    e = byId.get(parent);
    if (e === undefined) {
      ctx.onWarning?.({
        source: ctx.source ?? 'pi',
        message: `entry ${id} names parent ${parent}, which is not in the file; the session is read in file order`,
      });
      return entries;
    }
  }
  return path.reverse();
}

/** Namespace of the ids of calls pi left without one, and of bash runs (UUIDv5 of `{session}:{n}`). */
const SYNTHETIC_CALL_NS = 'c1f4e2a7-5b3d-4e69-8a0c-7d2b9f1e6a45';

function toCommon(records: PiLine[], ctx: WarningContext): Transcript {
  const entries: JsonObject[] = [];
  for (const line of records) if (line.kind === 'record' && line.shape === 'entry') entries.push(line.json);
  const header = entries.find((e) => e.type === 'session');
  const start =
    normalizeTimestamp(header !== undefined ? str(header, 'timestamp') : undefined) ??
    normalizeTimestamp(entries.map((e) => str(e, 'timestamp')).find((t) => t !== undefined)) ??
    ctx.timestamp ??
    new Date(0).toISOString();
  const meta: Meta = {
    id: (header !== undefined ? str(header, 'id') : undefined) ?? ctx.sessionId,
    timestamp: start,
  };
  const cwd = header !== undefined ? str(header, 'cwd') : undefined;
  if (cwd) meta.cwd = cwd;

  const messages: Message[] = [];
  let lastTs = start;
  let title: string | undefined;
  let firstUser: string | undefined;
  let synthetic = 0;
  const callId = (): string => uuidV5(SYNTHETIC_CALL_NS, `${meta.id}:${synthetic++}`);
  const push = (m: Message): number => messages.push(m);
  for (const e of conversationEntries(entries, ctx)) {
    const ts = normalizeTimestamp(str(e, 'timestamp')) ?? lastTs;
    lastTs = ts;
    if (e.type === 'session_info') {
      const name = str(e, 'name')?.trim();
      title = name !== undefined && name !== '' ? name : undefined;
      continue;
    }
    if (e.type === 'model_change') {
      const model = str(e, 'modelId');
      if (model) meta.model = model;
      continue;
    }
    if (e.type === 'custom_message') {
      const content = userBlocks(e.content);
      if (content.length > 0) push({ role: 'user', content, timestamp: ts });
      continue;
    }
    if (e.type !== 'message' || !isJsonObject(e.message)) continue;
    const m = e.message;
    switch (str(m, 'role') ?? '') {
      case 'user':
      case 'custom': {
        const content = userBlocks(m.content);
        if (content.length === 0) break;
        if (m.role === 'user' && firstUser === undefined) {
          const text = content.find((b) => b.type === 'text');
          if (text !== undefined) firstUser = text.text;
        }
        push({ role: 'user', content, timestamp: ts });
        break;
      }
      case 'assistant': {
        const content = assistantBlocks(m.content);
        for (const b of content) if (b.type === 'tool_use' && b.id === '') b.id = callId();
        if (content.length === 0) break;
        const message: Message = { role: 'assistant', content, timestamp: ts };
        const model = str(m, 'model');
        if (model) message.model = model;
        const stop = str(m, 'stopReason');
        if (stop !== undefined) message.stop_reason = STOPS[stop] ?? { other: stop };
        const usage = usageOf(m.usage);
        if (usage !== undefined) message.usage = usage;
        push(message);
        break;
      }
      case 'toolResult': {
        const isError = m.isError === true;
        push({
          role: 'user',
          timestamp: ts,
          content: [
            {
              type: 'tool_result',
              tool_use_id: str(m, 'toolCallId') ?? '',
              content: resultContent(m.content),
              ...(isError ? { is_error: true } : {}),
            },
          ],
        });
        break;
      }
      case 'bashExecution': {
        // A `!command` the user ran; `!!` ones (excludeFromContext) never reach the model.
        const command = str(m, 'command');
        if (m.excludeFromContext === true || command === undefined || command === '') break;
        const id = callId();
        const exit = m.exitCode;
        const failed = (typeof exit === 'number' && exit !== 0) || m.cancelled === true;
        push({
          role: 'assistant',
          timestamp: ts,
          content: [{ type: 'tool_use', id, tool: { name: 'Bash', command } }],
        });
        push({
          role: 'user',
          timestamp: ts,
          content: [
            {
              type: 'tool_result',
              tool_use_id: id,
              content: str(m, 'output') ?? '',
              ...(failed ? { is_error: true } : {}),
            },
          ],
        });
        break;
      }
      default:
        // branchSummary, compactionSummary and roles of later versions: not conversation.
        break;
    }
  }
  // The model pi resumes with is the latest one used.
  const lastModel = [...messages].reverse().find((m) => m.model !== undefined)?.model;
  if (lastModel !== undefined && !entries.some((e) => e.type === 'model_change')) meta.model = lastModel;
  title ??= firstUser !== undefined ? titleFromText(firstUser) : undefined;
  if (title !== undefined) meta.title = title;
  return { meta, messages };
}

// ── fromCommon ─────────────────────────────────────────────────────────

/** Namespace of the 8-hex entry ids fromCommon writes (pi's ids are 8 hex characters). */
const ENTRY_NS = '2e9d7b41-6c0a-4f83-b5e2-1a7c3d9f0b64';

/** The provider and API pi records for a model, guessed from its name (pi re-resolves both on resume). */
export function providerOf(model: string): { provider: string; api: string } {
  const m = model.toLowerCase();
  if (m.startsWith('claude')) return { provider: 'anthropic', api: 'anthropic-messages' };
  if (m.startsWith('gemini')) return { provider: 'google', api: 'google-generative-ai' };
  if (m.startsWith('grok')) return { provider: 'xai', api: 'openai-completions' };
  if (/^(gpt|o\d|codex)/.test(m)) return { provider: 'openai', api: 'openai-responses' };
  return { provider: 'unknown', api: 'unknown' };
}

function usageToPi(u: Usage | undefined): JsonObject {
  const input = u?.input_tokens ?? 0;
  const output = u?.output_tokens ?? 0;
  const cacheRead = u?.cache_read_input_tokens ?? 0;
  const cacheWrite = u?.cache_creation_input_tokens ?? 0;
  return {
    input,
    output,
    cacheRead,
    cacheWrite,
    totalTokens: input + output + cacheRead + cacheWrite,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
}

/** A Common tool result's content as pi's text and image parts. */
function resultToPi(content: ToolOutput): JsonObject[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (Array.isArray(content) && content.every(isJsonObject)) {
    const parts: JsonObject[] = [];
    for (const b of content) {
      if (b.type === 'text' && typeof b.text === 'string') parts.push({ type: 'text', text: b.text });
      else if (b.type === 'image' && isJsonObject(b.source) && typeof b.source.data === 'string')
        parts.push({
          type: 'image',
          data: b.source.data,
          mimeType: str(b.source, 'media_type') ?? 'image/png',
        });
      else return [{ type: 'text', text: JSON.stringify(content) }];
    }
    return parts;
  }
  return [{ type: 'text', text: JSON.stringify(content) }];
}

/** The entries of a transcript, in order: header, title, then one message entry per pi message. */
export function* piLines(transcript: Transcript, version = 3): Generator<PiLine> {
  const t = repairToolPairing(transcript);
  const id = sessionUuid(t.meta.id);
  const line = (json: JsonObject): PiLine => builtLine<PiRecord>({ shape: 'entry', json });
  yield line({ type: 'session', version, id, timestamp: t.meta.timestamp, cwd: t.meta.cwd ?? '' });
  let n = 0;
  let parentId: string | null = null;
  const entry = (type: string, timestamp: string, fields: JsonObject): PiLine => {
    const entryId = uuidV5(ENTRY_NS, `${id}:${n++}`).replace(/-/g, '').slice(0, 8);
    const json: JsonObject = { type, id: entryId, parentId, timestamp, ...fields };
    parentId = entryId;
    return line(json);
  };
  if (t.meta.title !== undefined) yield entry('session_info', t.meta.timestamp, { name: t.meta.title });
  const toolNames = new Map<string, string>();
  for (const m of t.messages) {
    const ms = Date.parse(m.timestamp);
    const at = Number.isNaN(ms) ? 0 : ms;
    if (m.role === 'user') {
      let content: JsonObject[] = [];
      const flush = function* (): Generator<PiLine> {
        if (content.length > 0)
          yield entry('message', m.timestamp, { message: { role: 'user', content, timestamp: at } });
        content = [];
      };
      for (const b of m.content) {
        if (b.type === 'text') content.push({ type: 'text', text: b.text });
        else if (b.type === 'artifact') content.push({ type: 'text', text: artifactText(b.artifact) });
        else if (b.type === 'image')
          content.push({ type: 'image', data: b.source.data, mimeType: b.source.media_type });
        else if (b.type === 'tool_result') {
          yield* flush();
          yield entry('message', m.timestamp, {
            message: {
              role: 'toolResult',
              toolCallId: b.tool_use_id,
              toolName: toolNames.get(b.tool_use_id) ?? 'tool',
              content: resultToPi(b.content),
              isError: b.is_error === true,
              timestamp: at,
            },
          });
        }
      }
      yield* flush();
      continue;
    }
    const content: JsonObject[] = [];
    for (const b of m.content) {
      if (b.type === 'text') content.push({ type: 'text', text: b.text });
      else if (b.type === 'artifact') content.push({ type: 'text', text: artifactText(b.artifact) });
      else if (b.type === 'thinking')
        content.push({
          type: 'thinking',
          thinking: b.text,
          ...(b.signature !== undefined ? { thinkingSignature: b.signature } : {}),
        });
      else if (b.type === 'tool_use') {
        const call = commonToolToPi(b.tool);
        const name = apiSafeName(call.name);
        toolNames.set(b.id, name);
        content.push({ type: 'toolCall', id: b.id, name, arguments: call.arguments });
      }
      // An assistant image has no pi form.
    }
    if (content.length === 0) continue;
    const model = m.model ?? t.meta.model ?? 'unknown';
    yield entry('message', m.timestamp, {
      message: {
        role: 'assistant',
        content,
        ...providerOf(model),
        model,
        usage: usageToPi(m.usage),
        stopReason: stopToPi(m.stop_reason),
        timestamp: at,
      },
    });
  }
}

export const piCodec: WarningCodec<PiLine[]> = {
  toCommon,
  fromCommon: (transcript) => [...piLines(transcript)],
};
