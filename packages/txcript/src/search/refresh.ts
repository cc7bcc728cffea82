/**
 * Keeping the index up with the stores: discover every session (the stores'
 * summary caches make that cheap), then read only the sources whose stat
 * signature differs from the one they were indexed at, and forget those that
 * are gone. Signatures are the summary cache's (summary-cache-file.ts),
 * combined with the facts discovery reported; a source changed within the
 * racy window is indexed but not vouched for, so it is read again next time.
 */
import { join } from 'node:path';
import { statSync } from 'node:fs';
import { statSignature } from '../harness/summary-cache-file.ts';
import type { SessionSummary } from '../harness/types.ts';
import type { CliContext } from '../cli/context.ts';
import { createProgress, progressDelay } from '../cli/progress.ts';
import { type FoundSession, discoverSessions, scannedHarnesses } from '../cli/sessions.ts';
import { type SearchRow, searchRows } from './documents.ts';
import type { SearchIndex, SessionFacts } from './index-db.ts';

/** A folder locator (a Grok Bot agent without a transcript) changes through its ledger, which the folder's times miss. */
const FOLDER_SOURCES = ['store.db', 'store.db-wal'];

/**
 * The signature of a session source and its listed facts, or null when it
 * cannot be vouched for (racy, or not a file on this machine).
 */
export function sourceSignature(summary: SessionSummary, now: number): string | null {
  const parts: string[] = [];
  let paths = [summary.locator];
  try {
    if (statSync(summary.locator, { throwIfNoEntry: false })?.isDirectory() === true) {
      paths = [summary.locator, ...FOLDER_SOURCES.map((name) => join(summary.locator, name))];
    }
    for (const path of paths) {
      const sig = statSignature(path, now, { ctime: true });
      if (sig?.racy === true) return null;
      parts.push(sig?.sig ?? '-');
    }
  } catch {
    return null;
  }
  if (parts[0] === '-') return null;
  parts.push(String(summary.messageCount ?? ''), summary.lastActivity ?? '', summary.title ?? '');
  return parts.join('|');
}

/** One session of one source: a source file can hold several (a Claude Code parent and its inline sidechains). */
const sessionKey = (harness: string, locator: string, id: string): string => `${harness}\0${locator}\0${id}`;

export interface RefreshStats {
  sessions: number;
  /** Sources read (new or changed). */
  read: number;
  removed: number;
}

export interface RefreshOptions {
  /** Aborted, the refresh keeps what it stored, leaves the session it was reading for next time, and fails with the signal's reason. */
  signal?: AbortSignal;
  /** After each source read: how many of how many (the MCP server's progress notifications). */
  onProgress?: (done: number, total: number) => void;
}

/** What a refresh has to do: the sessions listed, those to read again with their signatures, those gone. */
export interface RefreshPlan {
  sessions: FoundSession[];
  stale: Array<{ found: FoundSession; sig: string | null }>;
  /** Index keys of sessions no longer listed. */
  gone: number[];
  /** Bytes of the stale sources (a folder counts its ledger): what reading them costs. */
  staleBytes: number;
}

/** Discover the sessions of `from` and compare them with what `index` holds. */
export async function planRefresh(
  ctx: CliContext,
  index: SearchIndex,
  from: string | undefined,
): Promise<RefreshPlan> {
  const scanned = (await scannedHarnesses(ctx, from)).map((h) => h.id);
  const { sessions, warnings } = await discoverSessions(ctx, from);
  for (const w of warnings) ctx.warnListing(w);
  const known = new Map(index.sessions(scanned).map((s) => [sessionKey(s.harness, s.locator, s.id), s]));
  // The injected clock, so tests can place sources outside the racy window.
  const now = ctx.io.now().getTime();
  const stale: Array<{ found: FoundSession; sig: string | null }> = [];
  const staleSources = new Set<string>();
  for (const found of sessions) {
    const key = sessionKey(found.harness.id, found.summary.locator, found.summary.id);
    const before = known.get(key);
    known.delete(key);
    const sig = sourceSignature(found.summary, now);
    if (before !== undefined && before.sig !== null && before.sig === sig) continue;
    stale.push({ found, sig });
    staleSources.add(found.summary.locator);
  }
  let staleBytes = 0;
  for (const locator of staleSources) staleBytes += sourceBytes(locator);
  return { sessions, stale, gone: [...known.values()].map((s) => s.key), staleBytes };
}

function sourceBytes(locator: string): number {
  try {
    const st = statSync(locator, { throwIfNoEntry: false });
    if (st === undefined) return 0;
    if (!st.isDirectory()) return st.size;
    return FOLDER_SOURCES.reduce(
      (sum, name) => sum + (statSync(join(locator, name), { throwIfNoEntry: false })?.size ?? 0),
      0,
    );
  } catch {
    return 0;
  }
}

/** Bring `index` up to date with the sessions of `from` (default every harness with a store); `plan`: already made for it. */
export async function refreshIndex(
  ctx: CliContext,
  index: SearchIndex,
  from: string | undefined,
  { signal, onProgress }: RefreshOptions = {},
  plan?: RefreshPlan,
): Promise<RefreshStats> {
  const { sessions, stale, gone } = plan ?? (await planRefresh(ctx, index, from));
  const progress = createProgress({
    stream: ctx.io.stderr,
    delayMs: progressDelay(ctx.io.env),
    // In memory (`--no-index`, or a cache folder that cannot be written) nothing is kept: a scan.
    label: index.db.memory ? 'txcript: reading sessions' : 'txcript: indexing sessions',
  });
  try {
    let done = 0;
    await index.batched(async () => {
      for (const { found, sig } of stale) {
        if (signal?.aborted === true) return;
        await indexSession(ctx, index, found, sig, signal);
        progress.update('index', ++done, stale.length);
        onProgress?.(done, stale.length);
      }
      if (signal?.aborted === true || gone.length === 0) return;
      await index.writable();
      index.remove(gone);
    });
  } finally {
    progress.finish();
  }
  signal?.throwIfAborted();
  return { sessions: sessions.length, read: stale.length, removed: gone.length };
}

/** What the index keeps of one listed session: its facts, and its rows (none when it cannot be read: warned). */
export async function readSession(
  ctx: CliContext,
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
    loaded = await harness.store!(ctx.io.env).load(summary.id);
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
    rows: searchRows(loaded.transcript, harness.id, title),
  };
}

async function indexSession(
  ctx: CliContext,
  index: SearchIndex,
  found: FoundSession,
  sig: string | null,
  signal: AbortSignal | undefined,
): Promise<void> {
  const { summary, harness } = found;
  // Another txcript indexing the same sessions (a search beside the MCP server) may have stored it since.
  if (sig !== null && index.indexedSignature(harness.id, summary.locator, summary.id) === sig) return;
  const { facts, rows } = await readSession(ctx, found, sig);
  if (signal?.aborted === true) return;
  await index.writable();
  // Stored by another txcript while this one waited for the write lock.
  if (sig !== null && index.indexedSignature(harness.id, summary.locator, summary.id) === sig) return;
  index.put(facts, rows);
}
