/**
 * OpenCode export documents <-> Common. One OpenCode message holds many
 * parts; a `tool` part holds a whole call: its input and, once it ran, its
 * output or error. An assistant message is cut at each tool part into
 * Common messages (the call on an assistant message, its result on the user
 * message after it); the turn's `tokens` and `finish` go on its last
 * assistant message. Synthetic text (what OpenCode injects for itself) and
 * the agent loop's bookkeeping parts (step-start, step-finish, snapshot,
 * patch) are not conversation.
 */
import type {
  Block,
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
import { artifactText, imageFromDataUrl, imageToDataUrl, titleFromText } from '../common-values.ts';
import { builtDocument } from '../json-document.ts';
import { repairToolPairing } from '../orphans.ts';
import type { WarningCodec, WarningContext } from '../types.ts';
import type { OpenCodeExport } from './records.ts';
import { commonToolToOpenCode, openCodeToolToCommon } from './tools.ts';
import { millisTime, obj, str } from '../native-values.ts';

/** OpenCode names its placeholder titles `New session - <date>`: not a title. */
export function isPlaceholderTitle(title: string): boolean {
  return title.trim() === '' || title.startsWith('New session - ');
}

const FINISH: Record<string, StopReason> = {
  stop: 'end_turn',
  length: 'max_tokens',
  'tool-calls': 'tool_use',
  tool_calls: 'tool_use',
  tool_use: 'tool_use',
  error: 'error',
  aborted: 'aborted',
};

function usageOf(tokens: JsonValue | undefined): Usage | undefined {
  const t = obj(tokens);
  const n = (v: JsonValue | undefined): number => (typeof v === 'number' && v >= 0 ? v : 0);
  const cache = obj(t.cache);
  const usage: Usage = { input_tokens: n(t.input), output_tokens: n(t.output) };
  if (n(cache.read) > 0) usage.cache_read_input_tokens = n(cache.read);
  if (n(cache.write) > 0) usage.cache_creation_input_tokens = n(cache.write);
  return usage.input_tokens + usage.output_tokens + n(cache.read) + n(cache.write) > 0 ? usage : undefined;
}

function fileBlock(part: JsonObject): Block | undefined {
  const mime = str(part, 'mime') ?? '';
  const url = str(part, 'url');
  if (!mime.startsWith('image/') || url === undefined) return undefined;
  const source = imageFromDataUrl(url);
  return source !== undefined ? { type: 'image', source } : undefined;
}

/** Namespace of the ids of tool parts without a call id (UUIDv5 of `{session}:{part id}`). */
const CALL_NS = '3b8f1d27-9c4e-4a6b-8d2f-5e7a1c0b9d63';

/** The block of a text, reasoning or file part; none for bookkeeping and synthetic text. */
function contentBlock(p: JsonObject): Block | undefined {
  if (p.type === 'text' && p.synthetic !== true && typeof p.text === 'string' && p.text.trim() !== '')
    return { type: 'text', text: p.text };
  if (p.type === 'reasoning' && typeof p.text === 'string' && p.text.trim() !== '')
    return { type: 'thinking', text: p.text };
  return p.type === 'file' ? fileBlock(p) : undefined;
}

function toCommon(doc: OpenCodeExport, ctx: WarningContext): Transcript {
  const json = doc.kind === 'object' ? doc.json : {};
  const info = obj(json.info);
  const meta: Meta = {
    id: str(info, 'id') ?? ctx.sessionId,
    timestamp: millisTime(obj(info.time).created) ?? ctx.timestamp ?? new Date(0).toISOString(),
  };
  const directory = str(info, 'directory');
  if (directory) meta.cwd = directory;
  const version = str(info, 'version');
  if (version) meta.cli_version = version;
  const title = str(info, 'title');
  if (title !== undefined && !isPlaceholderTitle(title)) meta.title = title;
  const model = str(obj(info.model), 'id') ?? str(obj(info.model), 'modelID');
  if (model) meta.model = model;

  const messages: Message[] = [];
  let last = meta.timestamp;
  for (const record of Array.isArray(json.messages) ? json.messages : []) {
    const m = obj(obj(record).info);
    const parts = Array.isArray(obj(record).parts)
      ? (obj(record).parts as JsonValue[]).filter(isJsonObject)
      : [];
    const ts = millisTime(obj(m.time).created) ?? last;
    last = ts;
    if (m.role === 'user') {
      const content: Block[] = [];
      for (const p of parts) {
        if (p.type === 'text' && p.synthetic !== true && typeof p.text === 'string' && p.text.trim() !== '')
          content.push({ type: 'text', text: p.text });
        else if (p.type === 'file') {
          const image = fileBlock(p);
          if (image !== undefined) content.push(image);
        }
      }
      if (content.length > 0) messages.push({ role: 'user', content, timestamp: ts });
      continue;
    }
    if (m.role !== 'assistant') continue;
    const modelId = str(m, 'modelID');
    const turn: Message[] = [];
    let pending: Block[] = [];
    const assistant = (content: Block[]): void => {
      const message: Message = { role: 'assistant', content, timestamp: ts };
      if (modelId) message.model = modelId;
      turn.push(message);
      messages.push(message);
    };
    const flush = (): void => {
      if (pending.length > 0) assistant(pending);
      pending = [];
    };
    /** Results of the calls of the run of tool parts being read (parallel calls: one message each way). */
    let results: Block[] = [];
    const endRun = (): void => {
      if (results.length > 0) messages.push({ role: 'user', timestamp: ts, content: results });
      results = [];
    };
    let inRun = false;
    for (const p of parts) {
      if (p.type === 'tool' && typeof p.tool === 'string') {
        if (!inRun) flush();
        inRun = true;
        const state = obj(p.state);
        const id = str(p, 'callID') ?? uuidV5(CALL_NS, `${meta.id}:${str(p, 'id') ?? messages.length}`);
        pending.push({ type: 'tool_use', id, tool: openCodeToolToCommon(p.tool, state.input ?? {}) });
        const status = str(state, 'status');
        if (status === 'completed')
          results.push({ type: 'tool_result', tool_use_id: id, content: state.output ?? '' });
        else if (status === 'error')
          results.push({
            type: 'tool_result',
            tool_use_id: id,
            content: str(state, 'error') ?? 'the tool call failed',
            is_error: true,
          });
        // pending or running: the call has no result yet
        continue;
      }
      const block = contentBlock(p);
      if (block === undefined) continue;
      if (inRun) {
        flush();
        endRun();
        inRun = false;
      }
      pending.push(block);
    }
    flush();
    endRun();
    const end = turn.at(-1);
    if (end !== undefined) {
      const usage = usageOf(m.tokens);
      if (usage !== undefined) end.usage = usage;
      const finish = str(m, 'finish');
      if (finish !== undefined) end.stop_reason = FINISH[finish] ?? { other: finish };
    }
  }
  if (meta.title === undefined) {
    const first = messages.find((m) => m.role === 'user')?.content.find((b) => b.type === 'text');
    const t = first?.type === 'text' ? titleFromText(first.text) : undefined;
    if (t !== undefined) meta.title = t;
  }
  return { meta, messages };
}

// ── fromCommon ─────────────────────────────────────────────────────────

/** Namespace of the message and part ids fromCommon writes (a pure function of the session). */
const ID_NS = '0e6c2f94-7a31-4b8d-9f05-c4d2e1a7b368';

/** OpenCode's ids: a prefix and 26 characters; `opencode import` wants a session id starting `ses`. */
export function openCodeId(prefix: 'ses' | 'msg' | 'prt', key: string): string {
  return `${prefix}_${uuidV5(ID_NS, `${prefix}:${key}`).replace(/-/g, '').slice(0, 26)}`;
}

export function openCodeSessionId(commonId: string): string {
  return /^ses_[A-Za-z0-9]+$/.test(commonId) ? commonId : openCodeId('ses', commonId);
}

function finishOf(r: StopReason): string {
  if (r === 'max_tokens') return 'length';
  if (r === 'tool_use') return 'tool-calls';
  if (r === 'error' || r === 'aborted') return r;
  return 'stop';
}

function outputText(content: ToolOutput): string {
  return typeof content === 'string' ? content : JSON.stringify(content);
}

function fromCommon(transcript: Transcript): OpenCodeExport {
  const t = repairToolPairing(transcript);
  const sessionID = openCodeSessionId(t.meta.id);
  const created = Date.parse(t.meta.timestamp);
  const cwd = t.meta.cwd ?? '';
  const results = new Map<string, { content: ToolOutput; isError: boolean; at: number }>();
  for (const m of t.messages)
    for (const b of m.content)
      if (b.type === 'tool_result')
        results.set(b.tool_use_id, {
          content: b.content,
          isError: b.is_error === true,
          at: Date.parse(m.timestamp),
        });
  const records: JsonObject[] = [];
  let parentID: string | undefined;
  t.messages.forEach((m, i) => {
    const id = openCodeId('msg', `${sessionID}:${i}`);
    const at = Date.parse(m.timestamp);
    const parts: JsonObject[] = [];
    const part = (fields: JsonObject): void => {
      parts.push({
        id: openCodeId('prt', `${sessionID}:${i}:${parts.length}`),
        sessionID,
        messageID: id,
        ...fields,
      });
    };
    const model = m.model ?? t.meta.model ?? 'unknown';
    if (m.role === 'user') {
      for (const b of m.content) {
        if (b.type === 'text') part({ type: 'text', text: b.text, time: { start: at, end: at } });
        else if (b.type === 'artifact')
          part({ type: 'text', text: artifactText(b.artifact), time: { start: at, end: at } });
        else if (b.type === 'image')
          part({ type: 'file', mime: b.source.media_type, filename: 'image', url: imageToDataUrl(b.source) });
        // A tool result rides in its call's part.
      }
      if (parts.length === 0) return;
      parentID = id;
      records.push({
        info: {
          id,
          sessionID,
          role: 'user',
          time: { created: at },
          agent: 'build',
          model: { providerID: 'unknown', modelID: model },
        },
        parts,
      });
      return;
    }
    // Assistant messages in a row are one OpenCode message: its parts in order (calls made together stay together).
    const previous = t.messages[i - 1]?.role === 'assistant' ? records.at(-1) : undefined;
    if (previous === undefined) part({ type: 'step-start' });
    for (const b of m.content) {
      if (b.type === 'text') part({ type: 'text', text: b.text, time: { start: at, end: at } });
      else if (b.type === 'artifact')
        part({ type: 'text', text: artifactText(b.artifact), time: { start: at, end: at } });
      else if (b.type === 'thinking') part({ type: 'reasoning', text: b.text, time: { start: at, end: at } });
      else if (b.type === 'image')
        part({ type: 'file', mime: b.source.media_type, filename: 'image', url: imageToDataUrl(b.source) });
      else if (b.type === 'tool_use') {
        const call = commonToolToOpenCode(b.tool);
        const result = results.get(b.id);
        const state: JsonObject =
          result === undefined
            ? { status: 'pending', input: call.input }
            : result.isError
              ? {
                  status: 'error',
                  input: call.input,
                  error: outputText(result.content),
                  time: { start: at, end: result.at },
                }
              : {
                  status: 'completed',
                  input: call.input,
                  output: outputText(result.content),
                  title: call.name,
                  metadata: {},
                  time: { start: at, end: result.at },
                };
        part({ type: 'tool', tool: apiSafeName(call.name), callID: b.id, state });
      }
    }
    const u = m.usage;
    if (previous !== undefined && isJsonObject(previous.info) && Array.isArray(previous.parts)) {
      for (const p of parts) previous.parts.push({ ...p, messageID: previous.info.id ?? id });
      if (u !== undefined)
        previous.info.tokens = {
          input: u.input_tokens,
          output: u.output_tokens,
          reasoning: 0,
          cache: { read: u.cache_read_input_tokens ?? 0, write: u.cache_creation_input_tokens ?? 0 },
        };
      if (m.stop_reason !== undefined) previous.info.finish = finishOf(m.stop_reason);
      return;
    }
    records.push({
      info: {
        id,
        sessionID,
        role: 'assistant',
        time: { created: at, completed: at },
        parentID: parentID ?? id,
        modelID: model,
        providerID: 'unknown',
        mode: 'build',
        agent: 'build',
        path: { cwd, root: cwd },
        cost: 0,
        tokens: {
          input: u?.input_tokens ?? 0,
          output: u?.output_tokens ?? 0,
          reasoning: 0,
          cache: { read: u?.cache_read_input_tokens ?? 0, write: u?.cache_creation_input_tokens ?? 0 },
        },
        ...(m.stop_reason !== undefined ? { finish: finishOf(m.stop_reason) } : {}),
      },
      parts,
    });
  });
  const info: JsonObject = {
    id: sessionID,
    slug: sessionID.slice(4, 12),
    directory: cwd,
    title: t.meta.title ?? '',
    version: t.meta.cli_version ?? '',
    time: { created, updated: Date.parse(t.messages.at(-1)?.timestamp ?? t.meta.timestamp) },
  };
  if (t.meta.model !== undefined) info.model = { id: t.meta.model, providerID: 'unknown' };
  return builtDocument({ info, messages: records });
}

export const openCodeCodec: WarningCodec<OpenCodeExport> = { toCommon, fromCommon };
