/**
 * Reading ledger entries from outside (store.db rows, gateway responses).
 *
 * Readers are liberal (grok-bot-format.md §6–§7, sendbox decision C12) and
 * lossless: the protocol's strict schemas are for what the box writes, not
 * for what it reads.
 * - The kinds sendbox writes are checked with the protocol schemas; a
 *   `send-message` whose stored form the protocol does not model (a real
 *   Grok Bot type such as `connector` or `auto-review-approval`, or a known
 *   type with fields of other shapes) is still read, its `message` kept as
 *   stored.
 * - The older kind names `user-message`, `receive-message`, `assistant` and
 *   `user` are accepted; `event` and `voice-call` are known Grok Bot kinds
 *   that carry no conversation text.
 * - Any other kind is kept as it is (`UnknownLedgerEntry`): a reader that
 *   cannot place it says so.
 * Only what is not an entry at all (not an object, no `kind`, no `id`) is
 * reported and left out.
 */
import { ledgerEntrySchema } from '@sendbox/protocol';
import type { LedgerEntry } from '@sendbox/protocol';
import { z } from 'zod';
import type { Warning } from '../types.ts';

const PROTOCOL_KINDS = new Set<string>([
  'message',
  'send-message',
  'user-attachment',
  'tool-call',
  'notice',
  'thinking',
  'turn-ended',
]);

export const LEGACY_KINDS = ['user-message', 'receive-message', 'assistant', 'user'] as const;
export const FOREIGN_KINDS = ['event', 'voice-call'] as const;
const KNOWN_KINDS = new Set<string>([...PROTOCOL_KINDS, ...LEGACY_KINDS, ...FOREIGN_KINDS]);

/** C12: kind names seen in collectors and test scripts instead of `message` + `role`. */
export const legacyLedgerEntrySchema = z.looseObject({
  id: z.string(),
  kind: z.enum(LEGACY_KINDS),
  timestampMs: z.number().optional(),
  role: z.enum(['user', 'assistant']).optional(),
  content: z.string().optional(),
  text: z.string().optional(),
  prompt: z.string().optional(),
});

/** Grok Bot kinds with no conversation content (name changes, calls). */
export const foreignLedgerEntrySchema = z.looseObject({
  id: z.string(),
  kind: z.enum(FOREIGN_KINDS),
  timestampMs: z.number().optional(),
});

/** A `send-message` entry as stored, whatever its type (§6 "Other stored types exist"). */
export const storedSendEntrySchema = z.looseObject({
  id: z.string(),
  kind: z.literal('send-message'),
  timestampMs: z.number().optional(),
  message: z.looseObject({ type: z.string() }),
});

/** An entry of a kind no schema here knows: kept whole, so nothing a newer host writes is lost. */
export const unknownLedgerEntrySchema = z.looseObject({
  id: z.string(),
  kind: z.string(),
  timestampMs: z.number().optional(),
});

export type LegacyLedgerEntry = z.infer<typeof legacyLedgerEntrySchema>;
export type ForeignLedgerEntry = z.infer<typeof foreignLedgerEntrySchema>;
export type StoredSendEntry = z.infer<typeof storedSendEntrySchema>;
export type UnknownLedgerEntry = z.infer<typeof unknownLedgerEntrySchema> & { readonly unknownKind: true };
/** Any entry a reader accepts. */
export type ReadLedgerEntry =
  LedgerEntry | LegacyLedgerEntry | ForeignLedgerEntry | StoredSendEntry | UnknownLedgerEntry;

/** True for an entry of a kind no schema here knows (kept as read). */
export function isUnknownEntry(entry: ReadLedgerEntry): entry is UnknownLedgerEntry {
  return !KNOWN_KINDS.has(entry.kind);
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.length > 0 ? i.path.join('.') : '(entry)'}: ${i.message}`)
    .join('; ');
}

/**
 * Check one decoded entry. `fallbackId` fills a missing `id` (a store.db row
 * always has one in its `id` column).
 */
export function parseLedgerEntry(
  value: unknown,
  fallbackId?: string,
): { ok: true; entry: ReadLedgerEntry } | { ok: false; problem: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, problem: 'entry is not a JSON object' };
  }
  const obj = value as Record<string, unknown>;
  const input = obj.id === undefined && fallbackId !== undefined ? { ...obj, id: fallbackId } : obj;
  const kind = input.kind;
  if (typeof kind !== 'string') return { ok: false, problem: 'entry has no string `kind`' };
  const schema = PROTOCOL_KINDS.has(kind)
    ? ledgerEntrySchema
    : (LEGACY_KINDS as readonly string[]).includes(kind)
      ? legacyLedgerEntrySchema
      : (FOREIGN_KINDS as readonly string[]).includes(kind)
        ? foreignLedgerEntrySchema
        : unknownLedgerEntrySchema;
  const parsed = schema.safeParse(input);
  if (parsed.success) return { ok: true, entry: parsed.data as ReadLedgerEntry };
  // A send the protocol does not model is still a send: keep its stored form (§6).
  if (kind === 'send-message') {
    const stored = storedSendEntrySchema.safeParse(input);
    if (stored.success) return { ok: true, entry: stored.data };
  }
  return { ok: false, problem: `invalid "${kind}" entry: ${describeIssues(parsed.error)}` };
}

/**
 * Check a list of decoded entries (e.g. a gateway response). Bad entries
 * become warnings naming `source` and their position; the rest are returned.
 */
export function parseLedgerEntries(
  values: readonly unknown[],
  source: string,
): { entries: ReadLedgerEntry[]; warnings: Warning[] } {
  const entries: ReadLedgerEntry[] = [];
  const warnings: Warning[] = [];
  values.forEach((value, i) => {
    const r = parseLedgerEntry(value);
    if (r.ok) entries.push(r.entry);
    else warnings.push({ source, message: `entry ${i}: ${r.problem}` });
  });
  return { entries, warnings };
}
