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
  ToolOutput,
  Transcript,
  Usage,
} from '../../model/common.ts';
import { uuidV5 } from '../../model/uuid.ts';
import { apiSafeName } from '../api-names.ts';
import type { WarningCodec, WarningContext } from '../types.ts';
import {
  artifactText,
  imageFromDataUrl,
  imageToDataUrl,
  normalizeTimestamp,
  titleFromText,
} from '../common-values.ts';
import { isJsonObject } from '../../model/json.ts';
import { builtLine } from '../jsonl.ts';
import { sessionUuid } from '../session-id.ts';
import { repairToolPairing } from '../orphans.ts';
import type { CodexLine, CodexRecord, RolloutLine } from './records.ts';
import { codexFunctionToCommon, codexLocalShellToCommon, commonToolToCodex } from './tools.ts';

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

function parseArguments(args: JsonValue | undefined): JsonValue {
  if (typeof args !== 'string') return args ?? {};
  try {
    return JSON.parse(args) as JsonValue;
  } catch {
    return args;
  }
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

function toCommon(records: CodexLine[], ctx: WarningContext): Transcript {
  const rollouts: { json: RolloutLine; index: number }[] = [];
  records.forEach((line, index) => {
    if (line.kind === 'record' && line.shape === 'rollout') rollouts.push({ json: line.json, index });
  });
  const sessionMeta = rollouts.find((r) => r.json.type === 'session_meta')?.json.payload as
    JsonObject | undefined;
  const firstTs = rollouts.map((r) => normalizeTimestamp(r.json.timestamp)).find((t) => t !== undefined);
  const start =
    normalizeTimestamp(sessionMeta !== undefined ? str(sessionMeta, 'timestamp') : undefined) ??
    firstTs ??
    ctx.timestamp;
  const fallbackTs = start ?? new Date(0).toISOString();
  const meta: Meta = {
    id: (sessionMeta !== undefined ? str(sessionMeta, 'id') : undefined) ?? ctx.sessionId,
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

  const messages: Message[] = [];
  let model: string | undefined;
  /** Index of the last assistant message since the last token_count. */
  let usageTarget: number | undefined;
  let firstUserText: string | undefined;
  let synthetic = 0;
  const callId = (p: JsonObject): string =>
    str(p, 'call_id') ??
    str(p, 'id') ??
    uuidV5('8d3b2a61-0f4e-4c7a-9b25-6e1f0c9d4a77', `${meta.id}:${synthetic++}`);

  const eventOnly = !rollouts.some(
    (r) =>
      r.json.type === 'response_item' && isJsonObject(r.json.payload) && isConversationItem(r.json.payload),
  );
  /** Encrypted-only reasoning waiting for the message it precedes. */
  let pendingReasoning: JsonObject[] = [];

  for (const { json } of rollouts) {
    const payload = isJsonObject(json.payload) ? json.payload : undefined;
    if (payload === undefined) continue;
    const ts = normalizeTimestamp(json.timestamp) ?? fallbackTs;
    const push = (role: 'user' | 'assistant', content: Block[]): void => {
      const m: Message = { role, content, timestamp: ts };
      if (role === 'assistant') {
        if (model !== undefined) m.model = model;
        usageTarget = messages.length;
      }
      carry(m, 'before', pendingReasoning);
      pendingReasoning = [];
      messages.push(m);
    };
    if (json.type === 'turn_context') {
      const m = str(payload, 'model');
      if (m) {
        model = m;
        meta.model ??= m;
      }
      continue;
    }
    if (json.type === 'event_msg') {
      const shown = eventOnly ? eventToMessage(payload) : undefined;
      if (shown !== undefined) {
        if (shown.role === 'user' && firstUserText === undefined) {
          const text = shown.content.find((b) => b.type === 'text');
          if (text !== undefined && !text.text.trimStart().startsWith('<')) firstUserText = text.text;
        }
        push(shown.role, shown.content);
        continue;
      }
      if (payload.type === 'token_count' && usageTarget !== undefined) {
        const usage = usageFromTokenCount(payload);
        const target = messages[usageTarget];
        if (usage !== undefined && target !== undefined && target.usage === undefined) target.usage = usage;
        usageTarget = undefined;
      }
      continue;
    }
    if (json.type !== 'response_item') continue;
    const itemType = str(payload, 'type') ?? '';
    switch (itemType) {
      case 'message': {
        const role = payload.role;
        if (role !== 'user' && role !== 'assistant') break;
        const blocks = contentToBlocks(payload.content);
        if (blocks.length === 0) break;
        if (role === 'user' && blocks.every((b) => b.type === 'text' && isScaffolding(b.text))) break;
        if (role === 'user' && firstUserText === undefined) {
          const text = blocks.find((b) => b.type === 'text');
          if (text !== undefined && !text.text.trimStart().startsWith('<')) firstUserText = text.text;
        }
        push(role, blocks);
        break;
      }
      case 'reasoning': {
        const block = reasoningToBlock(payload);
        if (block !== undefined) push('assistant', [block]);
        else if (str(payload, 'encrypted_content') !== undefined) pendingReasoning.push(payload);
        break;
      }
      case 'function_call': {
        const name = str(payload, 'name') ?? 'tool';
        push('assistant', [
          {
            type: 'tool_use',
            id: callId(payload),
            tool: codexFunctionToCommon(name, parseArguments(payload.arguments)),
          },
        ]);
        break;
      }
      case 'custom_tool_call': {
        const name = str(payload, 'name') ?? 'custom_tool';
        const input = payload.input ?? '';
        push('assistant', [
          { type: 'tool_use', id: callId(payload), tool: { name: 'Raw', tool_name: name, input } },
        ]);
        break;
      }
      case 'local_shell_call':
        push('assistant', [
          { type: 'tool_use', id: callId(payload), tool: codexLocalShellToCommon(payload.action ?? null) },
        ]);
        break;
      case 'function_call_output':
      case 'custom_tool_call_output': {
        const id = str(payload, 'call_id');
        if (id === undefined) {
          ctx.onWarning?.({
            source: ctx.source ?? 'codex',
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
  const last = messages.at(-1);
  if (last !== undefined) carry(last, 'after', pendingReasoning);
  if (firstUserText !== undefined) {
    const title = titleFromText(firstUserText);
    if (title !== undefined) meta.title = title;
  }
  return { meta, messages };
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
