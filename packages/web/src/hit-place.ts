/**
 * Where a message search hit is among an agent's entries: the box counts, in the agent's
 * transcript, the messages of the hit's kind up to it that hold the matched words
 * (`place.occurrence`); the page counts its entries of that kind the same way.
 */
import type { MessageHit, TranscriptEntry } from './api/types.ts';

function strings(value: unknown, out: string[]): void {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) strings(v, out);
}

/** The text of an entry the hit's kind can be in, or null when it cannot. */
function textFor(entry: TranscriptEntry, kind: string): string | null {
  const raw = entry as unknown as Record<string, unknown>;
  if (kind === 'user') {
    if (raw.kind !== 'message' || raw.role !== 'user' || raw.hidden === true) return null;
    return typeof raw.content === 'string' ? raw.content : null;
  }
  if (kind === 'assistant' && raw.kind !== 'send-message') return null;
  const out: string[] = [];
  strings(kind === 'assistant' ? raw.message : raw, out);
  return out.join('\n');
}

/** The id of the entry the hit is, or null (a title hit, or nothing holds the words). */
export function hitEntryId(entries: readonly TranscriptEntry[], hit: MessageHit): string | null {
  const place = hit.place;
  if (!place) return null;
  let seen = 0;
  let last: string | null = null;
  for (const entry of entries) {
    const text = textFor(entry, hit.kind);
    if (text === null || !text.toLowerCase().includes(place.needle)) continue;
    seen += 1;
    last = entry.id;
    if (seen === place.occurrence) return entry.id;
  }
  return last;
}
