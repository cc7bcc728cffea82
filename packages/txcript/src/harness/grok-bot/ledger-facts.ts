/**
 * What one `store.db` tells a listing, read with SQLite (ledger-db.ts). Its
 * own module because it brings better-sqlite3, the protocol and zod: a list
 * whose ledgers are all served by the summary cache never loads it
 * (ledger-reads.ts imports it only when there is a ledger to read).
 */
import { existsSync } from 'node:fs';
import { isJsonObject } from '../../model/json.ts';
import { errorMessage } from '../../error-text.ts';
import { readLedgerSummary } from './ledger-db.ts';
import { isUnknownEntry } from './ledger-entry.ts';
import { epochMs } from './ledger-reads.ts';
import type { LedgerFacts, LedgerOutcome, LedgerRequest } from './ledger-reads.ts';
import { titleFromUserText } from './title.ts';

/** Ledger entries searched for a title (agents without a profile name). */
const TITLE_LEDGER_ENTRIES = 50;

/** Ledger facts for the list: the messages `view` shows, last activity, and a title when asked. Throws when unreadable. */
export function readLedgerFacts(path: string, needTitle: boolean): LedgerFacts | undefined {
  if (!existsSync(path)) return undefined;
  const summary = readLedgerSummary(path, {
    busyTimeoutMs: 200,
    ...(needTitle ? { firstEntries: TITLE_LEDGER_ENTRIES } : {}),
  });
  const unread = summary.unreadState;
  const unreadAt = isJsonObject(unread) ? epochMs(unread.lastActivityAt) : undefined;
  const last = epochMs(summary.lastTimestampMs);
  const lastActivityMs =
    last !== undefined || unreadAt !== undefined
      ? Math.max(last ?? -Infinity, unreadAt ?? -Infinity)
      : undefined;
  let title: string | undefined;
  for (const { entry } of summary.first ?? []) {
    if (isUnknownEntry(entry)) continue;
    const text =
      entry.kind === 'message' && entry.role === 'user'
        ? entry.hidden === true
          ? undefined
          : entry.content
        : entry.kind === 'user-message'
          ? (entry.content ?? entry.text ?? entry.prompt)
          : undefined;
    title = text === undefined ? undefined : titleFromUserText(text);
    if (title !== undefined) break;
  }
  return {
    messages: summary.messages,
    ...(lastActivityMs !== undefined ? { lastActivityMs } : {}),
    ...(title ? { title } : {}),
  };
}

/** One read, its failure included: what either thread reports for a ledger. */
export function readLedgerOutcome({ path, needTitle }: LedgerRequest): LedgerOutcome {
  try {
    return { facts: readLedgerFacts(path, needTitle) };
  } catch (e) {
    return { error: errorMessage(e) };
  }
}
