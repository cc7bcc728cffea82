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
import {
  type FoundSession,
  type ListedSession,
  listedHarnessIds,
  listSessions,
  withHarnesses,
} from '../cli/sessions.ts';
import type { SearchIndex } from './index-db.ts';
import { readSession } from './session-read.ts';

/** A folder locator (a Grok Bot agent without a transcript) changes through its ledger, which the folder's times miss. */
const FOLDER_SOURCES = ['store.db', 'store.db-wal'];

/**
 * The signature of a session source and its listed facts, or null when it
 * cannot be vouched for (racy, or not a file on this machine).
 */
export function sourceSignature(summary: SessionSummary, now: number): string | null {
  const parts: string[] = [];
  try {
    // One stat of the locator says both its signature and whether it is a folder.
    const own = statSignature(summary.locator, now, { ctime: true });
    if (own === undefined) return null;
    if (!own.directory) {
      if (own.racy) return null;
      parts.push(own.sig);
    } else {
      // A folder's own times change with any file made in it (SQLite's `-shm` beside the ledger): its ledger says.
      parts.push('folder');
      for (const name of FOLDER_SOURCES) {
        const wal = name.endsWith('-wal');
        // SQLite gives a reader's WAL file its database's owner and mode, which changes its ctime: not a change.
        const sig = statSignature(join(summary.locator, name), now, { ctime: !wal });
        // An empty WAL holds nothing the database does not (a reader's first open makes one): as none.
        if (sig === undefined || (wal && sig.size === 0)) {
          parts.push('-');
          continue;
        }
        if (sig.racy) return null;
        parts.push(sig.sig);
      }
    }
  } catch {
    return null;
  }
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

/**
 * What a refresh has to do: the sessions listed, those to read again with
 * their signatures (and their harnesses loaded), those gone. Listing loads
 * the stores alone: the codecs are loaded only when a session is to be read.
 */
export interface RefreshPlan {
  sessions: ListedSession[];
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
  const scanned = await listedHarnessIds(ctx, from);
  const { sessions, warnings } = await listSessions(ctx, from);
  for (const w of warnings) ctx.warnListing(w);
  const known = new Map(index.sessions(scanned).map((s) => [sessionKey(s.harness, s.locator, s.id), s]));
  // The injected clock, so tests can place sources outside the racy window.
  const now = ctx.io.now().getTime();
  const changed: ListedSession[] = [];
  const sigs: Array<string | null> = [];
  const staleSources = new Set<string>();
  for (const listed of sessions) {
    const key = sessionKey(listed.harness.id, listed.summary.locator, listed.summary.id);
    const before = known.get(key);
    known.delete(key);
    const sig = sourceSignature(listed.summary, now);
    if (before !== undefined && before.sig !== null && before.sig === sig) continue;
    changed.push(listed);
    sigs.push(sig);
    staleSources.add(listed.summary.locator);
  }
  const found = await withHarnesses(ctx, changed);
  const stale = found.map((f, i) => ({ found: f, sig: sigs[i]! }));
  let staleBytes = 0;
  for (const locator of staleSources) staleBytes += sourceBytes(locator);
  return { sessions, stale, gone: [...known.values()].map((s) => s.key), staleBytes };
}

/** Bytes of a session source: a file's size; a folder's ledger (FOLDER_SOURCES). */
export function sourceBytes(locator: string): number {
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
