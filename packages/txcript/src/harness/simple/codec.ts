/**
 * Simple ⇄ Common. Simple is Common's own JSON form, so `fromCommon` is the
 * exact serialisation and `toCommon` only fills defaults: timestamps, ids,
 * and tool_use ↔ tool_result pairing.
 */
import { randomUUID } from 'node:crypto';
import type { Block, JsonObject, Message, Meta, Transcript } from '../../model/common.ts';
import { toolFromCanonical, toolToCanonical } from '../../model/tool.ts';
import { uuidV5 } from '../../model/uuid.ts';
import { PendingCalls } from '../pending-calls.ts';
import type { Codec, CodecContext } from '../types.ts';
import { type SimpleBlock, readMessage, readMeta } from './schema.ts';
import { renderSimplePieces, type SimpleDocument } from './text.ts';
import { formatUtc, toUtcRfc3339 } from './timestamp.ts';

/** Namespace of the synthetic ids given to id-less tool calls (UUIDv5, key `{sessionId}:{i}:{j}`). */
export const SIMPLE_TOOL_ID_NAMESPACE = '74786372-6970-742d-7369-6d706c652121';

/** The id a tool_use (or an orphan tool_result) at message i, block j gets when the document gives none. */
export function syntheticToolId(sessionId: string, i: number, j: number): string {
  return uuidV5(SIMPLE_TOOL_ID_NAMESPACE, `${sessionId}:${i}:${j}`);
}

export interface SimpleCodecOptions {
  /** The clock for documents with no timestamp at all ("stamped with parse time"). */
  now?: () => Date;
}

function toBlock(
  b: SimpleBlock,
  id: () => string,
  pairResult: (explicit: string | undefined) => string,
): Block {
  switch (b.type) {
    case 'text':
      return { type: 'text', text: b.text };
    case 'thinking':
      return {
        type: 'thinking',
        text: b.text,
        ...(b.signature !== undefined && { signature: b.signature }),
        ...(b.encrypted !== undefined && { encrypted: b.encrypted }),
      };
    case 'tool_use':
      return { type: 'tool_use', id: b.id ?? id(), tool: toolFromCanonical(b.name, b.input ?? null) };
    case 'tool_result':
      return {
        type: 'tool_result',
        tool_use_id: pairResult(b.tool_use_id),
        content: b.content ?? null,
        ...(b.is_error !== undefined && { is_error: b.is_error }),
      };
    case 'image':
      return {
        type: 'image',
        source: { type: b.source.type, media_type: b.source.media_type, data: b.source.data },
      };
    case 'artifact':
      return { type: 'artifact', artifact: b.artifact };
  }
}

export function simpleToCommon(
  doc: SimpleDocument,
  ctx: CodecContext,
  options: SimpleCodecOptions = {},
): Transcript {
  const { values } = readMeta(doc);
  const id = values.id ?? ctx.sessionId;
  const timestamp =
    (values.timestamp !== undefined ? toUtcRfc3339(values.timestamp) : undefined) ??
    (ctx.timestamp !== undefined ? toUtcRfc3339(ctx.timestamp) : undefined) ??
    formatUtc((options.now ?? (() => new Date()))());
  const meta: Meta = {
    id,
    timestamp,
    ...(values.cwd !== undefined && { cwd: values.cwd }),
    ...(values.git_branch !== undefined && { git_branch: values.git_branch }),
    ...(values.title !== undefined && { title: values.title }),
    ...(values.cli_version !== undefined && { cli_version: values.cli_version }),
    ...(values.model !== undefined && { model: values.model }),
  };

  // Calls not yet answered, oldest first: an id-less result takes the head (FIFO, any tool name).
  const pending = new PendingCalls();
  const messages: Message[] = [];
  let previous = timestamp;
  doc.messages.forEach((raw, i) => {
    const read = readMessage(raw, `messages[${i}]`);
    if (!read.ok) return;
    const content: Block[] = [];
    read.blocks.forEach((b, j) => {
      if (!b.ok) return;
      const block = toBlock(
        b.block,
        () => syntheticToolId(id, i, j),
        (explicit) => {
          if (explicit !== undefined) {
            pending.answer(explicit);
            return explicit;
          }
          // No preceding unanswered call: an orphan, with its own position's id.
          return pending.take('') ?? syntheticToolId(id, i, j);
        },
      );
      if (block.type === 'tool_use') pending.add('', block.id);
      content.push(block);
    });
    // A message with no timestamp inherits the previous message's, or the session's.
    const ts = (read.timestamp !== undefined ? toUtcRfc3339(read.timestamp) : undefined) ?? previous;
    previous = ts;
    messages.push({
      role: read.role,
      content,
      timestamp: ts,
      ...(read.model !== undefined && { model: read.model }),
      ...(read.stop_reason !== undefined && { stop_reason: read.stop_reason }),
      ...(read.usage !== undefined && { usage: read.usage }),
    });
  });
  return { meta, messages };
}

function blockToSimple(block: Block): JsonObject {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'thinking':
      return {
        type: 'thinking',
        text: block.text,
        ...(block.signature !== undefined && { signature: block.signature }),
        ...(block.encrypted !== undefined && { encrypted: block.encrypted }),
      };
    case 'tool_use': {
      const { name, input } = toolToCanonical(block.tool);
      // `input` defaults to null on read, so a null input is written by leaving the key out.
      return { type: 'tool_use', id: block.id, name, ...(input !== null && { input }) };
    }
    case 'tool_result':
      return {
        type: 'tool_result',
        tool_use_id: block.tool_use_id,
        ...(block.content !== null && { content: block.content }),
        ...(block.is_error !== undefined && { is_error: block.is_error }),
      };
    case 'image':
      return { type: 'image', source: { ...block.source } };
    case 'artifact':
      return { type: 'artifact', artifact: block.artifact as unknown as JsonObject };
  }
}

function messageToSimple(m: Message): JsonObject {
  return {
    role: m.role,
    content: m.content.map(blockToSimple),
    timestamp: m.timestamp,
    ...(m.model !== undefined && { model: m.model }),
    ...(m.stop_reason !== undefined && { stop_reason: m.stop_reason }),
    ...(m.usage !== undefined && { usage: { ...m.usage } }),
  };
}

/** Common's exact JSON form: keys in a fixed order, absent ones left out (never null). */
export function commonToSimple(t: Transcript): SimpleDocument {
  return { ...simpleHead(t.meta), messages: t.messages.map(messageToSimple) };
}

/**
 * The text of commonToSimple(t) in pieces, each message made when its piece
 * is asked for (and, from an iterable that makes them so, read only then).
 */
export function commonToSimplePieces(t: { meta: Meta; messages: Iterable<Message> }): Iterable<string> {
  return renderSimplePieces(simpleHead(t.meta), mapLazily(t.messages, messageToSimple));
}

function* mapLazily<T, U>(items: Iterable<T>, f: (item: T) => U): Generator<U> {
  for (const item of items) yield f(item);
}

/** A Simple document's keys before `messages`, from the meta. */
function simpleHead(meta: Meta): JsonObject {
  return {
    id: meta.id,
    timestamp: meta.timestamp,
    ...(meta.cwd !== undefined && { cwd: meta.cwd }),
    ...(meta.git_branch !== undefined && { git_branch: meta.git_branch }),
    ...(meta.title !== undefined && { title: meta.title }),
    ...(meta.cli_version !== undefined && { cli_version: meta.cli_version }),
    ...(meta.model !== undefined && { model: meta.model }),
  };
}

export function createSimpleCodec(options: SimpleCodecOptions = {}): Codec<SimpleDocument> {
  return {
    toCommon: (records, ctx) => simpleToCommon(records, ctx, options),
    fromCommon: commonToSimple,
  };
}

/**
 * A session id for a document that has none: the file's name without its
 * extension, or a fresh UUID when the document came from stdin.
 */
export function sessionIdForFile(file: string | undefined): string {
  if (file === undefined || file === '-' || file === '') return randomUUID();
  const base = file.split(/[\\/]/).pop() ?? file;
  const stem = base.replace(/\.[^.]*$/, '');
  return stem === '' ? base : stem;
}
