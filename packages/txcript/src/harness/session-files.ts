/**
 * What the stores that keep one session per JSONL file (Claude Code, Codex)
 * do alike: summarise every file for a listing, where one unreadable file is
 * a warning and never the end of the listing; and load one file through the
 * harness's text codec and codec (or stream it), collecting both layers' warnings.
 */
import { resolve } from 'node:path';
import { isJsonObject } from '../model/json.ts';
import type { JsonObject } from '../model/common.ts';
import {
  CacheDocument,
  cacheFileFor,
  isCount,
  statSignature,
  summaryCacheDisabled,
  type StatSignature,
} from './summary-cache-file.ts';
import type {
  DiscoverOptions,
  DiscoverResult,
  LoadResult,
  SessionSummary,
  Harness,
  StreamedLoad,
  Warning,
} from './types.ts';
import { fileLines } from './jsonl-file.ts';
import { readSessionText } from './session-text.ts';

/**
 * What a listing learns from one file: the sessions it holds (none, one, or
 * a session with its inline subagents), and facts the store wants for a pass
 * over all files (JSON, so they can be cached with the sessions).
 */
export interface FileScan {
  sessions: SessionSummary[];
  notes?: JsonObject;
}

/**
 * The scans of unchanged session files, kept between listings: a file's scan
 * is served while its stat signature (summary-cache-file.ts: size, mtime,
 * ctime) is the one taken before it was read. So is the failure of a file
 * that could not be read or is not a session file: it is reported again
 * from the cache, and read again only once its size or times change (a
 * 2 GB file that fails costs its read once, not on every command).
 */
export interface SessionFileCache {
  /**
   * The stored scan of `path` while the file is unchanged (`hit`), or why it failed (`failed`),
   * else how to remember what is about to be found (`remember`; a no-op for a file too recently
   * changed to vouch for). Never throws: a file that cannot be stat'ed is a miss, and its scan
   * reports why.
   */
  lookup(
    path: string,
  ): { hit: FileScan } | { failed: string } | { remember(result: FileScan | Failure): void };
  /** Write the cache if anything changed; never throws. */
  save(): Promise<void>;
}

/** A file that could not be read or is not a session file: the warning it gave. */
export interface Failure {
  failed: string;
}

const forget = { remember: (): void => {} };

/** Errors of the moment (too many open files, no memory), not of the file: never remembered. */
const TRANSIENT = new Set(['EMFILE', 'ENFILE', 'EAGAIN', 'ENOMEM', 'EINTR', 'EBUSY']);

/** Every file read afresh, nothing written. */
export const noSessionFileCache: SessionFileCache = {
  lookup: () => forget,
  save: () => Promise.resolve(),
};

/** Bumped whenever what is stored, or how it is computed, changes: an older file is then ignored. */
export const SESSION_FILE_CACHE_VERSION = 4;

/**
 * A file's entry: `[sig, sessions]` or `[sig, sessions, notes]`, or `[sig, warning]` for a failed file; each session
 * `[id, messageCount, title, lastActivity, parentId, locator]`, null for what
 * it lacks and for a locator that is the file itself. The harness is the
 * cache's and the locator nearly always the file, so neither is stored
 * thousands of times, and a listing parses a few arrays per file, not objects.
 */
type StoredSession = [string, number | null, string | null, string | null, string | null, string | null];
type StoredEntry = [string, StoredSession[]] | [string, StoredSession[], JsonObject] | [string, string];

const isNullableString = (v: unknown): v is string | null => v === null || typeof v === 'string';

/** A stored entry, or undefined when a summary is of another harness (not cached, never expected). */
function storedEntry(sig: string, scan: FileScan, path: string, harness: string): StoredEntry | undefined {
  const sessions: StoredSession[] = [];
  for (const s of scan.sessions) {
    if (s.harness !== harness) return undefined;
    sessions.push([
      s.id,
      s.messageCount ?? null,
      s.title ?? null,
      s.lastActivity ?? null,
      s.parentId ?? null,
      s.locator === path ? null : s.locator,
    ]);
  }
  return scan.notes === undefined ? [sig, sessions] : [sig, sessions, scan.notes];
}

/** The scan a stored entry holds, when it has the shape storedEntry gives (an older or damaged file may not). */
function storedScan(v: unknown, path: string, harness: string): { sig: string; scan: FileScan } | undefined {
  if (!Array.isArray(v) || (v.length !== 2 && v.length !== 3)) return undefined;
  const [sig, stored, notes] = v as unknown[];
  if (typeof sig !== 'string' || !Array.isArray(stored)) return undefined;
  if (notes !== undefined && !isJsonObject(notes)) return undefined;
  const sessions: SessionSummary[] = [];
  for (const t of stored as unknown[]) {
    if (!Array.isArray(t) || t.length !== 6) return undefined;
    const [id, messageCount, title, lastActivity, parentId, locator] = t as unknown[];
    if (
      typeof id !== 'string' ||
      !(messageCount === null || isCount(messageCount)) ||
      !isNullableString(title) ||
      !isNullableString(lastActivity) ||
      !isNullableString(parentId) ||
      !isNullableString(locator)
    )
      return undefined;
    sessions.push({
      id,
      harness,
      locator: locator ?? path,
      ...(messageCount !== null ? { messageCount } : {}),
      ...(title !== null ? { title } : {}),
      ...(lastActivity !== null ? { lastActivity } : {}),
      ...(parentId !== null ? { parentId } : {}),
    });
  }
  return { sig, scan: notes === undefined ? { sessions } : { sessions, notes } };
}

/**
 * The session-file cache of a harness and its roots (one file per pair, in
 * the txcript cache folder); `noSessionFileCache` when `TXCRIPT_NO_CACHE` is
 * set.
 */
export interface SessionFileCacheOptions {
  /** Wall clock in ms, compared with file times for the racy window. Default Date.now. */
  now?: () => number;
}

export function openSessionFileCache(
  env: NodeJS.ProcessEnv,
  harness: string,
  roots: readonly string[],
  { now = Date.now }: SessionFileCacheOptions = {},
): SessionFileCache {
  if (summaryCacheDisabled(env)) return noSessionFileCache;
  const scope = roots.map((r) => resolve(r));
  const doc = new CacheDocument(
    cacheFileFor(env, `${harness.replace(/_/g, '-')}-files`, SESSION_FILE_CACHE_VERSION, scope.join('\0')),
    { format: `txcript ${harness} session-file cache`, version: SESSION_FILE_CACHE_VERSION, scope },
    ['files'],
  );
  return {
    lookup(path) {
      let sig: StatSignature | undefined;
      try {
        sig = statSignature(path, now(), { ctime: true, times: 'ms' });
      } catch {
        return forget; // the scan reports why the file cannot be read
      }
      if (sig === undefined) return forget;
      const stored = doc.stored('files', path);
      // The entry of a file that changed is not worth decoding.
      const same = Array.isArray(stored) && stored[0] === sig.sig;
      if (same && stored.length === 2 && typeof stored[1] === 'string') {
        doc.keep('files', path, stored);
        return { failed: stored[1] };
      }
      const hit = same ? storedScan(stored, path, harness) : undefined;
      if (hit !== undefined) {
        doc.keep('files', path, stored);
        return { hit: hit.scan };
      }
      const { racy, sig: fresh } = sig;
      if (racy) return forget;
      return {
        remember: (result) => {
          if ('failed' in result) {
            doc.put('files', path, [fresh, result.failed]);
            return;
          }
          const entry = storedEntry(fresh, result, path, harness);
          if (entry !== undefined) doc.put('files', path, entry);
        },
      };
    },
    save: () => doc.save(),
  };
}

export interface ScannedFiles extends DiscoverResult {
  /** Each file's scan (cached or fresh), for a pass over all of them. */
  scans: { path: string; scan: FileScan }[];
}

/**
 * Scan `files` one by one. `scan` returns what a file holds, or a reason the
 * file is not a session (a warning); a thrown error is reported as unreadable.
 * Unchanged files are served from the cache `openCache` gives, which is saved at the end.
 */
export async function summarizeSessionFiles<F>(
  files: readonly F[],
  pathOf: (file: F) => string,
  scan: (file: F) => Promise<FileScan | string>,
  options?: DiscoverOptions,
  openCache: () => SessionFileCache = () => noSessionFileCache,
): Promise<ScannedFiles> {
  const sessions: SessionSummary[] = [];
  const warnings: Warning[] = [];
  const scans: ScannedFiles['scans'] = [];
  // `--no-cache`: the cache file is not even read.
  const cached = options?.cache === false ? noSessionFileCache : openCache();
  let done = 0;
  for (const file of files) {
    const path = pathOf(file);
    // Served from the cache without a turn of the event loop: a warm listing is thousands of hits.
    const looked = cached.lookup(path);
    if ('hit' in looked) {
      for (const s of looked.hit.sessions) sessions.push(s);
      scans.push({ path, scan: looked.hit });
    } else if ('failed' in looked) {
      warnings.push({ source: path, message: `${looked.failed} (not read again until the file changes)` });
    } else {
      try {
        const result = await scan(file);
        if (typeof result === 'string') {
          warnings.push({ source: path, message: result });
          looked.remember({ failed: result });
        } else {
          looked.remember(result);
          for (const s of result.sessions) sessions.push(s);
          scans.push({ path, scan: result });
        }
      } catch (e) {
        const message = `unreadable, skipped: ${(e as Error).message}`;
        warnings.push({ source: path, message });
        if (!TRANSIENT.has((e as NodeJS.ErrnoException).code ?? '')) looked.remember({ failed: message });
      }
    }
    options?.onProgress?.(++done, files.length);
  }
  await cached.save();
  return { sessions, warnings, scans };
}

/** Read a session file and convert it to Common (session-text.ts: line by line when the harness can); `warnings` come first (e.g. from finding the file). */
export async function loadSessionFile<R>(
  file: string,
  id: string,
  harness: Pick<Harness<R>, 'text' | 'codec' | 'readCommon'>,
  warnings: Warning[] = [],
): Promise<LoadResult> {
  const codecWarnings: Warning[] = [];
  const read = await readSessionText(harness, { file }, file, {
    sessionId: id,
    source: file,
    onWarning: (w) => codecWarnings.push(w),
  });
  warnings.push(...read.warnings, ...codecWarnings);
  return { transcript: read.transcript, source: file, warnings };
}

/** `loadSessionFile` streamed (Store `stream`), for a harness with `streamCommon`. */
export function streamSessionFile(
  file: string,
  id: string,
  streamCommon: NonNullable<Harness['streamCommon']>,
  warnings: Warning[] = [],
): StreamedLoad {
  const codecWarnings: Warning[] = [];
  const streamed = streamCommon(() => fileLines(file), file, {
    sessionId: id,
    source: file,
    onWarning: (w) => codecWarnings.push(w),
  });
  warnings.push(...streamed.warnings, ...codecWarnings);
  return { ...streamed, warnings, source: file };
}
