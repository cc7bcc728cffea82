/**
 * Cursor desktop records <-> Common (docs/formats/cursor-desktop.md).
 *
 * A session's messages are its bubbles, in the order `composerData`'s
 * `fullConversationHeadersOnly` gives (else row order): type 1 the user,
 * type 2 the assistant, whose bubble holds `text`, `thinking` or one tool
 * call with its result (`toolFormerData`). Tool bubbles in a row with the
 * same `createdAt` are calls made together (sendbox writes one message's
 * calls so): their calls make one assistant message and their results one
 * user message after it, so a conversation read back keeps its order.
 */
import type { Block, JsonObject, JsonValue, Message, Meta, Tool, Transcript } from '../../model/common.ts';
import { isJsonObject, jsonEqual } from '../../model/json.ts';
import { toolToCanonical } from '../../model/tool.ts';
import { uuidV5 } from '../../model/uuid.ts';
import { artifactText, normalizeTimestamp, titleFromText } from '../common-values.ts';
import { millisTime, nonEmpty, obj, onlyKeys, str, typedTool } from '../native-values.ts';
import { repairToolPairing } from '../orphans.ts';
import type { WarningCodec, WarningContext } from '../types.ts';
import {
  desktopDocument,
  desktopSession,
  type DesktopRecords,
  type DesktopSession,
  type KvRow,
} from './records.ts';

/** Namespace of the bubble and call ids sendbox mints (fixed, random). */
const NS = '5c2e8a41-93d7-4b6f-a0e1-7d4c9b2f6a18';

const parse = (text: string | undefined): JsonObject | undefined => {
  if (text === undefined) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return isJsonObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
};

/** The model picker's placeholder, not a model. */
const modelName = (v: JsonValue | undefined): string | undefined => {
  const m = nonEmpty(v);
  return m === 'default' ? undefined : m;
};

// -- tools ---------------------------------------------------------------

function toCanonicalInput(name: string, params: JsonObject): { name: string; input: JsonObject } {
  if (name === 'run_terminal_command_v2') {
    const input: JsonObject = {};
    if (params.command !== undefined) input.command = params.command;
    if (typeof params.cwd === 'string' && params.cwd !== '') input.workdir = params.cwd;
    const timeout = obj(params.options).timeout;
    if (timeout !== undefined) input.timeout_ms = timeout;
    return { name: 'Bash', input };
  }
  if (name === 'read_file_v2') {
    const input: JsonObject = {};
    if (params.targetFile !== undefined) input.file_path = params.targetFile;
    for (const k of ['offset', 'limit']) if (params[k] !== undefined) input[k] = params[k];
    return { name: 'Read', input };
  }
  return { name, input: params };
}

export function commonToolToDesktop(tool: Tool): { name: string; params: JsonValue } {
  if (tool.name === 'Raw') return { name: tool.tool_name, params: tool.input };
  if (tool.name === 'Bash') {
    const params: JsonObject = { command: tool.command, cwd: tool.workdir ?? '' };
    if (tool.timeout_ms !== undefined) params.options = { timeout: tool.timeout_ms };
    if (tool.description !== undefined || tool.run_in_background !== undefined)
      return { name: 'Bash', params: toolToCanonical(tool).input };
    return { name: 'run_terminal_command_v2', params };
  }
  if (tool.name === 'Read') {
    const params: JsonObject = { targetFile: tool.file_path };
    if (tool.offset !== undefined) params.offset = tool.offset;
    if (tool.limit !== undefined) params.limit = tool.limit;
    return { name: 'read_file_v2', params };
  }
  const { name, input } = toolToCanonical(tool);
  return { name, params: input };
}

/** Typed only when writing it back gives the very call Cursor wrote; anything else stays Raw under its own name. */
export function desktopToolToCommon(name: string, params: JsonValue): Tool {
  if (isJsonObject(params)) {
    const known =
      (name === 'run_terminal_command_v2' && onlyKeys(params, ['command', 'cwd', 'options'])) ||
      (name === 'read_file_v2' && onlyKeys(params, ['targetFile', 'offset', 'limit'])) ||
      (name !== 'run_terminal_command_v2' && name !== 'read_file_v2');
    if (known) {
      const c = toCanonicalInput(name, params);
      const typed = typedTool(c.name, c.input);
      if (typed !== undefined) {
        const back = commonToolToDesktop(typed);
        if (back.name === name && jsonEqual(back.params, params)) return typed;
      }
    }
  }
  return { name: 'Raw', tool_name: name, input: params };
}

/** Call ids as other harnesses accept them (`[A-Za-z0-9_-]`): Cursor's may hold a newline. */
const safeCallId = (id: string): string => id.replace(/[^A-Za-z0-9_-]/g, '_');

// -- to Common -----------------------------------------------------------

/**
 * The files of the images a user bubble attached: each entry of its `images`
 * and of its `context.selectedImages` names one by `path` (docs/formats/cursor-desktop.md,
 * Records). The database holds no image data, so an image is read as a note
 * naming its file.
 */
function imagePaths(b: JsonObject): string[] {
  const entries = [
    ...(Array.isArray(b.images) ? b.images : []),
    ...(Array.isArray(obj(b.context).selectedImages) ? (obj(b.context).selectedImages as JsonValue[]) : []),
  ];
  const paths = new Set<string>();
  for (const e of entries) {
    const path = isJsonObject(e) && typeof e.path === 'string' ? e.path.trim() : '';
    if (path !== '') paths.add(path);
  }
  return [...paths];
}

function orderedBubbles(s: DesktopSession, source: string, ctx: WarningContext): JsonObject[] {
  const byId = new Map<string, JsonObject>();
  const natural: string[] = [];
  for (const row of s.bubbles) {
    const b = parse(row.value);
    if (b === undefined) {
      ctx.onWarning?.({
        source,
        message: `bubble ${row.key} is not a JSON object; skipped (Cursor wrote it partly, or another program changed it)`,
      });
      continue;
    }
    const id = str(b, 'bubbleId') ?? row.key;
    natural.push(id);
    byId.set(id, b);
  }
  const headers = parse(s.composerData)?.fullConversationHeadersOnly;
  const listed = Array.isArray(headers)
    ? headers.flatMap((h) => (isJsonObject(h) && typeof h.bubbleId === 'string' ? [h.bubbleId] : []))
    : [];
  // Bubbles the list leaves out (written after it) follow in row order.
  const order = listed.length > 0 ? [...listed, ...natural.filter((id) => !listed.includes(id))] : natural;
  return order.flatMap((id) => {
    const b = byId.get(id);
    byId.delete(id);
    return b === undefined ? [] : [b];
  });
}

function sessionMeta(s: DesktopSession, id: string, ctx: WarningContext): Meta {
  const header = parse(s.header) ?? {};
  const data = parse(s.composerData) ?? {};
  const title = [header.name, header.subtitle, data.name]
    .map((v) => (typeof v === 'string' ? v.trim() : ''))
    .find((t) => t !== '');
  const uri = (o: JsonValue | undefined): string | undefined => nonEmpty(obj(obj(o).uri).fsPath);
  const repos = header.trackedGitRepos;
  const cwd =
    uri(header.workspaceIdentifier) ??
    uri(obj(header.agentLocation).environment) ??
    (Array.isArray(repos) ? nonEmpty(obj(repos[0]).repoPath) : undefined);
  const model = modelName(obj(data.modelConfig).modelName);
  return {
    id,
    timestamp:
      millisTime(s.createdAt > 0 ? s.createdAt : undefined) ?? ctx.timestamp ?? new Date(0).toISOString(),
    ...(cwd !== undefined ? { cwd } : {}),
    ...(title !== undefined ? { title } : {}),
    ...(model !== undefined ? { model } : {}),
  };
}

function toCommon(records: DesktopRecords, ctx: WarningContext): Transcript {
  const source = ctx.source ?? ctx.sessionId;
  const { session } = desktopSession(records, source);
  const id = str(parse(session.header) ?? {}, 'composerId') ?? ctx.sessionId;
  const meta = sessionMeta(session, id, ctx);
  const messages: Message[] = [];
  let assistant: Message | undefined;
  let results: Block[] = [];
  let last = meta.timestamp;
  let callTime: string | undefined;
  // Results ride their call's bubble: they take its time.
  let resultsAt = meta.timestamp;
  const flush = (): void => {
    if (assistant !== undefined && assistant.content.length > 0) messages.push(assistant);
    assistant = undefined;
    if (results.length > 0) messages.push({ role: 'user', content: results, timestamp: resultsAt });
    results = [];
  };
  for (const b of orderedBubbles(session, source, ctx)) {
    const at = normalizeTimestamp(str(b, 'createdAt'));
    if (at === undefined) ctx.untimed?.add(messages.length);
    const ts = at ?? last;
    last = ts;
    const call = isJsonObject(b.toolFormerData) ? b.toolFormerData : undefined;
    if (b.type === 1) {
      flush();
      // A bubble is one text (the writer joins a message's texts with a blank line): its images' notes join it.
      const own = str(b, 'text') ?? '';
      const parts = [...(own.trim() !== '' ? [own] : []), ...imagePaths(b).map((path) => `[image: ${path}]`)];
      if (parts.length > 0)
        messages.push({ role: 'user', content: [{ type: 'text', text: parts.join('\n\n') }], timestamp: ts });
      continue;
    }
    if (b.type !== 2) continue;
    // After calls, a bubble that is not a call made with them starts the next assistant turn.
    if (results.length > 0 && (call === undefined || at !== callTime)) flush();
    callTime = call !== undefined ? at : undefined;
    assistant ??= { role: 'assistant', content: [], timestamp: ts };
    const model = modelName(obj(b.modelInfo).modelName);
    if (model !== undefined) assistant.model = model;
    const tokens = obj(b.tokenCount);
    const input = typeof tokens.inputTokens === 'number' ? tokens.inputTokens : 0;
    const output = typeof tokens.outputTokens === 'number' ? tokens.outputTokens : 0;
    if (input > 0 || output > 0) assistant.usage = { input_tokens: input, output_tokens: output };
    const thinking = obj(b.thinking);
    const thought = str(thinking, 'text');
    if (thought !== undefined && thought.trim() !== '') {
      const signature = nonEmpty(thinking.signature);
      assistant.content.push({
        type: 'thinking',
        text: thought,
        ...(signature !== undefined ? { signature } : {}),
      });
    }
    const text = str(b, 'text');
    if (text !== undefined && text.trim() !== '') assistant.content.push({ type: 'text', text });
    if (call === undefined) continue;
    const name = str(call, 'name') ?? 'tool';
    const params = parse(str(call, 'params')) ?? {};
    const callId = nonEmpty(call.toolCallId);
    const useId =
      callId !== undefined ? safeCallId(callId) : uuidV5(NS, `${id}:call:${messages.length}:${name}`);
    assistant.content.push({ type: 'tool_use', id: useId, tool: desktopToolToCommon(name, params) });
    const status = str(call, 'status');
    // A call still running has no result.
    if (status === 'completed' || status === 'error') {
      resultsAt = ts;
      results.push({
        type: 'tool_result',
        tool_use_id: useId,
        content: str(call, 'result') ?? '',
        ...(status === 'error' ? { is_error: true } : {}),
      });
    }
  }
  flush();
  if (meta.title === undefined) {
    const first = messages.find((m) => m.role === 'user')?.content[0];
    const title = first?.type === 'text' ? titleFromText(first.text) : undefined;
    if (title !== undefined) meta.title = title;
  }
  return { meta, messages };
}

// -- from Common ---------------------------------------------------------

const PREVIEW = 120;

/** The sidebar's entry for a bubble: the app lists and draws the conversation from these. */
function headerEntry(b: JsonObject): JsonObject {
  const grouping: JsonObject = { isRenderable: true, toolDisplayComputed: true };
  const call = isJsonObject(b.toolFormerData) ? b.toolFormerData : undefined;
  if (call !== undefined) {
    Object.assign(grouping, {
      capabilityType: 15,
      isToolGroupable: true,
      toolFormerStatus: call.status ?? 'completed',
      toolCallId: call.toolCallId ?? '',
    });
    if (typeof call.tool === 'number') grouping.toolFormerTool = call.tool;
  } else if (isJsonObject(b.thinking)) Object.assign(grouping, { capabilityType: 30, hasThinking: true });
  else if (typeof b.text === 'string')
    Object.assign(grouping, { hasText: true, textPreview: [...b.text].slice(0, PREVIEW).join('') });
  return { bubbleId: b.bubbleId ?? '', type: b.type ?? 2, grouping, createdAt: b.createdAt ?? '' };
}

/** Cursor's numbers for the tools it draws itself. */
const TOOL_NUMBERS: Record<string, number> = { run_terminal_command_v2: 15, read_file_v2: 40 };

function bubbles(sessionId: string, messages: readonly Message[]): JsonObject[] {
  const out: JsonObject[] = [];
  const calls = new Map<string, JsonObject>();
  const bubble = (i: number, j: number, type: 1 | 2, m: Message): JsonObject => ({
    _v: 3,
    type,
    bubbleId: uuidV5(NS, `${sessionId}:${i}:${j}`),
    createdAt: m.timestamp,
    text: '',
    richText: '',
  });
  messages.forEach((m, i) => {
    if (m.role === 'user') {
      const texts: string[] = [];
      for (const b of m.content) {
        if (b.type === 'tool_result') {
          const call = calls.get(b.tool_use_id);
          if (call === undefined) continue;
          call.result = typeof b.content === 'string' ? b.content : JSON.stringify(b.content);
          call.status = b.is_error === true ? 'error' : 'completed';
        } else if (b.type === 'text') texts.push(b.text);
        else if (b.type === 'artifact') texts.push(artifactText(b.artifact));
        else if (b.type === 'image') texts.push(`[image: ${b.source.media_type}]`);
      }
      const text = texts.join('\n\n');
      if (text !== '') out.push({ ...bubble(i, 0, 1, m), text });
      return;
    }
    m.content.forEach((block, j) => {
      const b = bubble(i, j, 2, m);
      if (m.model !== undefined) b.modelInfo = { modelName: m.model };
      if (m.usage !== undefined)
        b.tokenCount = { inputTokens: m.usage.input_tokens, outputTokens: m.usage.output_tokens };
      switch (block.type) {
        case 'text':
          b.text = block.text;
          break;
        case 'thinking':
          b.thinking = { text: block.text, signature: block.signature ?? '' };
          b.capabilityType = 30;
          break;
        case 'tool_use': {
          const { name, params } = commonToolToDesktop(block.tool);
          const call: JsonObject = {
            ...(TOOL_NUMBERS[name] !== undefined ? { tool: TOOL_NUMBERS[name] } : {}),
            name,
            toolCallId: block.id,
            params: JSON.stringify(params),
            status: 'started',
            result: '',
          };
          calls.set(block.id, call);
          b.toolFormerData = call;
          b.capabilityType = 15;
          break;
        }
        case 'image':
          b.text = `[image: ${block.source.media_type}]`;
          break;
        case 'artifact':
          b.text = artifactText(block.artifact);
          break;
        case 'tool_result':
          return;
      }
      out.push(b);
    });
  });
  return out;
}

function fromCommon(input: Transcript): DesktopRecords {
  const t = repairToolPairing(input);
  const id = t.meta.id;
  const created = Date.parse(t.meta.timestamp);
  const at = Number.isFinite(created) ? created : 0;
  const list = bubbles(id, t.messages);
  const lastAt = t.messages.reduce((n, m) => Math.max(n, Date.parse(m.timestamp) || 0), at);
  const firstUser = t.messages.find((m) => m.role === 'user' && m.content[0]?.type === 'text')?.content[0];
  // The app hides sessions without a name from its sidebar.
  const name =
    t.meta.title ??
    (firstUser?.type === 'text' ? titleFromText(firstUser.text) : undefined) ??
    'Imported session';
  const model = t.meta.model ?? 'default';
  const header: JsonObject = {
    type: 'head',
    composerId: id,
    name,
    createdAt: at,
    lastUpdatedAt: lastAt,
    unifiedMode: 'agent',
    forceMode: 'edit',
    isDraft: false,
    isArchived: false,
  };
  if (t.meta.cwd !== undefined && t.meta.cwd !== '') {
    const uri = {
      $mid: 1,
      fsPath: t.meta.cwd,
      external: `file://${t.meta.cwd}`,
      path: t.meta.cwd,
      scheme: 'file',
    };
    header.workspaceIdentifier = { id: '', uri };
    header.trackedGitRepos = [{ repoPath: t.meta.cwd, branches: [] }];
  }
  const composerData: JsonObject = {
    _v: 17,
    composerId: id,
    name,
    createdAt: at,
    lastUpdatedAt: lastAt,
    status: 'none',
    isAgentic: true,
    unifiedMode: 'agent',
    forceMode: 'edit',
    text: '',
    richText: '',
    hasLoaded: true,
    conversationMap: {},
    fullConversationHeadersOnly: list.map(headerEntry),
    modelConfig: { maxMode: false, modelName: model, selectedModels: [{ modelId: model, parameters: [] }] },
  };
  const rows: KvRow[] = list.map((b) => ({
    key: `bubbleId:${id}:${str(b, 'bubbleId') ?? ''}`,
    value: JSON.stringify(b),
  }));
  return desktopDocument({
    header: JSON.stringify(header),
    createdAt: at,
    lastUpdatedAt: lastAt,
    isArchived: false,
    isSubagent: false,
    recency: lastAt,
    composerData: JSON.stringify(composerData),
    bubbles: rows,
    aux: [],
  });
}

export const desktopCodec: WarningCodec<DesktopRecords> = { toCommon, fromCommon };
