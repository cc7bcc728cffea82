/**
 * Hermes Agent export <-> Common (docs/formats/hermes.md).
 *
 * Message rows are OpenAI chat messages: `user` (text, or content parts with
 * `image_url` data URLs), `assistant` (`content`, `reasoning_content`,
 * opaque reasoning items, `tool_calls` with JSON `arguments`,
 * `finish_reason`) and `tool` (`tool_call_id`, `content`). Other roles
 * (`system`, `session_meta`, …) are bookkeeping; rows with `active` 0 were
 * rewound away. Times are seconds since the epoch, with a fraction.
 */
import type {
  Block,
  JsonObject,
  JsonValue,
  Message,
  Meta,
  StopReason,
  Transcript,
} from '../../model/common.ts';
import { isJsonObject } from '../../model/json.ts';
import { uuidV5 } from '../../model/uuid.ts';
import { artifactText, imageFromDataUrl, imageToDataUrl, titleFromText } from '../common-values.ts';
import { builtDocument } from '../json-document.ts';
import { nonEmpty, parseArguments, secondsTime, str } from '../native-values.ts';
import { repairToolPairing } from '../orphans.ts';
import type { WarningCodec, WarningContext } from '../types.ts';
import type { HermesExport } from './records.ts';
import { commonToolToHermes, hermesToolToCommon } from './tools.ts';

/** Namespace of call ids minted for calls without one (fixed, random). */
const NS = '9d3f1b6e-2a47-4c8e-b5d0-6e1f7a2c9b34';

const toSeconds = (iso: string): number => {
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? ms / 1000 : 0;
};

const STOPS: Record<string, StopReason> = {
  stop: 'end_turn',
  end_turn: 'end_turn',
  tool_calls: 'tool_use',
  tool_use: 'tool_use',
  length: 'max_tokens',
  max_tokens: 'max_tokens',
  stop_sequence: 'stop_sequence',
  aborted: 'aborted',
  cancelled: 'aborted',
  error: 'error',
};

function finishReason(r: StopReason | undefined, hasCalls: boolean): string | undefined {
  if (r === undefined) return undefined;
  if (typeof r === 'object') return r.other;
  const names: Record<string, string> = {
    end_turn: 'stop',
    tool_use: 'tool_calls',
    max_tokens: 'length',
    stop_sequence: 'stop_sequence',
    aborted: 'aborted',
    error: 'error',
  };
  return r === 'end_turn' && hasCalls ? 'tool_calls' : names[r];
}

const valueText = (v: JsonValue): string => (typeof v === 'string' ? v : JSON.stringify(v));

function contentBlocks(content: JsonValue | undefined): Block[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return content.trim() === '' ? [] : [{ type: 'text', text: content }];
  const parts = Array.isArray(content) ? content : [content];
  return parts.flatMap((p): Block[] => {
    if (isJsonObject(p) && p.type === 'text' && typeof p.text === 'string')
      return [{ type: 'text', text: p.text }];
    if (isJsonObject(p) && p.type === 'image_url' && isJsonObject(p.image_url)) {
      const image = imageFromDataUrl(str(p.image_url, 'url') ?? '');
      if (image !== undefined) return [{ type: 'image', source: image }];
    }
    return [{ type: 'text', text: valueText(p) }];
  });
}

/** Hermes marks a failed call in its result JSON, or denies it. */
function resultIsError(row: JsonObject, content: JsonValue | undefined): boolean {
  if (row.effect_disposition === 'denied') return true;
  const v = typeof content === 'string' ? parseArguments(content) : content;
  if (!isJsonObject(v)) return false;
  return (
    v.success === false ||
    (typeof v.exit_code === 'number' && v.exit_code !== 0) ||
    (v.error !== undefined && v.error !== null)
  );
}

function toCommon(records: HermesExport, ctx: WarningContext): Transcript {
  const source = ctx.source ?? ctx.sessionId;
  const body = records.kind === 'object' ? records.json : {};
  const start = secondsTime(body.started_at) ?? ctx.timestamp ?? new Date(0).toISOString();
  const id = nonEmpty(body.id) ?? ctx.sessionId;
  const model = nonEmpty(body.model);
  const meta: Meta = { id, timestamp: start };
  for (const k of ['cwd', 'git_branch', 'title'] as const) {
    const v = nonEmpty(body[k]);
    if (v !== undefined) meta[k] = v;
  }
  if (model !== undefined) meta.model = model;
  const messages: Message[] = [];
  let last = start;
  const rows = Array.isArray(body.messages) ? body.messages : [];
  rows.forEach((row, n) => {
    if (!isJsonObject(row) || row.active === 0) return;
    const at = secondsTime(row.timestamp);
    if (at === undefined) ctx.untimed?.add(messages.length);
    const timestamp = at ?? last;
    last = timestamp;
    if (row.role === 'user') {
      const content = contentBlocks(row.content);
      if (content.length > 0) messages.push({ role: 'user', content, timestamp });
    } else if (row.role === 'assistant') {
      const content: Block[] = [];
      const reasoning = [row.reasoning_content, row.reasoning].map((v) =>
        v === undefined || v === null ? '' : valueText(v),
      );
      const text = reasoning.find((r) => r !== '') ?? '';
      const opaque = [row.codex_reasoning_items, row.reasoning_details].find(
        (v) => v !== undefined && v !== null,
      );
      if (text.trim() !== '' || opaque !== undefined)
        content.push({
          type: 'thinking',
          text,
          ...(opaque !== undefined ? { encrypted: valueText(opaque) } : {}),
        });
      content.push(...contentBlocks(row.content));
      let calls = row.tool_calls;
      if (typeof calls === 'string') {
        const parsed = parseArguments(calls);
        if (!Array.isArray(parsed)) {
          ctx.onWarning?.({
            source,
            message: `message row ${typeof row.id === 'number' ? row.id : n + 1}: its tool_calls are not a JSON list; the calls are left out (Hermes wrote them partly, or another program changed them)`,
          });
          calls = [];
        } else calls = parsed;
      }
      (Array.isArray(calls) ? calls : []).forEach((call, j) => {
        if (!isJsonObject(call) || !isJsonObject(call.function)) return;
        const name = str(call.function, 'name');
        if (name === undefined) return;
        const callId = nonEmpty(call.id) ?? nonEmpty(call.call_id) ?? uuidV5(NS, `${id}:${n}:${j}:${name}`);
        content.push({
          type: 'tool_use',
          id: callId,
          tool: hermesToolToCommon(name, parseArguments(call.function.arguments)),
        });
      });
      if (content.length === 0) return;
      const finish = str(row, 'finish_reason');
      messages.push({
        role: 'assistant',
        content,
        timestamp,
        ...(model !== undefined ? { model } : {}),
        ...(finish !== undefined ? { stop_reason: STOPS[finish] ?? { other: finish } } : {}),
      });
    } else if (row.role === 'tool') {
      const useId = nonEmpty(row.tool_call_id);
      if (useId === undefined) return;
      const content: JsonValue = row.content === undefined || row.content === null ? '' : row.content;
      const isError = resultIsError(row, content);
      messages.push({
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: useId, content, ...(isError ? { is_error: true } : {}) },
        ],
        timestamp,
      });
    }
  });
  if (meta.title === undefined) {
    const first = messages.find((m) => m.role === 'user')?.content[0];
    const title = first?.type === 'text' ? titleFromText(first.text) : undefined;
    if (title !== undefined) meta.title = title;
  }
  return { meta, messages };
}

function userContent(blocks: readonly Block[]): JsonValue {
  const text = (b: Block): string | undefined =>
    b.type === 'text'
      ? b.text
      : b.type === 'artifact'
        ? artifactText(b.artifact)
        : b.type === 'thinking'
          ? b.text
          : undefined;
  if (blocks.every((b) => b.type !== 'image')) return blocks.flatMap((b) => text(b) ?? []).join('\n\n');
  return blocks.flatMap((b): JsonObject[] => {
    if (b.type === 'image') return [{ type: 'image_url', image_url: { url: imageToDataUrl(b.source) } }];
    const t = text(b);
    return t === undefined ? [] : [{ type: 'text', text: t }];
  });
}

function fromCommon(input: Transcript): HermesExport {
  const t = repairToolPairing(input);
  const { meta } = t;
  const rows: JsonObject[] = [];
  const row = (m: Message, fields: JsonObject): void => {
    rows.push({
      id: rows.length + 1,
      session_id: meta.id,
      ...fields,
      timestamp: toSeconds(m.timestamp),
      active: 1,
    });
  };
  for (const m of t.messages) {
    if (m.role === 'user') {
      const rest = m.content.filter((b) => b.type !== 'tool_result');
      for (const b of m.content)
        if (b.type === 'tool_result')
          row(m, {
            role: 'tool',
            content: valueText(b.content),
            tool_call_id: b.tool_use_id,
            // Hermes has no error flag of its own on a result: a denial is how an error survives.
            ...(b.is_error === true ? { effect_disposition: 'denied' } : {}),
          });
      if (rest.length > 0) row(m, { role: 'user', content: userContent(rest) });
      continue;
    }
    const thinking = m.content.flatMap((b) => (b.type === 'thinking' ? [b] : []));
    const calls = m.content.flatMap((b) => {
      if (b.type !== 'tool_use') return [];
      const { name, args } = commonToolToHermes(b.tool);
      return [{ id: b.id, type: 'function', function: { name, arguments: JSON.stringify(args) } }];
    });
    const text = m.content.flatMap((b) =>
      b.type === 'text'
        ? [b.text]
        : b.type === 'artifact'
          ? [artifactText(b.artifact)]
          : b.type === 'image'
            ? [`[image: ${b.source.media_type}]`]
            : [],
    );
    const reasoning = thinking.map((b) => b.text).join('\n');
    const opaque = thinking.find((b) => b.encrypted !== undefined)?.encrypted;
    const finish = finishReason(m.stop_reason, calls.length > 0);
    row(m, {
      role: 'assistant',
      content: text.join('\n\n'),
      ...(reasoning !== '' || thinking.length > 0 ? { reasoning_content: reasoning } : {}),
      ...(opaque !== undefined ? { reasoning_details: opaque } : {}),
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
      ...(finish !== undefined ? { finish_reason: finish } : {}),
    });
  }
  const json: JsonObject = { id: meta.id, source: 'cli', started_at: toSeconds(meta.timestamp) };
  if (meta.model !== undefined) json.model = meta.model;
  for (const k of ['cwd', 'git_branch', 'title'] as const) if (meta[k] !== undefined) json[k] = meta[k];
  json.messages = rows;
  return builtDocument(json);
}

export const hermesCodec: WarningCodec<HermesExport> = { toCommon, fromCommon };
