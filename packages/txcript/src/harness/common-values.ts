/** Small conversions both codecs share: timestamps, stop reasons, data URLs, artifact text. */
import type { Artifact, ImageSource, StopReason } from '../model/common.ts';

/** The canonical form, with a day every month has (later days take the slow path, which knows the month). */
const CANONICAL_UTC =
  /^\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;

/** RFC 3339 UTC with milliseconds, or undefined when `s` is not a date. */
export function normalizeTimestamp(s: string | undefined): string | undefined {
  if (s === undefined || s === '') return undefined;
  // Already the canonical form (what the tools write): no date parsing, which a long session pays per line.
  if (CANONICAL_UTC.test(s)) return s;
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

const KNOWN_STOPS = new Set(['end_turn', 'tool_use', 'max_tokens', 'stop_sequence', 'aborted', 'error']);

export function stopReasonFromString(s: string): StopReason {
  return KNOWN_STOPS.has(s) ? (s as StopReason) : { other: s };
}

export function stopReasonToString(r: StopReason): string {
  return typeof r === 'string' ? r : r.other;
}

/** `data:<media>;base64,<data>` -> an image source; anything else -> undefined. */
export function imageFromDataUrl(url: string): ImageSource | undefined {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (m === null) return undefined;
  return { type: 'base64', media_type: m[1]!, data: m[2]! };
}

export function imageToDataUrl(source: ImageSource): string {
  return `data:${source.media_type};base64,${source.data}`;
}

/** Neither tool has an artifact block: it is written as text a reader can follow. */
export function artifactText(artifact: Artifact): string {
  const s = artifact.source;
  const body =
    s.type === 'text' ? s.text : s.type === 'path' ? s.path : `(${s.data.length} base64 characters)`;
  return `[artifact ${artifact.name}]\n${body}`;
}

/** A title from the first user text: its first non-empty line, at most 100 characters. */
export function titleFromText(text: string): string | undefined {
  const line = text
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '');
  if (line === undefined) return undefined;
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
}
