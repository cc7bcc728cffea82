/**
 * Reading one listed session for search: its facts and its searchable rows
 * (documents.ts), for the index (refresh.ts) and for a scan (scan-reads.ts),
 * whose read workers (read-worker.ts) load this module and the session's
 * harness alone.
 */
import type { FoundSession } from '../cli/sessions.ts';
import type { Warning } from '../harness/types.ts';
import type { SessionFacts } from './index-db.ts';
import { KINDS, type SearchRow } from './kinds.ts';
import { type Query, foldCase, matchesTexts } from './query.ts';
import { rowTrigrams } from './ranking.ts';

/** What the index keeps of one listed session: its facts, and its rows (none when it cannot be read: warned). */
export async function readSession(
  ctx: { io: { env: NodeJS.ProcessEnv }; warn(warning: Warning): void },
  found: FoundSession,
  sig: string | null,
): Promise<{ facts: SessionFacts; rows: SearchRow[] }> {
  const { summary, harness } = found;
  const facts: SessionFacts = {
    harness: harness.id,
    id: summary.id,
    locator: summary.locator,
    sig,
    ...(summary.title !== undefined ? { title: summary.title } : {}),
    ...(summary.lastActivity !== undefined ? { lastActivity: summary.lastActivity } : {}),
    ...(summary.messageCount !== undefined ? { messageCount: summary.messageCount } : {}),
    ...(summary.parentId !== undefined ? { parentId: summary.parentId } : {}),
  };
  let loaded;
  try {
    // Where it was listed: each listed source is read, and no store looks the id up again.
    loaded = await harness.store!(ctx.io.env).load(summary.id, summary.locator);
  } catch (err) {
    // Said once: the facts are kept with the signature, so an unchanged source is not read again.
    ctx.warn({
      source: summary.locator,
      message: `not indexed: ${err instanceof Error ? err.message : String(err)}`,
    });
    return { facts, rows: [] };
  }
  const { meta } = loaded.transcript;
  const title = summary.title ?? meta.title;
  return {
    facts: {
      ...facts,
      ...(title !== undefined ? { title } : {}),
      ...(meta.cwd !== undefined ? { cwd: meta.cwd } : {}),
    },
    // The row maker reads sessions as `view` does (codecs and all): loaded with the first session read.
    rows: (await import('./documents.ts')).searchRows(loaded.transcript, harness.id, title),
  };
}

/** What the scan keeps of one session it read. */
export interface SessionRead {
  facts: SessionFacts;
  /** Its rows that match the whole query. */
  matching: SearchRow[];
  /** BM25's collection: its rows, their trigrams, and per scored phrase the rows that hold it. */
  rows: number;
  tokens: number;
  frequencies: number[];
  /** What reading it warned about, given to the caller's `warn` when the scan takes this read. */
  warnings: Warning[];
}

/** One session read and checked (on this thread or a worker). */
export async function readForScan(
  env: NodeJS.ProcessEnv,
  found: FoundSession,
  query: Query,
  phrases: readonly string[],
): Promise<SessionRead> {
  const warnings: Warning[] = [];
  const { facts, rows } = await readSession({ io: { env }, warn: (w) => warnings.push(w) }, found, null);
  const matching: SearchRow[] = [];
  const frequencies = phrases.map(() => 0);
  let tokens = 0;
  for (const r of rows) {
    const folded = KINDS.map((k) => foldCase(r.texts[k]));
    tokens += rowTrigrams(r.texts);
    phrases.forEach((p, i) => {
      if (folded.some((t) => t.includes(p))) frequencies[i]!++;
    });
    if (matchesTexts(query, folded)) matching.push(r);
  }
  return { facts, matching, rows: rows.length, tokens, frequencies, warnings };
}
