/**
 * Closing a turn the box did not finish (it was killed, or a write failed
 * mid-turn). What the files hold decides every step, so closing is
 * deterministic and can be repeated until it succeeds:
 *
 * 1. the model never saw the input (the ledger has the user message, the
 *    JSONL not): its user record is appended;
 * 2. every tool call without a result gets one: a send whose ledger entry
 *    committed was delivered, so it gets its success result; any other call
 *    an error saying it was interrupted;
 * 3. the ledger gets an error notice for the user and `turn-ended`.
 */
import { sendResultSuccess } from '@sendbox/protocol';
import type { JsonObject } from '@sendbox/txcript';
import type { TranscriptRecord } from '../stores/transcript.ts';

export const INTERRUPTED_CALL_RESULT =
  'This call was interrupted: the box stopped during this turn, so the call has no result. ' +
  'Check its effect before you run it again.';

/** A ledger row as the closer reads it. */
export interface ClosingRow {
  id: string;
  kind: string;
  timestampMs?: number;
}

export interface TurnRepair {
  /** The JSONL records to append, in order (the user record, then the missing results). */
  records: TranscriptRecord[];
}

/**
 * What the JSONL lacks for turn `turn`. `records` are the JSONL's record objects; `rows` the
 * ledger's; `userTexts` the text blocks of the turn's user record (used when it is missing).
 */
export function repairOf(
  turn: number,
  records: readonly JsonObject[],
  rows: readonly ClosingRow[],
  userTexts: () => string[],
): TurnRepair {
  const tag = `[t${turn}u]`;
  let start = -1;
  records.forEach((record, i) => {
    if (record.role === 'user' && firstText(record)?.startsWith(tag)) start = i;
  });
  if (start < 0) {
    return { records: [{ role: 'user', blocks: userTexts().map((text) => ({ type: 'text', text })) }] };
  }
  // Calls and results after the user record, matched by name in order (a result names its tool, not its call).
  const open: string[] = [];
  const delivered = new Set<string>();
  for (const record of records.slice(start + 1)) {
    for (const block of blocksOf(record)) {
      if (block.type === 'tool_use' && typeof block.name === 'string') open.push(block.name);
      if (block.type === 'tool_result' && typeof block.name === 'string') {
        const at = open.indexOf(block.name);
        if (at >= 0) open.splice(at, 1);
        const id = successId(block.result);
        if (id) delivered.add(id);
      }
    }
  }
  // Sends the ledger holds whose success the model was never given, in their order.
  const prefix = `t${turn}s`;
  const undelivered = rows.filter(
    (row) => row.id.startsWith(prefix) && row.kind === 'send-message' && !delivered.has(row.id),
  );
  const out: TranscriptRecord[] = [];
  for (const name of open) {
    const send = name === 'send_message' ? undelivered.shift() : undefined;
    const result: JsonObject = send
      ? sendResultSuccess(send.id, send.timestampMs ?? 0)
      : { error: { error: INTERRUPTED_CALL_RESULT } };
    out.push({ role: 'tool', blocks: [{ type: 'tool_result', name, result }] });
  }
  return { records: out };
}

function blocksOf(record: JsonObject): JsonObject[] {
  const message = record.message;
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return [];
  const content = message.content;
  return Array.isArray(content)
    ? content.filter((b): b is JsonObject => typeof b === 'object' && b !== null && !Array.isArray(b))
    : [];
}

function firstText(record: JsonObject): string | undefined {
  const block = blocksOf(record).find((b) => b.type === 'text');
  return typeof block?.text === 'string' ? block.text : undefined;
}

function successId(result: unknown): string | undefined {
  if (typeof result !== 'object' || result === null) return undefined;
  const success = (result as { success?: unknown }).success;
  if (typeof success !== 'object' || success === null) return undefined;
  const id = (success as { messageId?: unknown }).messageId;
  return typeof id === 'string' ? id : undefined;
}
