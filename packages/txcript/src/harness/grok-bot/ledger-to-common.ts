/**
 * UI ledger entries (store.db rows or a gateway `openAgent` response) -> Common.
 *
 * txcript keeps only text turns here (TX-c); sendbox keeps every kind that
 * carries conversation (see docs/formats/grok-bot.md "Ledger reconstruction"):
 * - `message` (and the C12 names) -> text of its role;
 * - `send-message` of ANY type -> an assistant `send_message` Raw tool call
 *   whose input is the typed stored form, then its result
 *   `{success:{messageId, timestamp}}`: one uniform shape that loses no field
 *   and keeps the "every bubble is a send_message call" structure;
 * - `user-attachment` -> a user artifact block (path source);
 * - `tool-call` -> a Raw tool call and, once finished, its result by status;
 * - `thinking` -> an assistant thinking block;
 * - `notice`, `turn-ended`, `event`, `voice-call` carry no turn: skipped.
 * Entries marked `branched` belong to an abandoned branch and are skipped
 * (with a warning), and so are those a later prompt withdrew (sendbox's
 * `supersedes`: regenerate, edit and resend; @sendbox/protocol revisions.ts),
 * without one: the conversation reads as the user last shaped it.
 * What Common has no place for (a reaction-only message, a kind no schema
 * knows) is reported in one warning per kind; the entry itself stays as read.
 * A message's time is its entry's `timestampMs`; an entry without one takes
 * the nearest earlier time and is listed in `untimed`.
 */
import type { Block, JsonObject, Message, Role, Transcript } from '../../model/common.ts';
import type { Warning } from '../types.ts';
import { withdrawnIds } from '@sendbox/protocol';
import { UNIX_EPOCH } from './codec.ts';
import { isUnknownEntry, type ReadLedgerEntry } from './ledger-entry.ts';

export interface LedgerToCommonContext {
  sessionId: string;
  /** Session timestamp when no entry has a `timestampMs`. */
  timestamp?: string;
  /** Where the entries came from (store.db path or gateway URL), for warnings. */
  source?: string;
}

export interface LedgerConversion {
  transcript: Transcript;
  warnings: Warning[];
  /** Indexes of messages whose entry has no time of its own (their timestamp is borrowed). */
  untimed: Set<number>;
}

function iso(ms: number | undefined): string | undefined {
  if (ms === undefined || !Number.isFinite(ms)) return undefined;
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

/** The Common tool_result content a `tool-call` entry's status stands for (C4 envelope keys). */
function toolCallResult(
  status: string,
  summary: string | undefined,
): { content: JsonObject; isError: boolean } {
  const body: JsonObject = { status, ...(summary !== undefined ? { summary } : {}) };
  if (status === 'failure') return { content: { failure: body }, isError: true };
  if (status === 'error') return { content: { error: body }, isError: true };
  return { content: { success: body }, isError: false };
}

/** Entries Common cannot hold, counted by what they are, for one warning each. */
class Unplaced {
  private readonly byWhat = new Map<string, string[]>();
  add(what: string, id: string): void {
    const ids = this.byWhat.get(what) ?? [];
    ids.push(id);
    this.byWhat.set(what, ids);
  }
  warnings(source: string): Warning[] {
    return [...this.byWhat].map(([what, ids]) => ({
      source,
      message:
        `${ids.length} ${what} entr${ids.length === 1 ? 'y' : 'ies'} (${ids.slice(0, 3).join(', ')}` +
        `${ids.length > 3 ? ', …' : ''}) left out of Common, which has no place for them; the ledger keeps them`,
    }));
  }
}

/**
 * Keys of each kind that Common holds, or that only steer the UI and say nothing about the
 * conversation (streaming flags, nonces, file bookkeeping). Any other key an entry has is named
 * once in a warning: it stays in the ledger, Common has no place for it.
 */
const PLACED_KEYS: Readonly<Record<string, ReadonlySet<string>>> = (() => {
  const common = ['id', 'kind', 'timestampMs', 'seq', 'branched'];
  const keys = (...k: string[]) => new Set([...common, ...k]);
  return {
    message: keys('role', 'content', 'isStreaming', 'clientNonce', 'hidden', 'richText', 'supersedes'),
    'user-message': keys('role', 'content', 'text', 'prompt'),
    'receive-message': keys('role', 'content', 'text', 'prompt'),
    user: keys('role', 'content', 'text', 'prompt'),
    assistant: keys('role', 'content', 'text', 'prompt'),
    'send-message': keys('message', 'streaming'),
    'user-attachment': keys(
      'file_name',
      'file_path',
      'media_type',
      'batchId',
      'clientNonce',
      'width',
      'height',
      'byteSize',
      'sha256',
      'sandbox_path',
    ),
    // description, input, output, durationMs: sendbox's tool-row details, a capped display copy
    // of the JSONL's call and result; toolCallId: the id of that call, which the JSONL holds.
    'tool-call': keys(
      'name',
      'status',
      'summary',
      'description',
      'input',
      'output',
      'durationMs',
      'toolCallId',
    ),
    thinking: keys('text'),
  };
})();

class UnplacedFields {
  private readonly seen = new Set<string>();
  add(entry: ReadLedgerEntry): void {
    const placed = PLACED_KEYS[entry.kind];
    if (placed === undefined) return;
    for (const key of Object.keys(entry)) if (!placed.has(key)) this.seen.add(`${entry.kind}.${key}`);
  }
  warning(source: string): Warning | undefined {
    if (this.seen.size === 0) return undefined;
    const names = [...this.seen].sort();
    return {
      source,
      message:
        `fields left out of Common, which has no place for them (the ledger keeps them): ` +
        `${names.slice(0, 12).join(', ')}${names.length > 12 ? `, and ${names.length - 12} more` : ''}`,
    };
  }
}

function isBranched(entry: ReadLedgerEntry): boolean {
  const b = (entry as { branched?: unknown }).branched;
  return b === true || b === 1;
}

export function ledgerToCommon(
  entries: readonly ReadLedgerEntry[],
  ctx: LedgerToCommonContext,
): LedgerConversion {
  let sessionTs: string | undefined;
  for (const e of entries) {
    sessionTs = iso(e.timestampMs);
    if (sessionTs !== undefined) break;
  }
  sessionTs ??= ctx.timestamp ?? UNIX_EPOCH;
  let current = sessionTs;
  let timed = false;
  const messages: Message[] = [];
  const untimed = new Set<number>();
  const push = (role: Role, content: Block[]): void => {
    if (!timed) untimed.add(messages.length);
    messages.push({ role, content, timestamp: current });
  };
  const unplaced = new Unplaced();
  const fields = new UnplacedFields();
  let branched = 0;
  const withdrawn = withdrawnIds(entries);
  for (const entry of entries) {
    if (withdrawn.has(entry.id)) continue;
    const own = iso(entry.timestampMs);
    timed = own !== undefined;
    current = own ?? current;
    if (isBranched(entry)) {
      branched++;
      continue;
    }
    if (isUnknownEntry(entry)) {
      unplaced.add(`"${entry.kind}"`, entry.id);
      continue;
    }
    fields.add(entry);
    switch (entry.kind) {
      case 'message':
        if (entry.content !== '') push(entry.role, [{ type: 'text', text: entry.content }]);
        else if (Array.isArray((entry as { reactions?: unknown }).reactions))
          unplaced.add('reaction-only "message"', entry.id);
        break;
      case 'user-message':
      case 'receive-message':
      case 'user':
      case 'assistant': {
        // C12. `receive-message` is read as the agent receiving a user message (inferred from the name).
        const role: Role = entry.role ?? (entry.kind === 'assistant' ? 'assistant' : 'user');
        const text = entry.content ?? entry.text ?? entry.prompt ?? '';
        if (text !== '') push(role, [{ type: 'text', text }]);
        break;
      }
      case 'send-message': {
        const timestamp = entry.timestampMs !== undefined ? String(entry.timestampMs) : undefined;
        push('assistant', [
          {
            type: 'tool_use',
            id: entry.id,
            tool: { name: 'Raw', tool_name: 'send_message', input: entry.message as unknown as JsonObject },
          },
        ]);
        push('user', [
          {
            type: 'tool_result',
            tool_use_id: entry.id,
            // C10: the box writes success.timestamp as an epoch-ms string.
            content: { success: { messageId: entry.id, ...(timestamp !== undefined ? { timestamp } : {}) } },
          },
        ]);
        break;
      }
      case 'user-attachment':
        push('user', [
          {
            type: 'artifact',
            artifact: {
              id: entry.id,
              name: entry.file_name,
              source: {
                type: 'path',
                path: entry.file_path,
                ...(entry.media_type !== undefined ? { media_type: entry.media_type } : {}),
              },
            },
          },
        ]);
        break;
      case 'tool-call': {
        push('assistant', [
          { type: 'tool_use', id: entry.id, tool: { name: 'Raw', tool_name: entry.name, input: {} } },
        ]);
        // A call still running has no result yet.
        if (entry.status !== 'running') {
          const { content, isError } = toolCallResult(entry.status, entry.summary);
          push('user', [
            { type: 'tool_result', tool_use_id: entry.id, content, ...(isError ? { is_error: true } : {}) },
          ]);
        }
        break;
      }
      case 'thinking':
        if (entry.text !== '') push('assistant', [{ type: 'thinking', text: entry.text }]);
        break;
      case 'notice':
      case 'turn-ended':
      case 'event':
      case 'voice-call':
        break;
    }
  }
  const source = ctx.source ?? ctx.sessionId;
  const warnings = unplaced.warnings(source);
  const fieldWarning = fields.warning(source);
  if (fieldWarning !== undefined) warnings.push(fieldWarning);
  if (branched > 0) {
    warnings.push({
      source,
      message: `${branched} entr${branched === 1 ? 'y' : 'ies'} of an abandoned branch skipped`,
    });
  }
  return {
    transcript: { meta: { id: ctx.sessionId, timestamp: sessionTs }, messages },
    warnings,
    untimed,
  };
}
