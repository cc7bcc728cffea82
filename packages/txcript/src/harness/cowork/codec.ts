/**
 * Cowork records <-> Common (docs/formats/cowork.md). The conversation is
 * Claude Code's JSONL, read and written by the claude_code codec; the app's
 * record gives the session id, start, folder, title and model.
 */
import type { JsonObject, JsonValue, Transcript } from '../../model/common.ts';
import { uuidV5 } from '../../model/uuid.ts';
import { claudeCodeCodec } from '../claude-code/codec.ts';
import { claudeCodeText } from '../claude-code/records.ts';
import { builtDocument } from '../json-document.ts';
import { millisTime, nonEmpty } from '../native-values.ts';
import type { WarningCodec, WarningContext } from '../types.ts';
import { coworkSession, type CoworkRecords } from './records.ts';

/** Namespace of the Claude Code session id under a Cowork session (fixed, random). */
const CLI_NS = '6a0c2e84-1f3b-4d57-9e6a-b8c0d2e4f617';

/** The app lists only `local_` sessions. */
export const coworkSessionId = (id: string): string => (id.startsWith('local_') ? id : `local_${id}`);

/** The Claude Code session a Cowork session runs, derived so a conversion is a function of its input. */
export const cliSessionIdFor = (sessionId: string): string => uuidV5(CLI_NS, sessionId);

/** The transcript's lines as Claude Code text. */
export const transcriptText = (lines: readonly JsonValue[]): string =>
  lines.map((l) => `${JSON.stringify(l)}\n`).join('');

function toCommon(records: CoworkRecords, ctx: WarningContext): Transcript {
  const session = coworkSession(records);
  const header = session?.header ?? {};
  const cli = nonEmpty(header.cliSessionId) ?? ctx.sessionId;
  const parsed = claudeCodeText.parse(transcriptText(session?.transcript ?? []), ctx.source);
  for (const w of parsed.warnings) ctx.onWarning?.(w);
  const t = claudeCodeCodec.toCommon(parsed.records, { ...ctx, sessionId: cli });
  const meta = { ...t.meta, id: nonEmpty(header.sessionId) ?? ctx.sessionId };
  const start = millisTime(header.createdAt);
  if (start !== undefined) meta.timestamp = start;
  for (const k of ['cwd', 'title', 'model'] as const) {
    const v = nonEmpty(header[k]);
    if (v !== undefined && v.trim() !== '') meta[k] = v;
  }
  return { meta, messages: t.messages };
}

function fromCommon(t: Transcript): CoworkRecords {
  const sessionId = coworkSessionId(t.meta.id);
  const cli = cliSessionIdFor(sessionId);
  const lines = claudeCodeText
    .render(claudeCodeCodec.fromCommon({ ...t, meta: { ...t.meta, id: cli } }))
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as JsonValue);
  const created = Date.parse(t.meta.timestamp);
  const last = t.messages.reduce((n, m) => Math.max(n, Date.parse(m.timestamp) || 0), created);
  const first = t.messages.find((m) => m.role === 'user' && m.content.some((b) => b.type === 'text'));
  const initial = first?.content.find((b) => b.type === 'text');
  const header: JsonObject = {
    sessionId,
    cliSessionId: cli,
    // Required by the app; natively the name of the process that ran it.
    processName: `txcript-${cli.slice(0, 8)}`,
    cwd: t.meta.cwd ?? '',
    createdAt: Number.isFinite(created) ? created : 0,
    lastActivityAt: Number.isFinite(last) ? last : 0,
    ...(t.meta.model !== undefined ? { model: t.meta.model } : {}),
    ...(t.meta.title !== undefined ? { title: t.meta.title } : {}),
    isArchived: false,
    // The app runs the CLI on this machine against `cwd`, not in its VM.
    hostLoopMode: true,
    ...(initial?.type === 'text' ? { initialMessage: initial.text } : {}),
  };
  return builtDocument({ header, transcript: lines, audit: [] });
}

export const coworkCodec: WarningCodec<CoworkRecords> = { toCommon, fromCommon };
