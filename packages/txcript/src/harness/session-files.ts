/**
 * What the stores that keep one session per JSONL file (Claude Code, Codex)
 * do alike: summarise every file for a listing, where one unreadable file is
 * a warning and never the end of the listing; and load one file through the
 * harness's text codec and codec, collecting both layers' warnings.
 */
import { resolve } from 'node:path';
import { isJsonObject } from '../model/json.ts';
import type { JsonObject } from '../model/common.ts';
import {
  CacheDocument,
  cacheFileFor,
  isCount,
  isOptionalString,
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
  Warning,
} from './types.ts';
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
 * is served while its stat signature (summary-cache-file.ts) is the one
 * taken before it was read. A file that cannot be read, or is not a session
 * file (a reason instead of a scan), is looked at again (and reported) every time.
 */
export interface SessionFileCache {
  scan(path: string, scan: () => Promise<FileScan | string>): Promise<FileScan | string>;
  /** Write the cache if anything changed; never throws. */
  save(): Promise<void>;
}

/** Every file read afresh, nothing written. */
export const noSessionFileCache: SessionFileCache = {
  scan: (_path, scan) => scan(),
  save: () => Promise.resolve(),
};

/** Bumped whenever what is stored, or how it is computed, changes: an older file is then ignored. */
export const SESSION_FILE_CACHE_VERSION = 2;

interface CachedScan {
  sig: string;
  scan: FileScan;
}

function isStoredSummary(s: unknown): boolean {
  if (!isJsonObject(s)) return false;
  const o: JsonObject = s;
  return (
    typeof o.id === 'string' &&
    typeof o.harness === 'string' &&
    typeof o.locator === 'string' &&
    (o.messageCount === undefined || isCount(o.messageCount)) &&
    isOptionalString(o.title) &&
    isOptionalString(o.lastActivity) &&
    isOptionalString(o.parentId)
  );
}

function cachedScan(v: unknown): CachedScan | undefined {
  if (!isJsonObject(v)) return undefined;
  const o: JsonObject = v;
  if (typeof o.sig !== 'string' || !isJsonObject(o.scan)) return undefined;
  const { sessions, notes } = o.scan;
  const ok =
    Array.isArray(sessions) &&
    sessions.every(isStoredSummary) &&
    (notes === undefined || isJsonObject(notes));
  return ok ? (o as unknown as CachedScan) : undefined;
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
    async scan(path, scan) {
      let sig: StatSignature | undefined;
      try {
        sig = statSignature(path, now(), { ctime: true });
      } catch {
        return scan(); // the scan reports why the file cannot be read
      }
      if (sig === undefined) return scan();
      const hit = cachedScan(doc.stored('files', path));
      if (hit !== undefined && hit.sig === sig.sig) {
        doc.keep('files', path, hit);
        return hit.scan;
      }
      const fresh = await scan();
      if (typeof fresh !== 'string' && !sig.racy) doc.put('files', path, { sig: sig.sig, scan: fresh });
      return fresh;
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
    try {
      const result = await cached.scan(path, () => scan(file));
      if (typeof result === 'string') warnings.push({ source: path, message: result });
      else {
        sessions.push(...result.sessions);
        scans.push({ path, scan: result });
      }
    } catch (e) {
      warnings.push({ source: path, message: `unreadable, skipped: ${(e as Error).message}` });
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
