/**
 * Grok CLI session records <-> Common. The conversation is read from the
 * model log; the display log gives what the model log lacks: the times of
 * prompts, replies, calls and results, the images of a prompt (the model
 * log holds only text), which tool calls failed, and each turn's stop
 * reason. Grok's `<user_info>` preamble is context, not a prompt (its
 * `Workspace Path:` is the folder when the summary names none).
 *
 * fromCommon writes all three files, the display log included: a session
 * without one is one Grok does not show.
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
import { builtLine } from '../jsonl.ts';
import { repairToolPairing } from '../orphans.ts';
import { sessionUuid } from '../session-id.ts';
import type { WarningCodec, WarningContext } from '../types.ts';
import type { GrokLine, GrokRecord, GrokSession } from './records.ts';
import { commonToolToGrok, grokToolToCommon } from './tools.ts';
import { obj, parseArguments, str } from '../native-values.ts';

const records = (lines: GrokLine[]): JsonObject[] =>
  lines.flatMap((l) => (l.kind === 'record' && l.shape === 'line' ? [l.json] : []));

/** What the display log knows. */
interface Display {
  prompts: { ts?: string; images: ImageSource[] }[];
  agentTs: string[];
  thoughtTs: string[];
  callTs: Map<string, string>;
  resultTs: Map<string, string>;
  failed: Set<string>;
  stops: StopReason[];
}

function readDisplay(lines: JsonObject[]): Display {
  const d: Display = {
    prompts: [],
    agentTs: [],
    thoughtTs: [],
    callTs: new Map(),
    resultTs: new Map(),
    failed: new Set(),
    stops: [],
  };
  for (const line of lines) {
    const params = obj(line.params);
    const update = obj(params.update);
    const at = obj(params._meta).agentTimestampMs;
    const ts =
      typeof at === 'number'
        ? new Date(at).toISOString()
        : typeof line.timestamp === 'number'
          ? new Date(line.timestamp * 1000).toISOString()
          : undefined;
    if (ts === undefined || Number.isNaN(Date.parse(ts))) continue;
    const callId = str(update, 'toolCallId');
    switch (str(update, 'sessionUpdate') ?? '') {
      case 'user_message_chunk': {
        const content = obj(update.content);
        const image = content.type === 'image';
        const index = obj(update._meta).promptIndex;
        // The index is untrusted: one no real log can reach (a prompt takes a line at least) is ignored.
        const slot =
          typeof index === 'number' && Number.isSafeInteger(index) && index >= 0 && index <= lines.length
            ? index
            : Math.max(0, d.prompts.length - (image ? 1 : 0));
        while (d.prompts.length <= slot) d.prompts.push({ images: [] });
        const prompt = d.prompts[slot]!;
        prompt.ts ??= ts;
        const data = str(content, 'data');
        const mime = str(content, 'mimeType');
        if (image && data !== undefined && mime !== undefined)
          prompt.images.push({ type: 'base64', media_type: mime, data });
        break;
      }
      case 'agent_message_chunk':
        d.agentTs.push(ts);
        break;
      case 'agent_thought_chunk':
        d.thoughtTs.push(ts);
        break;
      case 'tool_call':
        if (callId !== undefined && !d.callTs.has(callId)) d.callTs.set(callId, ts);
        break;
      case 'tool_call_update': {
        const status = str(update, 'status');
        if (callId !== undefined && (status === 'completed' || status === 'failed')) {
          d.resultTs.set(callId, ts);
          if (status === 'failed') d.failed.add(callId);
        }
        break;
      }
      case 'turn_completed': {
        const reason = str(update, 'stop_reason') ?? 'end_turn';
        d.stops.push(reason === 'cancelled' ? 'aborted' : stopReasonFromString(reason));
        break;
      }
      default:
        break;
    }
  }
  return d;
}

function texts(content: JsonValue | undefined): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  return content.flatMap((p) => (isJsonObject(p) && typeof p.text === 'string' ? [p.text] : []));
}

function unwrapQuery(text: string): string {
  const t = text.trim();
  return t.startsWith('<user_query>') && t.endsWith('</user_query>') ? t.slice(12, -13).trim() : text;
}

const IMAGE_PLACEHOLDER = '[image]';

function metaOf(session: GrokSession, ctx: WarningContext): Meta {
  const summary = session.summary?.kind === 'object' ? session.summary.json : {};
  const info = obj(summary.info);
  const meta: Meta = {
    id: str(info, 'id') ?? ctx.sessionId,
    timestamp: normalizeTimestamp(str(summary, 'created_at')) ?? ctx.timestamp ?? new Date(0).toISOString(),
  };
  const cwd = str(info, 'cwd');
  if (cwd) meta.cwd = cwd;
  const title = str(summary, 'generated_title') || str(summary, 'session_summary');
  if (title) meta.title = title;
  const model = str(summary, 'current_model_id');
  if (model) meta.model = model;
  const branch = str(summary, 'head_branch');
  if (branch) meta.git_branch = branch;
  return meta;
}

function toCommon(session: GrokSession, ctx: WarningContext): Transcript {
  const meta = metaOf(session, ctx);
  const display = readDisplay(records(session.updates));
  const messages: Message[] = [];
  let last = meta.timestamp;
  let prompt = 0;
  let agent = 0;
  let thought = 0;
  let turnStart = -1;
  let firstPrompt: string | undefined;
  const closeTurn = (): void => {
    if (turnStart < 0) return;
    const stop = display.stops[prompt - 1];
    const end = messages.slice(turnStart).findLast((m) => m.role === 'assistant');
    if (stop !== undefined && end !== undefined) end.stop_reason = stop;
  };
  for (const line of records(session.chat)) {
    switch (str(line, 'type') ?? '') {
      case 'user': {
        const text = texts(line.content).join('\n\n');
        if (text.includes('<user_info>')) {
          meta.cwd ??= /Workspace Path: (.+)/.exec(text)?.[1]?.trim();
          if (meta.cwd === undefined) delete meta.cwd;
          break;
        }
        closeTurn();
        const shown = display.prompts[prompt] ?? { images: [] };
        prompt++;
        last = shown.ts ?? last;
        const content: Block[] = [];
        const query = unwrapQuery(text);
        if (query.trim() !== '' && !(query === IMAGE_PLACEHOLDER && shown.images.length > 0))
          content.push({ type: 'text', text: query });
        for (const source of shown.images) content.push({ type: 'image', source });
        turnStart = messages.length;
        if (content.length > 0) messages.push({ role: 'user', content, timestamp: last });
        firstPrompt ??= query;
        break;
      }
      case 'assistant': {
        const content: Block[] = [];
        const text = texts(line.content).join('\n\n');
        if (text.trim() !== '') content.push({ type: 'text', text });
        const calls = Array.isArray(line.tool_calls) ? line.tool_calls.filter(isJsonObject) : [];
        for (const call of calls) {
          const id = str(call, 'id');
          if (id === undefined) continue;
          content.push({
            type: 'tool_use',
            id,
            tool: grokToolToCommon(str(call, 'name') ?? 'tool', parseArguments(call.arguments)),
          });
        }
        if (content.length === 0) break;
        const firstCall = content.find((b) => b.type === 'tool_use');
        last =
          (text.trim() !== '' ? display.agentTs[agent++] : undefined) ??
          (firstCall?.type === 'tool_use' ? display.callTs.get(firstCall.id) : undefined) ??
          last;
        const message: Message = { role: 'assistant', content, timestamp: last };
        const model = str(line, 'model_id');
        if (model) message.model = model;
        messages.push(message);
        break;
      }
      case 'reasoning': {
        const summary = Array.isArray(line.summary) ? line.summary : [];
        const text = summary
          .flatMap((p) =>
            isJsonObject(p) && p.type === 'summary_text' && typeof p.text === 'string' ? [p.text] : [],
          )
          .join('\n\n');
        const encrypted = str(line, 'encrypted_content');
        if (text === '' && encrypted === undefined) break;
        last = display.thoughtTs[thought++] ?? last;
        messages.push({
          role: 'assistant',
          timestamp: last,
          content: [{ type: 'thinking', text, ...(encrypted !== undefined ? { encrypted } : {}) }],
        });
        break;
      }
      case 'tool_result': {
        const id = str(line, 'tool_call_id');
        if (id === undefined) break;
        last = display.resultTs.get(id) ?? last;
        const content: ToolOutput = line.content ?? '';
        messages.push({
          role: 'user',
          timestamp: last,
          content: [
            {
              type: 'tool_result',
              tool_use_id: id,
              content,
              ...(display.failed.has(id) ? { is_error: true } : {}),
            },
          ],
        });
        break;
      }
      default:
        // `system` (the injected prompt) and kinds of later versions are not conversation.
        break;
    }
  }
  closeTurn();
  if (meta.title === undefined && firstPrompt !== undefined) {
    const title = titleFromText(firstPrompt);
    if (title !== undefined) meta.title = title;
  }
  meta.model ??= messages.findLast((m) => m.model !== undefined)?.model;
  if (meta.model === undefined) delete meta.model;
  return { meta, messages };
}

// ── fromCommon ─────────────────────────────────────────────────────────

const ID_NS = '9d4a7c21-3e58-4b0f-a6d2-8c1e5f7b0a93';

function outputText(content: ToolOutput): string {
  if (typeof content === 'string') return content;
  if (
    Array.isArray(content) &&
    content.every((b) => isJsonObject(b) && b.type === 'text' && typeof b.text === 'string')
  )
    return content.map((b) => (b as { text: string }).text).join('\n\n');
  return JSON.stringify(content);
}

export function grokLines(transcript: Transcript): GrokSession {
  const t = repairToolPairing(transcript);
  const id = sessionUuid(t.meta.id);
  const line = (json: JsonObject): GrokLine => builtLine<GrokRecord>({ shape: 'line', json });
  const chat: GrokLine[] = [];
  const updates: GrokLine[] = [];
  let prompt = 0;
  let open = false;
  let lastStop: StopReason | undefined;
  const update = (ts: string, method: string, fields: JsonObject): void => {
    const at = Date.parse(ts);
    updates.push(
      line({
        timestamp: Math.floor(at / 1000),
        method,
        params: {
          sessionId: id,
          update: fields,
          _meta: { eventId: `${id}-${updates.length}`, agentTimestampMs: at },
        },
      }),
    );
  };
  const endTurn = (ts: string): void => {
    if (!open) return;
    update(ts, '_x.ai/session/update', {
      sessionUpdate: 'turn_completed',
      prompt_id: uuidV5(ID_NS, `${id}:prompt:${prompt}`),
      stop_reason:
        lastStop === undefined
          ? 'end_turn'
          : lastStop === 'aborted'
            ? 'cancelled'
            : stopReasonToString(lastStop),
    });
    prompt++;
    open = false;
  };
  for (const m of t.messages) {
    if (m.role === 'user') {
      const words: string[] = [];
      const images: ImageSource[] = [];
      for (const b of m.content) {
        if (b.type === 'text') words.push(b.text);
        else if (b.type === 'artifact') words.push(artifactText(b.artifact));
        else if (b.type === 'image') images.push(b.source);
        else if (b.type === 'tool_result') {
          const text = outputText(b.content);
          chat.push(line({ type: 'tool_result', tool_call_id: b.tool_use_id, content: text }));
          update(m.timestamp, 'session/update', {
            sessionUpdate: 'tool_call_update',
            toolCallId: b.tool_use_id,
            status: b.is_error === true ? 'failed' : 'completed',
            content: [{ type: 'content', content: { type: 'text', text } }],
          });
        }
      }
      if (words.length === 0 && images.length === 0) continue;
      endTurn(m.timestamp);
      const text = words.length > 0 ? words.join('\n\n') : IMAGE_PLACEHOLDER;
      chat.push(
        line({ type: 'user', content: [{ type: 'text', text: `<user_query>\n${text}\n</user_query>` }] }),
      );
      const meta: JsonObject = {
        promptIndex: prompt,
        ...(t.meta.model !== undefined ? { modelId: t.meta.model } : {}),
      };
      update(m.timestamp, 'session/update', {
        sessionUpdate: 'user_message_chunk',
        content: { type: 'text', text },
        _meta: meta,
      });
      for (const image of images)
        update(m.timestamp, 'session/update', {
          sessionUpdate: 'user_message_chunk',
          content: { type: 'image', data: image.data, mimeType: image.media_type },
          _meta: meta,
        });
      open = true;
      lastStop = undefined;
      continue;
    }
    const words: string[] = [];
    const calls: JsonObject[] = [];
    for (const b of m.content) {
      if (b.type === 'thinking') {
        chat.push(
          line({
            type: 'reasoning',
            summary: b.text === '' ? [] : [{ type: 'summary_text', text: b.text }],
            ...(b.encrypted !== undefined ? { encrypted_content: b.encrypted } : {}),
          }),
        );
        if (b.text !== '')
          update(m.timestamp, 'session/update', {
            sessionUpdate: 'agent_thought_chunk',
            content: { type: 'text', text: b.text },
          });
      } else if (b.type === 'text') words.push(b.text);
      else if (b.type === 'artifact') words.push(artifactText(b.artifact));
      else if (b.type === 'tool_use') {
        const call = commonToolToGrok(b.tool);
        const name = apiSafeName(call.name);
        calls.push({
          id: b.id,
          name,
          arguments: typeof call.args === 'string' ? call.args : JSON.stringify(call.args),
        });
      }
    }
    if (words.length === 0 && calls.length === 0) continue;
    const text = words.join('\n\n');
    chat.push(
      line({
        type: 'assistant',
        content: text,
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
        ...(m.model !== undefined ? { model_id: m.model } : {}),
      }),
    );
    if (text !== '')
      update(m.timestamp, 'session/update', {
        sessionUpdate: 'agent_message_chunk',
        content: { type: 'text', text },
      });
    for (const call of calls)
      update(m.timestamp, 'session/update', {
        sessionUpdate: 'tool_call',
        toolCallId: call.id ?? null,
        title: call.name ?? null,
        rawInput: parseArguments(call.arguments),
      });
    lastStop = m.stop_reason;
  }
  endTurn(t.messages.at(-1)?.timestamp ?? t.meta.timestamp);
  const summary: JsonObject = {
    info: { id, cwd: t.meta.cwd ?? '' },
    session_summary: t.meta.title ?? '',
    generated_title: t.meta.title ?? '',
    created_at: t.meta.timestamp,
    updated_at: t.messages.at(-1)?.timestamp ?? t.meta.timestamp,
    num_messages: updates.length,
    num_chat_messages: chat.length,
    current_model_id: t.meta.model ?? '',
    chat_format_version: 1,
    ...(t.meta.git_branch !== undefined ? { head_branch: t.meta.git_branch } : {}),
  };
  return { chat, updates, summary: builtDocument(summary) };
}

export const grokCodec: WarningCodec<GrokSession> = { toCommon, fromCommon: grokLines };
