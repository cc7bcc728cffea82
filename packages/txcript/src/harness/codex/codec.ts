/**
 * Codex rollout lines <-> Common. The conversation is read from the
 * protocol log (`response_item`), one Common message per item; the display
 * log (`event_msg`) mirrors it and is read only for usage (`token_count`).
 * `turn_context` sets the model of the assistant items after it.
 * fromCommon writes both logs, so `codex resume` can both continue the
 * conversation and show it.
 */
import type {
  Block,
  ImageSource,
  JsonObject,
  JsonValue,
  Message,
  Meta,
  Tool,
  ToolOutput,
  Transcript,
  Usage,
} from '../../model/common.ts';
import { uuidV5 } from '../../model/uuid.ts';
import { apiSafeName } from '../api-names.ts';
import type { Warning, WarningCodec, WarningContext } from '../types.ts';
import {
  artifactText,
  imageFromDataUrl,
  imageToDataUrl,
  normalizeTimestamp,
  titleFromText,
} from '../common-values.ts';
import { isJsonObject } from '../../model/json.ts';
import { builtLine, hasStringType, readJsonl, type LineSource } from '../jsonl.ts';
import { sessionUuid } from '../session-id.ts';
import { repairToolPairing } from '../orphans.ts';
import { classifyCodexRecord, type CodexLine, type CodexRecord, type RolloutLine } from './records.ts';
import { codexFunctionToCommon, codexLocalShellToCommon, commonToolToCodex } from './tools.ts';
import { parseArguments } from '../native-values.ts';

/** cli_version written when Common has none. */
export const DEFAULT_CODEX_VERSION = '0.46.0';

/** User messages Codex injects for itself: environment, instructions, policies. Never conversation. */
const SCAFFOLDING_PREFIXES = [
  '<environment_context>',
  '<user_instructions>',
  '# AGENTS.md instructions',
  '<permissions instructions>',
  '<collaboration_mode>',
  '<sandbox_mode>',
  '<approval_policy>',
];

function isScaffolding(text: string): boolean {
  const t = text.trimStart();
  return SCAFFOLDING_PREFIXES.some((p) => t.startsWith(p));
}

function str(o: JsonObject, key: string): string | undefined {
  const v = o[key];
  return typeof v === 'string' ? v : undefined;
}

/**
 * A tool output and whether it failed. Codex keeps no error flag in the
 * output item; failure shows as a non-zero exit code in the output text
 * (`{"output":…,"metadata":{"exit_code":N}}` or `Exit code: N`), or as
 * `success: false`, which this codec writes.
 */
function outputToCommon(payload: JsonObject): { content: ToolOutput; isError: boolean } {
  const out = payload.output;
  let content: ToolOutput;
  let isError = payload.success === false;
  if (typeof out === 'string') {
    content = out;
    const exit = /^Exit code: (-?\d+)/.exec(out);
    if (exit !== null) isError ||= exit[1] !== '0';
    else if (out.startsWith('{')) {
      try {
        const parsed: unknown = JSON.parse(out);
        if (isJsonObject(parsed)) {
          const code = (parsed as { metadata?: { exit_code?: unknown } }).metadata?.exit_code;
          if (typeof code === 'number') isError ||= code !== 0;
        }
      } catch {
        // plain text that starts with a brace
      }
    }
  } else if (out === undefined || out === null) {
    content = '';
  } else if (isJsonObject(out) && typeof out.content === 'string') {
    content = out.content;
    isError ||= out.success === false;
  } else {
    content = out;
  }
  return { content, isError };
}

function usageFromTokenCount(payload: JsonObject): Usage | undefined {
  const info = payload.info;
  if (!isJsonObject(info) || !isJsonObject(info.last_token_usage)) return undefined;
  const u = info.last_token_usage;
  if (typeof u.input_tokens !== 'number' || typeof u.output_tokens !== 'number') return undefined;
  const cached = typeof u.cached_input_tokens === 'number' ? u.cached_input_tokens : undefined;
  // OpenAI counts cached tokens inside input_tokens; Common (Anthropic style) counts them apart.
  return {
    input_tokens: Math.max(0, u.input_tokens - (cached ?? 0)),
    output_tokens: u.output_tokens,
    ...(cached !== undefined ? { cache_read_input_tokens: cached } : {}),
  };
}

function contentToBlocks(content: JsonValue | undefined): Block[] {
  if (!Array.isArray(content)) return [];
  const blocks: Block[] = [];
  for (const part of content) {
    if (!isJsonObject(part)) continue;
    if ((part.type === 'input_text' || part.type === 'output_text') && typeof part.text === 'string') {
      if (part.text !== '') blocks.push({ type: 'text', text: part.text });
    } else if (part.type === 'input_image' && typeof part.image_url === 'string') {
      const source = imageFromDataUrl(part.image_url);
      if (source !== undefined) blocks.push({ type: 'image', source });
    }
  }
  return blocks;
}

function reasoningToBlock(payload: JsonObject): Block | undefined {
  const texts = (key: string, type: string): string[] => {
    const arr = payload[key];
    if (!Array.isArray(arr)) return [];
    return arr.flatMap((p) =>
      isJsonObject(p) && p.type === type && typeof p.text === 'string' ? [p.text] : [],
    );
  };
  let parts = texts('summary', 'summary_text');
  if (parts.length === 0) parts = texts('content', 'reasoning_text');
  const text = parts.join('\n\n');
  // Encrypted-only reasoning has nothing to read: no block (it rides along natively, see CARRIED).
  if (text === '') return undefined;
  const encrypted = str(payload, 'encrypted_content');
  return { type: 'thinking', text, ...(encrypted !== undefined ? { encrypted } : {}) };
}

/**
 * Reasoning items with no readable text (only `encrypted_content`) are not
 * Common content, but a Codex -> Codex trip must give them back: the API
 * needs them to carry the model's reasoning across turns. They ride on the
 * Common message they preceded (or, at the end, the last one) under a symbol
 * key: object spreads and slices keep them, JSON (Simple, view) never shows them.
 */
const CARRIED = Symbol('codex native reasoning');

interface CarriedReasoning {
  before: JsonObject[];
  after: JsonObject[];
}

type CarryingMessage = Message & { [CARRIED]?: CarriedReasoning };

function carried(m: Message): CarriedReasoning | undefined {
  return (m as CarryingMessage)[CARRIED];
}

function carry(m: Message, where: keyof CarriedReasoning, items: JsonObject[]): void {
  if (items.length === 0) return;
  const c = ((m as CarryingMessage)[CARRIED] ??= { before: [], after: [] });
  c[where].push(...items);
}

/** Display-log events that make the conversation of a rollout with no protocol items. */
function eventToMessage(payload: JsonObject): { role: 'user' | 'assistant'; content: Block[] } | undefined {
  if (payload.type === 'user_message') {
    const text = str(payload, 'message') ?? '';
    const content: Block[] = text !== '' && !isScaffolding(text) ? [{ type: 'text', text }] : [];
    if (Array.isArray(payload.images)) {
      for (const url of payload.images) {
        const source = typeof url === 'string' ? imageFromDataUrl(url) : undefined;
        if (source !== undefined) content.push({ type: 'image', source });
      }
    }
    return content.length > 0 ? { role: 'user', content } : undefined;
  }
  if (payload.type === 'agent_message') {
    const text = str(payload, 'message') ?? '';
    return text !== '' ? { role: 'assistant', content: [{ type: 'text', text }] } : undefined;
  }
  if (payload.type === 'agent_reasoning') {
    const text = str(payload, 'text') ?? '';
    return text !== '' ? { role: 'assistant', content: [{ type: 'thinking', text }] } : undefined;
  }
  return undefined;
}

/** Protocol items that are conversation; a rollout with none is read from its display log. */
function isConversationItem(payload: JsonObject): boolean {
  const type = payload.type;
  if (type === 'message') return payload.role === 'user' || payload.role === 'assistant';
  return typeof type === 'string' && type !== 'web_search_call' && type !== 'compaction';
}

/** Namespace of the ids given to calls the rollout gives none (UUIDv5, key `{session id}:{n}`). */
const SYNTHETIC_CALL_NS = '8d3b2a61-0f4e-4c7a-9b25-6e1f0c9d4a77';

/** A message's time until the session's start is known (see `finish`). */
const UNTIMED = '';

/**
 * One reading of a rollout's conversation, fed its rollout lines in order:
 * from the protocol log, or (`eventOnly`) from the display log of a rollout
 * with no protocol items. What depends on the whole file (the session's
 * start, for messages without a time; its id, for synthetic call ids) is
 * filled in by `finish`.
 */
class RolloutConversation {
  readonly messages: Message[] = [];
  firstUserText: string | undefined;
  readonly #ctx: WarningContext;
  #model: string | undefined;
  /** Index of the last assistant message since the last token_count. */
  #usageTarget: number | undefined;
  /** Encrypted-only reasoning waiting for the message it precedes. */
  #pendingReasoning: JsonObject[] = [];
  readonly #untimed: Message[] = [];
  /** Calls that wait for a synthetic id, numbered in this order. */
  readonly #unnamed: Extract<Block, { type: 'tool_use' }>[] = [];

  constructor(
    readonly eventOnly: boolean,
    ctx: WarningContext,
  ) {
    this.#ctx = ctx;
  }

  /** The tool_use block of a call item; one with no id of its own is given one in `finish`. */
  #call(p: JsonObject, tool: Tool): Block {
    const id = str(p, 'call_id') ?? str(p, 'id');
    const block = { type: 'tool_use' as const, id: id ?? '', tool };
    if (id === undefined) this.#unnamed.push(block);
    return block;
  }

  add(json: RolloutLine): void {
    const payload = isJsonObject(json.payload) ? json.payload : undefined;
    if (payload === undefined) return;
    const ts = normalizeTimestamp(json.timestamp) ?? UNTIMED;
    const push = (role: 'user' | 'assistant', content: Block[]): void => {
      const m: Message = { role, content, timestamp: ts };
      if (ts === UNTIMED) this.#untimed.push(m);
      if (role === 'assistant') {
        if (this.#model !== undefined) m.model = this.#model;
        this.#usageTarget = this.messages.length;
      }
      carry(m, 'before', this.#pendingReasoning);
      this.#pendingReasoning = [];
      this.messages.push(m);
    };
    if (json.type === 'turn_context') {
      const m = str(payload, 'model');
      if (m) this.#model = m;
      return;
    }
    if (json.type === 'event_msg') {
      const shown = this.eventOnly ? eventToMessage(payload) : undefined;
      if (shown !== undefined) {
        if (shown.role === 'user' && this.firstUserText === undefined) {
          const text = shown.content.find((b) => b.type === 'text');
          if (text !== undefined && !text.text.trimStart().startsWith('<')) this.firstUserText = text.text;
        }
        push(shown.role, shown.content);
        return;
      }
      if (payload.type === 'token_count' && this.#usageTarget !== undefined) {
        const usage = usageFromTokenCount(payload);
        const target = this.messages[this.#usageTarget];
        if (usage !== undefined && target !== undefined && target.usage === undefined) target.usage = usage;
        this.#usageTarget = undefined;
      }
      return;
    }
    if (json.type !== 'response_item') return;
    const itemType = str(payload, 'type') ?? '';
    switch (itemType) {
      case 'message': {
        const role = payload.role;
        if (role !== 'user' && role !== 'assistant') break;
        const blocks = contentToBlocks(payload.content);
        if (blocks.length === 0) break;
        if (role === 'user' && blocks.every((b) => b.type === 'text' && isScaffolding(b.text))) break;
        if (role === 'user' && this.firstUserText === undefined) {
          const text = blocks.find((b) => b.type === 'text');
          if (text !== undefined && !text.text.trimStart().startsWith('<')) this.firstUserText = text.text;
        }
        push(role, blocks);
        break;
      }
      case 'reasoning': {
        const block = reasoningToBlock(payload);
        if (block !== undefined) push('assistant', [block]);
        else if (str(payload, 'encrypted_content') !== undefined) this.#pendingReasoning.push(payload);
        break;
      }
      case 'function_call': {
        const name = str(payload, 'name') ?? 'tool';
        push('assistant', [
          this.#call(payload, codexFunctionToCommon(name, parseArguments(payload.arguments))),
        ]);
        break;
      }
      case 'custom_tool_call': {
        const name = str(payload, 'name') ?? 'custom_tool';
        const input = payload.input ?? '';
        push('assistant', [this.#call(payload, { name: 'Raw', tool_name: name, input })]);
        break;
      }
      case 'local_shell_call':
        push('assistant', [this.#call(payload, codexLocalShellToCommon(payload.action ?? null))]);
        break;
      case 'function_call_output':
      case 'custom_tool_call_output': {
        const id = str(payload, 'call_id');
        if (id === undefined) {
          this.#ctx.onWarning?.({
            source: this.#ctx.source ?? 'codex',
            message: `${itemType} without call_id; skipped`,
          });
          break;
        }
        const { content, isError } = outputToCommon(payload);
        push('user', [
          { type: 'tool_result', tool_use_id: id, content, ...(isError ? { is_error: true } : {}) },
        ]);
        break;
      }
      default:
        // web_search_call (server-side, no result item), compaction and other items have no Common form.
        break;
    }
  }

  finish(fallbackTs: string, sessionId: string): void {
    for (const m of this.#untimed) m.timestamp = fallbackTs;
    this.#unnamed.forEach((block, n) => (block.id = uuidV5(SYNTHETIC_CALL_NS, `${sessionId}:${n}`)));
    const last = this.messages.at(-1);
    if (last !== undefined) carry(last, 'after', this.#pendingReasoning);
  }
}

/**
 * A rollout's transcript, fed its lines in order. Its conversation is read
 * from the protocol log; until a protocol item comes, the display log is
 * read too, for a rollout that turns out to have none.
 */
class CodexConversation {
  readonly #ctx: WarningContext;
  #sessionMeta: JsonObject | undefined;
  #firstTs: string | undefined;
  /** The first turn_context's model: the session's when session_meta names none. */
  #turnModel: string | undefined;
  readonly #protocol: RolloutConversation;
  #display: RolloutConversation | undefined;

  constructor(ctx: WarningContext) {
    this.#ctx = ctx;
    this.#protocol = new RolloutConversation(false, ctx);
    this.#display = new RolloutConversation(true, ctx);
  }

  add(line: CodexLine): void {
    if (line.kind !== 'record' || line.shape !== 'rollout') return;
    const json = line.json;
    const payload = isJsonObject(json.payload) ? json.payload : undefined;
    if (json.type === 'session_meta' && this.#sessionMeta === undefined)
      this.#sessionMeta = json.payload as JsonObject;
    this.#firstTs ??= normalizeTimestamp(json.timestamp);
    if (json.type === 'turn_context' && payload !== undefined) {
      const model = str(payload, 'model');
      if (model) this.#turnModel ??= model;
    }
    if (json.type === 'response_item' && payload !== undefined && isConversationItem(payload))
      this.#display = undefined;
    this.#protocol.add(json);
    this.#display?.add(json);
  }

  finish(): Transcript {
    const sessionMeta = this.#sessionMeta;
    const start =
      normalizeTimestamp(sessionMeta !== undefined ? str(sessionMeta, 'timestamp') : undefined) ??
      this.#firstTs ??
      this.#ctx.timestamp;
    const fallbackTs = start ?? new Date(0).toISOString();
    const meta: Meta = {
      id: (sessionMeta !== undefined ? str(sessionMeta, 'id') : undefined) ?? this.#ctx.sessionId,
      timestamp: fallbackTs,
    };
    if (sessionMeta !== undefined) {
      const cwd = str(sessionMeta, 'cwd');
      if (cwd) meta.cwd = cwd;
      const version = str(sessionMeta, 'cli_version');
      if (version) meta.cli_version = version;
      const git = sessionMeta.git;
      if (isJsonObject(git) && typeof git.branch === 'string' && git.branch !== '')
        meta.git_branch = git.branch;
      const model = str(sessionMeta, 'model');
      if (model) meta.model = model;
    }
    if (this.#turnModel !== undefined) meta.model ??= this.#turnModel;
    const conversation = this.#display ?? this.#protocol;
    conversation.finish(fallbackTs, meta.id);
    if (conversation.firstUserText !== undefined) {
      const title = titleFromText(conversation.firstUserText);
      if (title !== undefined) meta.title = title;
    }
    return { meta, messages: conversation.messages };
  }
}

function toCommon(records: CodexLine[], ctx: WarningContext): Transcript {
  const conversation = new CodexConversation(ctx);
  for (const line of records) conversation.add(line);
  return conversation.finish();
}

/**
 * `toCommon(codexText.parse(...).records)` for lines read one by one, each
 * dropped once read: the same transcript, the text layer's warnings returned
 * (in line order) and the codec's given to `ctx.onWarning`.
 */
export function readCodexCommon(
  lines: LineSource,
  source: string,
  ctx: WarningContext,
): { transcript: Transcript; warnings: Warning[] } {
  const conversation = new CodexConversation(ctx);
  const warnings = readJsonl(lines, source, classifyCodexRecord, (line) => conversation.add(line), {
    recoverGlued: hasStringType,
  });
  return { transcript: conversation.finish(), warnings };
}

// ── fromCommon ─────────────────────────────────────────────────────────

function line(timestamp: string, type: string, payload: JsonObject): CodexLine {
  return builtLine<CodexRecord>({ shape: 'rollout', json: { timestamp, type, payload } });
}

function imagePart(source: ImageSource): JsonObject {
  return { type: 'input_image', image_url: imageToDataUrl(source) };
}

/** Tool output Codex accepts: a string or content items; Claude text/image blocks are translated. */
function outputToCodex(content: ToolOutput): string | JsonObject[] {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const out: JsonObject[] = [];
    for (const item of content) {
      if (!isJsonObject(item)) return JSON.stringify(content);
      if ((item.type === 'input_text' || item.type === 'output_text') && typeof item.text === 'string')
        out.push(item);
      else if (item.type === 'input_image' && typeof item.image_url === 'string') out.push(item);
      else if (item.type === 'text' && typeof item.text === 'string')
        out.push({ type: 'input_text', text: item.text });
      else if (
        item.type === 'image' &&
        isJsonObject(item.source) &&
        typeof item.source.media_type === 'string' &&
        typeof item.source.data === 'string'
      ) {
        out.push({
          type: 'input_image',
          image_url: `data:${item.source.media_type};base64,${item.source.data}`,
        });
      } else return JSON.stringify(content);
    }
    return out;
  }
  return JSON.stringify(content);
}

function usageToCodex(u: Usage): JsonObject {
  // Cache writes have no Codex field; they are input tokens, so they count there.
  const cached = u.cache_read_input_tokens;
  const input = u.input_tokens + (cached ?? 0) + (u.cache_creation_input_tokens ?? 0);
  return {
    input_tokens: input,
    ...(cached !== undefined ? { cached_input_tokens: cached } : {}),
    output_tokens: u.output_tokens,
    reasoning_output_tokens: 0,
    total_tokens: input + u.output_tokens,
  };
}

function turnContext(ts: string, turnId: string, cwd: string, model: string): CodexLine {
  return line(ts, 'turn_context', {
    turn_id: turnId,
    cwd,
    approval_policy: 'on-request',
    sandbox_policy: { type: 'read-only' },
    model,
    summary: 'auto',
  });
}

/** A user message that opens a turn: anything but tool results answering the turn's calls. */
function opensTurn(m: Message): boolean {
  return m.role === 'user' && m.content.some((b) => b.type !== 'tool_result');
}

/** Namespace of the turn ids fromCommon writes, so they are a pure function of the session. */
const TURN_NS = '4f7c2a90-3b1d-4e58-a6c4-9d0e8b2f1a37';

/**
 * The rollout lines of a transcript, made one message at a time: a consumer
 * that renders each line as it comes never holds them all.
 */
export function* codexLines(transcript: Transcript): Generator<CodexLine> {
  const t = repairToolPairing(transcript);
  const meta = t.meta;
  const id = sessionUuid(meta.id);
  const cwd = meta.cwd ?? '';
  const lines: CodexLine[] = [
    line(meta.timestamp, 'session_meta', {
      id,
      timestamp: meta.timestamp,
      cwd,
      originator: 'codex_cli_rs',
      cli_version: meta.cli_version ?? DEFAULT_CODEX_VERSION,
      instructions: null,
      source: 'cli',
      // Resume resolves the provider by name; a missing one fails (public txcript doc).
      model_provider: 'openai',
      ...(meta.git_branch !== undefined ? { git: { branch: meta.git_branch } } : {}),
    }),
  ];
  // Turns as the CLI writes them: task_started, turn_context (the turn's model), the items, task_complete.
  let model = meta.model;
  let turn: { id: string; model: string | undefined; lastAgentText: string | null } | undefined;
  let turns = 0;
  const endTurn = (ts: string): void => {
    if (turn === undefined) return;
    lines.push(
      line(ts, 'event_msg', {
        type: 'task_complete',
        turn_id: turn.id,
        last_agent_message: turn.lastAgentText,
      }),
    );
    turn = undefined;
  };
  const startTurn = (index: number, ts: string): void => {
    const turnId = uuidV5(TURN_NS, `${id}:${turns++}`);
    let first: Message | undefined;
    for (let k = index; k < t.messages.length; k++) {
      const m = t.messages[k]!;
      if (m.role === 'assistant' || (k > index && opensTurn(m))) {
        first = m;
        break;
      }
    }
    const turnModel = (first?.role === 'assistant' ? first.model : undefined) ?? model;
    lines.push(line(ts, 'event_msg', { type: 'task_started', turn_id: turnId, model_context_window: null }));
    if (turnModel !== undefined) {
      model = turnModel;
      lines.push(turnContext(ts, turnId, cwd, turnModel));
    }
    turn = { id: turnId, model: turnModel, lastAgentText: null };
  };
  const customCalls = new Set<string>();
  const total = {
    input_tokens: 0,
    cached_input_tokens: 0,
    output_tokens: 0,
    reasoning_output_tokens: 0,
    total_tokens: 0,
  };

  for (let index = 0; index < t.messages.length; index++) {
    // The lines written so far leave before the next message's are made.
    yield* lines;
    lines.length = 0;
    const m = t.messages[index]!;
    const ts = m.timestamp;
    if (turn === undefined || opensTurn(m)) {
      endTurn(ts);
      startTurn(index, ts);
    }
    const current = turn!;
    if (m.role === 'assistant' && m.model !== undefined && m.model !== current.model) {
      // The model changed inside a turn: the CLI writes a new turn context for the same turn.
      model = current.model = m.model;
      lines.push(turnContext(ts, current.id, cwd, m.model));
    }
    const reasoning = (items: JsonObject[] | undefined): void => {
      for (const item of items ?? []) lines.push(line(ts, 'response_item', item));
    };
    reasoning(carried(m)?.before);
    let parts: JsonObject[] = [];
    let texts: string[] = [];
    let images: string[] = [];
    const flush = (): void => {
      if (parts.length === 0) return;
      lines.push(line(ts, 'response_item', { type: 'message', role: m.role, content: parts }));
      if (m.role === 'user')
        lines.push(line(ts, 'event_msg', { type: 'user_message', message: texts.join('\n\n'), images }));
      else if (texts.length > 0) {
        const message = texts.join('\n\n');
        lines.push(line(ts, 'event_msg', { type: 'agent_message', message }));
        current.lastAgentText = message;
      }
      parts = [];
      texts = [];
      images = [];
    };
    const textType = m.role === 'user' ? 'input_text' : 'output_text';
    for (const block of m.content) {
      switch (block.type) {
        case 'text':
          parts.push({ type: textType, text: block.text });
          texts.push(block.text);
          break;
        case 'artifact': {
          const text = artifactText(block.artifact);
          parts.push({ type: textType, text });
          texts.push(text);
          break;
        }
        case 'image':
          parts.push(imagePart(block.source));
          images.push(imageToDataUrl(block.source));
          break;
        case 'thinking':
          flush();
          lines.push(
            line(ts, 'response_item', {
              type: 'reasoning',
              summary: block.text === '' ? [] : [{ type: 'summary_text', text: block.text }],
              content: null,
              encrypted_content: block.encrypted ?? null,
            }),
          );
          if (block.text !== '')
            lines.push(line(ts, 'event_msg', { type: 'agent_reasoning', text: block.text }));
          break;
        case 'tool_use': {
          flush();
          const call = commonToolToCodex(block.tool);
          if (call.item === 'custom_tool_call') {
            customCalls.add(block.id);
            lines.push(
              line(ts, 'response_item', {
                type: 'custom_tool_call',
                status: 'completed',
                call_id: block.id,
                name: apiSafeName(call.name),
                input: call.input,
              }),
            );
          } else {
            lines.push(
              line(ts, 'response_item', {
                type: 'function_call',
                name: apiSafeName(call.name),
                arguments: call.arguments,
                call_id: block.id,
              }),
            );
          }
          break;
        }
        case 'tool_result':
          flush();
          lines.push(
            line(ts, 'response_item', {
              type: customCalls.has(block.tool_use_id) ? 'custom_tool_call_output' : 'function_call_output',
              call_id: block.tool_use_id,
              output: outputToCodex(block.content),
              // Not read by Codex; keeps the error flag, which the output item has no field for.
              ...(block.is_error === true ? { success: false } : {}),
            }),
          );
          break;
      }
    }
    flush();
    reasoning(carried(m)?.after);
    if (m.role === 'assistant' && m.usage !== undefined) {
      const last = usageToCodex(m.usage);
      for (const k of Object.keys(total) as (keyof typeof total)[])
        total[k] += typeof last[k] === 'number' ? last[k] : 0;
      lines.push(
        line(ts, 'event_msg', {
          type: 'token_count',
          info: { total_token_usage: { ...total }, last_token_usage: last },
        }),
      );
    }
  }
  endTurn(t.messages.at(-1)?.timestamp ?? meta.timestamp);
  yield* lines;
}

export const codexCodec: WarningCodec<CodexLine[]> = {
  toCommon,
  fromCommon: (transcript) => [...codexLines(transcript)],
};
