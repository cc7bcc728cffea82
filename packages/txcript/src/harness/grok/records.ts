/**
 * A Grok CLI session folder's records (docs/formats/grok.md): the model
 * log `chat_history.jsonl` (lines typed `system`, `user`, `assistant`,
 * `reasoning`, `tool_result`), the display log `updates.jsonl` (ACP
 * `session/update` notifications) and `summary.json` (metadata). Each file
 * keeps its own text; a line or document that does not fit is kept and
 * reported. The native text of a session, for `convert`, is its model log.
 */
import type { JsonObject } from '../../model/common.ts';
import { parseJsonDocument, type JsonDocument } from '../json-document.ts';
import { hasStringType, parseJsonl, renderJsonl, type Classified, type JsonlLine } from '../jsonl.ts';
import type { Parsed, TextCodec, Warning } from '../types.ts';

export type GrokRecord = { shape: 'line'; json: JsonObject } | { shape: 'other'; json: JsonObject };
export type GrokLine = JsonlLine<GrokRecord>;

export interface GrokSession {
  /** `chat_history.jsonl`: the conversation as the model sees it. */
  chat: GrokLine[];
  /** `updates.jsonl`: the conversation as the screen shows it (times, images, failures, stop reasons). */
  updates: GrokLine[];
  /** `summary.json`. */
  summary?: JsonDocument;
}

function classifyChat(value: JsonObject): Classified<GrokRecord> {
  if (typeof value.type === 'string') return { fields: { shape: 'line', json: value } };
  return {
    fields: { shape: 'other', json: value },
    problem: 'not a chat history record (no string "type"); kept verbatim, skipped in the conversation',
  };
}

function classifyUpdate(value: JsonObject): Classified<GrokRecord> {
  const params = value.params;
  if (typeof params === 'object' && params !== null && !Array.isArray(params) && 'update' in params)
    return { fields: { shape: 'line', json: value } };
  return {
    fields: { shape: 'other', json: value },
    problem: 'not a session update (no "params.update"); kept verbatim, not read',
  };
}

export function parseChatHistory(text: string, source: string): { lines: GrokLine[]; warnings: Warning[] } {
  return parseJsonl(text, source, classifyChat, { recoverGlued: hasStringType });
}

export function parseUpdates(text: string, source: string): { lines: GrokLine[]; warnings: Warning[] } {
  return parseJsonl(text, source, classifyUpdate);
}

export function parseSummary(text: string, source: string): { doc: JsonDocument; warnings: Warning[] } {
  return parseJsonDocument(text, source);
}

export const grokText: TextCodec<GrokSession> = {
  parse(text: string, source = '<grok chat history>'): Parsed<GrokSession> {
    const { lines, warnings } = parseChatHistory(text, source);
    return { records: { chat: lines, updates: [] }, warnings };
  },
  render(records: GrokSession): string {
    return renderJsonl(records.chat);
  },
};
