/**
 * Claude Code records <-> Common. Claude's `message` is already the
 * Anthropic Messages shape Common is modelled on, so most of this is the
 * envelope: one Common message per `user` / `assistant` record, in file
 * order; other record types feed only the metadata.
 */
import { z } from 'zod';
import type {
  Block,
  JsonObject,
  JsonValue,
  Message,
  Meta,
  ToolOutput,
  Transcript,
  Usage,
} from '../../model/common.ts';
import { uuidV5 } from '../../model/uuid.ts';
import type { StreamedTranscript, Warning, WarningCodec, WarningContext } from '../types.ts';
import { repairToolPairing } from '../orphans.ts';
import { apiSafeId, apiSafeName } from '../api-names.ts';
import {
  artifactText,
  imageFromDataUrl,
  normalizeTimestamp,
  stopReasonFromString,
  stopReasonToString,
  titleFromText,
} from '../common-values.ts';
import { isJsonObject } from '../../model/json.ts';
import { isCount } from '../summary-cache-file.ts';
import {
  builtLine,
  hasStringType,
  pullJsonl,
  readJsonl,
  type LineSource,
  type PulledLines,
} from '../jsonl.ts';
import { classifyClaudeRecord, type ClaudeEntry, type ClaudeLine, type ClaudeRecord } from './records.ts';
import { isUuid, sessionUuid } from '../session-id.ts';
import { claudeToolToCommon, commonToolToClaude } from './tools.ts';
import { commandBody, parseLocalCommand, stdoutBody, type LocalCommandEnvelope } from './local-command.ts';
import { splitSidechains } from './sidechains.ts';

/** The `version` written when Common has no cli_version: a Claude Code release line that resumes. */
export const DEFAULT_CLAUDE_VERSION = '2.0.0';

const TextBlock = z.looseObject({ type: z.literal('text'), text: z.string() });
const ThinkingBlock = z.looseObject({
  type: z.literal('thinking'),
  thinking: z.string(),
  signature: z.string().optional(),
});
const ToolUseBlock = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string(),
  name: z.string(),
  input: z.unknown().optional(),
});
const ToolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: z.unknown().optional(),
  is_error: z.boolean().nullable().optional(),
});
const ImageBlock = z.looseObject({
  type: z.literal('image'),
  source: z.looseObject({ type: z.string(), media_type: z.string(), data: z.string() }),
});
const UsageShape = z.looseObject({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  cache_read_input_tokens: z.number().int().nonnegative().nullable().optional(),
  cache_creation_input_tokens: z.number().int().nonnegative().nullable().optional(),
});

const blockSchemas = {
  text: TextBlock,
  thinking: ThinkingBlock,
  tool_use: ToolUseBlock,
  tool_result: ToolResultBlock,
  image: ImageBlock,
} as const;

/** Tool result content: a string or an array of content blocks, as Claude writes it; anything else as its JSON text. */
function resultContentToCommon(content: unknown): ToolOutput {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  if (
    Array.isArray(content) &&
    content.every((b) => isJsonObject(b as JsonValue) && typeof (b as JsonObject).type === 'string')
  ) {
    return content as JsonValue[];
  }
  return JSON.stringify(content);
}

/** Each block schema's test written out (see fitsEnvelope in records.ts): the schema is asked only for a block that fails it. */
const blockFits: Record<keyof typeof blockSchemas, (b: JsonObject) => boolean> = {
  text: (b) => typeof b.text === 'string',
  thinking: (b) =>
    typeof b.thinking === 'string' && (b.signature === undefined || typeof b.signature === 'string'),
  tool_use: (b) => typeof b.id === 'string' && typeof b.name === 'string',
  tool_result: (b) =>
    typeof b.tool_use_id === 'string' &&
    (b.is_error === undefined || b.is_error === null || typeof b.is_error === 'boolean'),
  image: (b) =>
    isJsonObject(b.source) &&
    typeof b.source.type === 'string' &&
    typeof b.source.media_type === 'string' &&
    typeof b.source.data === 'string',
};

type BlockShapes = { [K in keyof typeof blockSchemas]: z.infer<(typeof blockSchemas)[K]> };

function blockToCommon(raw: JsonObject, where: string, warn: (m: string) => void): Block | undefined {
  const type = raw.type as string;
  if (!(type in blockSchemas)) return undefined; // a block type with no Common form (kept natively)
  const kind = type as keyof typeof blockSchemas;
  const checked = blockFits[kind](raw)
    ? { success: true as const, data: raw as unknown as BlockShapes[typeof kind] }
    : blockSchemas[kind].safeParse(raw);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    warn(
      `${where}: ${type} block ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'is malformed'}; skipped`,
    );
    return undefined;
  }
  const b = checked.data;
  switch (b.type) {
    case 'text':
      return { type: 'text', text: b.text };
    case 'thinking':
      return {
        type: 'thinking',
        text: b.thinking,
        ...(b.signature !== undefined ? { signature: b.signature } : {}),
      };
    case 'tool_use':
      return { type: 'tool_use', id: b.id, tool: claudeToolToCommon(b.name, (b.input ?? {}) as JsonValue) };
    case 'tool_result':
      return {
        type: 'tool_result',
        tool_use_id: b.tool_use_id,
        content: resultContentToCommon(b.content),
        ...(b.is_error === true ? { is_error: true } : {}),
      };
    case 'image':
      return {
        type: 'image',
        source: { type: b.source.type, media_type: b.source.media_type, data: b.source.data },
      };
  }
}

const isOptionalCount = (v: unknown): boolean => v === undefined || v === null || isCount(v);

function usageToCommon(u: unknown): Usage | undefined {
  const fits =
    isJsonObject(u) &&
    isCount(u.input_tokens) &&
    isCount(u.output_tokens) &&
    isOptionalCount(u.cache_read_input_tokens) &&
    isOptionalCount(u.cache_creation_input_tokens);
  const checked = fits
    ? { success: true as const, data: u as z.infer<typeof UsageShape> }
    : UsageShape.safeParse(u);
  if (!checked.success) return undefined;
  const { input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens } = checked.data;
  return {
    input_tokens,
    output_tokens,
    ...(typeof cache_read_input_tokens === 'number' ? { cache_read_input_tokens } : {}),
    ...(typeof cache_creation_input_tokens === 'number' ? { cache_creation_input_tokens } : {}),
  };
}

/** Text that Claude Code writes for itself on user records (slash-command markup, reminders), never a title. */
function isHarnessText(text: string): boolean {
  return text.trimStart().startsWith('<') || text.startsWith('Caveat: ');
}

/** The text of a body that may be a local-command envelope: a bare string or one lone text block. */
function envelopeText(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (Array.isArray(content) && content.length === 1) {
    const only: unknown = content[0];
    if (isJsonObject(only)) {
      const block = only;
      if (block.type === 'text' && typeof block.text === 'string') return block.text;
    }
  }
  return undefined;
}

/**
 * Slash commands and their output as Common blocks: the command is a user
 * `tool_use` of the typed `Command` tool with the line's uuid as id; its
 * output a `tool_result` for the command its `parentUuid` names (or, when
 * that is not the command still waiting, a result under its own uuid); the
 * caveat nothing.
 */
class LocalCommands {
  #open: string | undefined;

  blocks(envelope: LocalCommandEnvelope, uuid: string, parentUuid: string | null | undefined): Block[] {
    switch (envelope.kind) {
      case 'command':
        this.#open = uuid;
        return [
          {
            type: 'tool_use',
            id: uuid,
            tool: {
              name: 'Command',
              command: envelope.command,
              ...(envelope.args !== undefined ? { args: envelope.args } : {}),
            },
          },
        ];
      case 'stdout': {
        const paired = parentUuid != null && parentUuid === this.#open ? parentUuid : uuid;
        this.#open = undefined;
        return [{ type: 'tool_result', tool_use_id: paired, content: envelope.text }];
      }
      case 'caveat':
        return [];
    }
  }
}

/** A `system` line carrying a local-command envelope, or undefined. */
function systemCommand(json: JsonObject): { envelope: LocalCommandEnvelope; uuid: string } | undefined {
  if (json.type !== 'system' || json.subtype !== 'local_command') return undefined;
  if (typeof json.uuid !== 'string' || typeof json.content !== 'string') return undefined;
  const envelope = parseLocalCommand(json.content);
  return envelope === undefined ? undefined : { envelope, uuid: json.uuid };
}

function entryToMessage(
  entry: ClaudeEntry,
  fallbackTs: string,
  where: string,
  warn: (m: string) => void,
  commands: LocalCommands,
): Message | undefined {
  const content = entry.message.content;
  const blocks: Block[] = [];
  const text = entry.type === 'user' ? envelopeText(content) : undefined;
  const envelope = text !== undefined ? parseLocalCommand(text) : undefined;
  if (envelope !== undefined) {
    blocks.push(...commands.blocks(envelope, entry.uuid, entry.parentUuid));
  } else if (typeof content === 'string') {
    if (content !== '') blocks.push({ type: 'text', text: content });
  } else {
    content.forEach((raw, i) => {
      const block = blockToCommon(raw as JsonObject, `${where} content[${i}]`, warn);
      if (block !== undefined) blocks.push(block);
    });
  }
  if (blocks.length === 0) return undefined;
  const message: Message = {
    role: entry.type,
    content: blocks,
    timestamp: normalizeTimestamp(entry.timestamp) ?? fallbackTs,
  };
  const m = entry.message;
  if (entry.type === 'assistant') {
    if (m.model !== undefined) message.model = m.model;
    if (typeof m.stop_reason === 'string') message.stop_reason = stopReasonFromString(m.stop_reason);
    const usage = usageToCommon(m.usage);
    if (usage !== undefined) message.usage = usage;
  }
  return message;
}

/**
 * The title a file gives itself, by Claude Code's precedence: the last
 * `custom-title` (the user's rename), then `agent-name`, then the last
 * `ai-title`, then the last `summary` whose `leafUuid` is a line of this
 * file. Fed every line in file order; `title` is undefined when none
 * applies (the first prompt is the caller's).
 */
class OwnTitle {
  #custom: string | undefined;
  #agent: string | undefined;
  #ai: string | undefined;
  readonly #summaries: { leaf: string | undefined; text: string }[] = [];
  readonly #uuids = new Set<string>();

  /** `only`: remember only these line uuids (the leaves a first pass found), not every line's. */
  constructor(readonly only?: ReadonlySet<string>) {}

  add(line: ClaudeLine): void {
    if (line.kind !== 'record') return;
    const json = line.json as JsonObject;
    if (typeof json.uuid === 'string' && (this.only === undefined || this.only.has(json.uuid)))
      this.#uuids.add(json.uuid);
    if (line.shape === 'summary') this.#summaries.push({ leaf: line.json.leafUuid, text: line.json.summary });
    else if (json.type === 'custom-title' && typeof json.customTitle === 'string')
      this.#custom = json.customTitle;
    else if (json.type === 'agent-name' && typeof json.agentName === 'string') this.#agent = json.agentName;
    else if (json.type === 'ai-title' && typeof json.aiTitle === 'string') this.#ai = json.aiTitle;
  }

  /** The summaries' leaves, when only they can give the title and the lines' uuids were not all kept. */
  get leavesToCheck(): ReadonlySet<string> | undefined {
    if (
      this.only === undefined ||
      [this.#custom, this.#agent, this.#ai].some((t) => t !== undefined && t !== '')
    )
      return undefined;
    const leaves = new Set(this.#summaries.flatMap((s) => (s.leaf !== undefined ? [s.leaf] : [])));
    return leaves.size > 0 ? leaves : undefined;
  }

  get title(): string | undefined {
    const summary = this.#summaries.findLast((s) => s.leaf !== undefined && this.#uuids.has(s.leaf))?.text;
    return [this.#custom, this.#agent, this.#ai, summary].find((t) => t !== undefined && t !== '');
  }
}

/** A message's time until the conversation's first time is known (see Conversation). */
const UNTIMED = '';

/**
 * Where a conversation's messages go: kept for `finish` (the default), or
 * handed on one by one as they are made (`emit`, each dated `untimedAs` when
 * the source gives it no time), or only counted (`count`).
 */
type MessageSink = { emit: (message: Message) => void; untimedAs: string } | 'count' | 'keep';

/**
 * Builds one conversation (the main one, or a sidechain) from its lines, fed
 * one by one in file order. A message the source gives no time takes the
 * context's, else the conversation's earliest, which is known only at the
 * end: such messages are dated in `finish`.
 */
class Conversation {
  readonly #ctx: WarningContext;
  readonly #sink: MessageSink;
  /** Messages made so far. */
  count = 0;
  readonly #source: string;
  #firstTs: string | undefined;
  readonly #meta: Meta = { id: '', timestamp: UNTIMED };
  readonly #messages: Message[] = [];
  readonly #untimed: Message[] = [];
  readonly #commands = new LocalCommands();
  #firstUserText: string | undefined;

  constructor(ctx: WarningContext, sink: MessageSink = 'keep') {
    this.#ctx = ctx;
    this.#sink = sink;
    this.#source = ctx.source ?? 'claude_code';
  }

  #push(message: Message): void {
    this.count += 1;
    const sink = this.#sink;
    if (sink === 'count') return;
    if (sink !== 'keep') {
      if (message.timestamp === UNTIMED) message.timestamp = sink.untimedAs;
      sink.emit(message);
      return;
    }
    if (message.timestamp === UNTIMED) this.#untimed.push(message);
    this.#messages.push(message);
  }

  add(line: ClaudeLine, index: number): void {
    if (line.kind !== 'record') return;
    const r: ClaudeRecord = line;
    const meta = this.#meta;
    if (r.shape === 'other') {
      const command = systemCommand(r.json);
      if (command === undefined) return;
      const blocks = this.#commands.blocks(
        command.envelope,
        command.uuid,
        typeof r.json.parentUuid === 'string' ? r.json.parentUuid : undefined,
      );
      const ts = typeof r.json.timestamp === 'string' ? normalizeTimestamp(r.json.timestamp) : undefined;
      if (blocks.length > 0) this.#push({ role: 'user', content: blocks, timestamp: ts ?? UNTIMED });
      return;
    }
    if (r.shape !== 'entry') return;
    const e = r.json;
    const ts = normalizeTimestamp(e.timestamp);
    if (ts !== undefined && (this.#firstTs === undefined || ts < this.#firstTs)) this.#firstTs = ts;
    if (meta.id === '' && e.sessionId) meta.id = e.sessionId;
    if (meta.cwd === undefined && e.cwd) meta.cwd = e.cwd;
    if (meta.git_branch === undefined && e.gitBranch) meta.git_branch = e.gitBranch;
    if (meta.cli_version === undefined && e.version) meta.cli_version = e.version;
    const warn = (message: string): void =>
      this.#ctx.onWarning?.({ source: this.#source, line: index + 1, message });
    const message = entryToMessage(e, UNTIMED, `line ${index + 1}`, warn, this.#commands);
    if (message === undefined) return;
    if (
      message.role === 'assistant' &&
      meta.model === undefined &&
      message.model &&
      message.model !== '<synthetic>'
    ) {
      meta.model = message.model;
    }
    if (this.#firstUserText === undefined && message.role === 'user' && e.isMeta !== true) {
      const text = message.content.find((b) => b.type === 'text');
      if (text !== undefined && !isHarnessText(text.text)) this.#firstUserText = text.text;
    }
    this.#push(message);
  }

  finish(): Transcript {
    const meta = this.#meta;
    const fallbackTs = this.#ctx.timestamp ?? this.#firstTs ?? new Date(0).toISOString();
    for (const m of this.#untimed) m.timestamp = fallbackTs;
    meta.timestamp = this.#firstTs ?? fallbackTs;
    if (meta.id === '') meta.id = this.#ctx.sessionId;
    const title = this.#firstUserText !== undefined ? titleFromText(this.#firstUserText) : undefined;
    if (title !== undefined && title !== '') meta.title = title;
    return { meta, messages: this.#messages };
  }
}

function conversationToCommon(
  records: readonly ClaudeLine[],
  indices: readonly number[],
  ctx: WarningContext,
): Transcript {
  const conversation = new Conversation(ctx);
  for (const i of indices) conversation.add(records[i]!, i);
  return conversation.finish();
}

/**
 * The main conversation of a file, fed every line in file order: every line
 * but those of inline sidechains, or, in a file with no conversation line
 * outside a sidechain (a subagent's own file), every line (sidechains.ts
 * splits a file the same way). Until a main conversation line comes, the
 * lines also go to a second conversation of every line, whose warnings wait
 * until it is known to be the one.
 */
class MainConversation {
  readonly #main: Conversation;
  #all: { conversation: Conversation; warnings: Warning[] } | undefined;
  readonly #title: OwnTitle;
  readonly #ctx: WarningContext;

  /** `count`: messages are counted, not kept, and the title remembers only what it needs (streamCommon). */
  constructor(ctx: WarningContext, sink: 'keep' | 'count' = 'keep') {
    this.#ctx = ctx;
    this.#main = new Conversation(ctx, sink);
    this.#title = new OwnTitle(sink === 'count' ? new Set() : undefined);
    const warnings: Warning[] = [];
    this.#all = {
      conversation: new Conversation({ ...ctx, onWarning: (w) => warnings.push(w) }, sink),
      warnings,
    };
  }

  add(line: ClaudeLine, index: number): void {
    this.#title.add(line);
    const sidechain = isSidechainRecord(line);
    if (!sidechain && line.kind === 'record' && line.shape === 'entry') this.#all = undefined;
    this.#all?.conversation.add(line, index);
    if (!sidechain) this.#main.add(line, index);
  }

  /** Whether the file has a conversation outside its sidechains (else every line is the main one). */
  get hasMain(): boolean {
    return this.#all === undefined;
  }

  /** How many messages the main conversation has. */
  get count(): number {
    return (this.#all?.conversation ?? this.#main).count;
  }

  /** The summaries' leaves a title may need checked (OwnTitle `leavesToCheck`). */
  get leavesToCheck(): ReadonlySet<string> | undefined {
    return this.#title.leavesToCheck;
  }

  /** `title`: the file's own title as a further pass found it (see leavesToCheck). */
  finish(title: string | undefined = this.#title.title): Transcript {
    const all = this.#all;
    if (all !== undefined) for (const w of all.warnings) this.#ctx.onWarning?.(w);
    const transcript = (all?.conversation ?? this.#main).finish();
    if (title !== undefined) transcript.meta.title = title;
    return transcript;
  }
}

const isSidechainRecord = (line: ClaudeLine): boolean =>
  line.kind === 'record' && (line.json as JsonObject).isSidechain === true;

/** The main conversation of a file: every line but those of inline sidechains. */
function toCommon(records: ClaudeLine[], ctx: WarningContext): Transcript {
  const conversation = new MainConversation(ctx);
  records.forEach((line, index) => conversation.add(line, index));
  return conversation.finish();
}

/**
 * `toCommon(claudeCodeText.parse(...).records)` for lines read one by one,
 * each dropped once read: the same transcript, the text layer's warnings
 * returned (in line order) and the codec's given to `ctx.onWarning`.
 */
export function readClaudeCommon(
  lines: LineSource,
  source: string,
  ctx: WarningContext,
): { transcript: Transcript; warnings: Warning[] } {
  const conversation = new MainConversation(ctx);
  let index = 0;
  const warnings = readJsonl(lines, source, classifyClaudeRecord, (line) => conversation.add(line, index++), {
    recoverGlued: hasStringType,
  });
  return { transcript: conversation.finish(), warnings };
}

/**
 * `readClaudeCommon` streamed (Harness `streamCommon`): a first pass counts the
 * messages and finds the meta, keeping no message and no line's uuid (a
 * second pass looks only for the uuids a title from a summary needs); each
 * `messages()` reads the lines again and makes the messages one at a time.
 */
export function streamClaudeCommon(
  lines: PulledLines,
  source: string,
  ctx: WarningContext,
): StreamedTranscript {
  const read = (into: Warning[]): Generator<ClaudeLine> =>
    pullJsonl(lines(), source, classifyClaudeRecord, into, { recoverGlued: hasStringType });
  const first = new MainConversation(ctx, 'count');
  const warnings: Warning[] = [];
  let index = 0;
  for (const line of read(warnings)) first.add(line, index++);
  const leaves = first.leavesToCheck;
  let title: string | undefined;
  if (leaves !== undefined) {
    const own = new OwnTitle(leaves);
    for (const line of read([])) own.add(line);
    title = own.title;
  }
  const { meta } = first.finish(title);
  const { count, hasMain } = first;
  const quiet: WarningContext = { ...ctx, onWarning: undefined };
  return {
    meta,
    count,
    warnings,
    *messages() {
      const made: Message[] = [];
      const conversation = new Conversation(quiet, {
        emit: (message) => made.push(message),
        untimedAs: ctx.timestamp ?? meta.timestamp,
      });
      let at = 0;
      for (const line of read([])) {
        if (!hasMain || !isSidechainRecord(line)) conversation.add(line, at);
        at += 1;
        if (made.length > 0) {
          yield* made;
          made.length = 0;
        }
      }
    },
  };
}

/**
 * One inline sidechain of a file as a session of its own: the subagent's
 * conversation, with the id `sidechainSessionId` gives it. undefined when the
 * file has no sidechain with that key.
 */
export function sidechainToCommon(
  records: ClaudeLine[],
  key: string,
  ctx: WarningContext,
): Transcript | undefined {
  const chain = splitSidechains(records).chains.find((c) => c.key === key);
  if (chain === undefined) return undefined;
  const transcript = conversationToCommon(records, chain.lines, ctx);
  transcript.meta.id = ctx.sessionId;
  if (chain.description !== undefined) transcript.meta.title = chain.description;
  return transcript;
}

// ── fromCommon ─────────────────────────────────────────────────────────

/** Namespace for record uuids, so fromCommon is a pure function of the transcript. */
const ENTRY_NS = '1b0e3f4c-7a2d-4c59-8e61-0d9a5b7c3e28';

/** Tool result content Claude accepts: a string or text/image blocks; Codex content items are translated. */
function resultContentToClaude(content: ToolOutput): string | JsonObject[] {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const out: JsonObject[] = [];
    for (const item of content) {
      if (!isJsonObject(item)) return JSON.stringify(content);
      if (item.type === 'text' && typeof item.text === 'string') out.push(item);
      else if (item.type === 'image' && isJsonObject(item.source)) out.push(item);
      else if ((item.type === 'input_text' || item.type === 'output_text') && typeof item.text === 'string') {
        out.push({ type: 'text', text: item.text });
      } else if (item.type === 'input_image' && typeof item.image_url === 'string') {
        const source = imageFromDataUrl(item.image_url);
        if (source === undefined) return JSON.stringify(content);
        out.push({ type: 'image', source: { ...source } });
      } else return JSON.stringify(content);
    }
    return out;
  }
  return JSON.stringify(content);
}

function blockToClaude(block: Block): JsonObject | undefined {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'thinking':
      // An unsigned empty thinking block (e.g. encrypted-only reasoning from Codex) carries nothing Claude can use.
      if (block.text === '' && block.signature === undefined) return undefined;
      return {
        type: 'thinking',
        thinking: block.text,
        ...(block.signature !== undefined ? { signature: block.signature } : {}),
      };
    case 'tool_use': {
      const { name, input } = commonToolToClaude(block.tool);
      return { type: 'tool_use', id: block.id, name: apiSafeName(name), input };
    }
    case 'tool_result':
      return {
        type: 'tool_result',
        tool_use_id: block.tool_use_id,
        content: resultContentToClaude(block.content),
        ...(block.is_error === true ? { is_error: true } : {}),
      };
    case 'image':
      return {
        type: 'image',
        source: { type: block.source.type, media_type: block.source.media_type, data: block.source.data },
      };
    case 'artifact':
      return { type: 'text', text: artifactText(block.artifact) };
  }
}

function usageToClaude(u: Usage | undefined): JsonObject {
  if (u === undefined) return { input_tokens: 0, output_tokens: 0 };
  return {
    input_tokens: u.input_tokens,
    output_tokens: u.output_tokens,
    ...(u.cache_read_input_tokens !== undefined
      ? { cache_read_input_tokens: u.cache_read_input_tokens }
      : {}),
    ...(u.cache_creation_input_tokens !== undefined
      ? { cache_creation_input_tokens: u.cache_creation_input_tokens }
      : {}),
  };
}

/** Ids from other harnesses may hold characters the Anthropic API refuses. */
function withApiSafeIds(t: Transcript): Transcript {
  const unsafe = (id: string): boolean => apiSafeId(id) !== id;
  const needs = t.messages.some((m) =>
    m.content.some(
      (b) => (b.type === 'tool_use' && unsafe(b.id)) || (b.type === 'tool_result' && unsafe(b.tool_use_id)),
    ),
  );
  if (!needs) return t;
  return {
    meta: t.meta,
    messages: t.messages.map((m) => ({
      ...m,
      content: m.content.map((b): Block => {
        if (b.type === 'tool_use') return { ...b, id: apiSafeId(b.id) };
        if (b.type === 'tool_result') return { ...b, tool_use_id: apiSafeId(b.tool_use_id) };
        return b;
      }),
    })),
  };
}

/** How a local-command message is written: the command's user line, or its output's system line. */
type LocalLine =
  | { kind: 'command'; id: string; command: string; args?: string }
  | { kind: 'stdout'; id: string; text: string };

/**
 * The user messages that are local commands (one `Command` call) or their
 * output (one result for such a call), each replaced by a stand-in message
 * without tool blocks, so tool-pairing repair, which is for what the API
 * sees, leaves them alone: Claude Code writes them as markup, never as tool
 * blocks. A result for no call at all (output read without its command) is
 * an orphan like any other, and repair makes it text.
 */
function standInLocalCommands(t: Transcript): { transcript: Transcript; local: Map<Message, LocalLine> } {
  const local = new Map<Message, LocalLine>();
  const commands = new Set<string>();
  const messages = t.messages.map((m) => {
    const only = m.content.length === 1 && m.role === 'user' ? m.content[0]! : undefined;
    let spec: LocalLine | undefined;
    if (only?.type === 'tool_use' && only.tool.name === 'Command') {
      commands.add(only.id);
      spec = {
        kind: 'command',
        id: only.id,
        command: only.tool.command,
        ...(only.tool.args !== undefined ? { args: only.tool.args } : {}),
      };
    } else if (only?.type === 'tool_result' && commands.has(only.tool_use_id)) {
      const text = typeof only.content === 'string' ? only.content : JSON.stringify(only.content);
      spec = { kind: 'stdout', id: only.tool_use_id, text };
    }
    if (spec === undefined) return m;
    const standIn: Message = { role: 'user', content: [{ type: 'text', text: '' }], timestamp: m.timestamp };
    local.set(standIn, spec);
    return standIn;
  });
  return { transcript: local.size === 0 ? t : { meta: t.meta, messages }, local };
}

function fromCommon(transcript: Transcript): ClaudeLine[] {
  const { transcript: withStandIns, local } = standInLocalCommands(withApiSafeIds(transcript));
  const t = repairToolPairing(withStandIns);
  const meta = t.meta;
  const sessionId = sessionUuid(meta.id);
  const envelope: JsonObject = {
    isSidechain: false,
    userType: 'external',
    ...(meta.cwd !== undefined ? { cwd: meta.cwd } : {}),
    sessionId,
    version: meta.cli_version ?? DEFAULT_CLAUDE_VERSION,
    ...(meta.git_branch !== undefined ? { gitBranch: meta.git_branch } : {}),
  };
  const lines: ClaudeLine[] = [];
  let parentUuid: string | null = null;
  /** The last entry line: a summary's leafUuid must name one. */
  let leaf: string | undefined;
  /** Command id -> the uuid of the line it was written on, for its output's parentUuid. */
  const commandLines = new Map<string, string>();
  t.messages.forEach((m, i) => {
    let uuid = uuidV5(ENTRY_NS, `${sessionId}:${i}`);
    const spec = local.get(m);
    if (spec?.kind === 'command') {
      // The call's id comes back as the line's uuid, so a uuid id is kept.
      if (isUuid(spec.id) && !commandLines.has(spec.id)) uuid = spec.id;
      commandLines.set(spec.id, uuid);
      const json = {
        parentUuid,
        ...envelope,
        type: 'user',
        message: { role: 'user', content: commandBody(spec.command, spec.args) },
        uuid,
        timestamp: m.timestamp,
      } as ClaudeEntry;
      lines.push(builtLine<ClaudeRecord>({ shape: 'entry', json }));
      parentUuid = leaf = uuid;
      return;
    }
    if (spec?.kind === 'stdout') {
      // Output points at its command (an unpaired one at the line before it), as Claude Code links them.
      const json: JsonObject = {
        parentUuid: commandLines.get(spec.id) ?? parentUuid,
        ...envelope,
        type: 'system',
        subtype: 'local_command',
        content: stdoutBody(spec.text),
        level: 'info',
        isMeta: false,
        uuid,
        timestamp: m.timestamp,
      };
      lines.push(builtLine<ClaudeRecord>({ shape: 'other', json }));
      parentUuid = uuid;
      return;
    }
    const blocks = m.content.map(blockToClaude).filter((b): b is JsonObject => b !== undefined);
    if (blocks.length === 0) return;
    let message: JsonObject;
    if (m.role === 'user') {
      const only = blocks.length === 1 ? blocks[0] : undefined;
      // Claude Code writes a typed prompt as a bare string.
      message = { role: 'user', content: only?.type === 'text' ? (only.text as string) : blocks };
    } else {
      message = {
        id: `msg_${uuid.replace(/-/g, '')}`,
        type: 'message',
        role: 'assistant',
        ...(m.model !== undefined ? { model: m.model } : {}),
        content: blocks,
        stop_reason: m.stop_reason !== undefined ? stopReasonToString(m.stop_reason) : null,
        stop_sequence: null,
        usage: usageToClaude(m.usage),
      };
    }
    const json = {
      parentUuid,
      ...envelope,
      type: m.role,
      message,
      uuid,
      timestamp: m.timestamp,
    } as ClaudeEntry;
    lines.push(builtLine<ClaudeRecord>({ shape: 'entry', json }));
    parentUuid = leaf = uuid;
  });
  if (meta.title !== undefined && meta.title !== '' && leaf !== undefined) {
    // A leading summary titles the session in `claude --resume`; its leafUuid must name a real record.
    lines.unshift(
      builtLine<ClaudeRecord>({
        shape: 'summary',
        json: { type: 'summary', summary: meta.title, leafUuid: leaf },
      }),
    );
  }
  return lines;
}

export const claudeCodeCodec: WarningCodec<ClaudeLine[]> = { toCommon, fromCommon };
