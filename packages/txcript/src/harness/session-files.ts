/**
 * What the stores that keep one session per JSONL file (Claude Code, Codex)
 * do alike: summarise every file for a listing, where one unreadable file is
 * a warning and never the end of the listing; and load one file through the
 * harness's text codec and codec, collecting both layers' warnings.
 */
import { promises as fs } from 'node:fs';
import { resolve } from 'node:path';
import { assertLoadable } from '../fs/memory-budget.ts';
import { isJsonObject } from '../model/json.ts';
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
  TextCodec,
  Warning,
  WarningCodec,
} from './types.ts';

/**
 * The summaries of unchanged session files, kept between listings: a file's
 * summary is served while its stat signature (summary-cache-file.ts) is the
 * one taken before it was read. Only summaries are kept; a file that is not a
 * session, or cannot be read, is looked at again (and reported) every time.
 */
export interface SessionFileCache {
  summary(path: string, summarize: () => Promise<SessionSummary | string>): Promise<SessionSummary | string>;
  /** Write the cache if anything changed; never throws. */
  save(): Promise<void>;
}

/** Every file read afresh, nothing written. */
export const noSessionFileCache: SessionFileCache = {
  summary: (_path, summarize) => summarize(),
  save: () => Promise.resolve(),
};

/** Bumped whenever what is stored, or how it is computed, changes: an older file is then ignored. */
export const SESSION_FILE_CACHE_VERSION = 1;

interface CachedSummary {
  sig: string;
  summary: SessionSummary;
}

function cachedSummary(v: unknown): CachedSummary | undefined {
  if (!isJsonObject(v) || typeof v.sig !== 'string' || !isJsonObject(v.summary)) return undefined;
  const s = v.summary;
  const ok =
    typeof s.id === 'string' &&
    typeof s.harness === 'string' &&
    typeof s.locator === 'string' &&
    (s.messageCount === undefined || isCount(s.messageCount)) &&
    isOptionalString(s.title) &&
    isOptionalString(s.lastActivity) &&
    isOptionalString(s.parentId);
  return ok ? (v as unknown as CachedSummary) : undefined;
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
    async summary(path, summarize) {
      let sig: StatSignature | undefined;
      try {
        sig = statSignature(path, now(), { ctime: true });
      } catch {
        return summarize(); // the summary reports why the file cannot be read
      }
      if (sig === undefined) return summarize();
      const hit = cachedSummary(doc.stored('files', path));
      if (hit !== undefined && hit.sig === sig.sig) {
        doc.keep('files', path, hit);
        return hit.summary;
      }
      const fresh = await summarize();
      if (typeof fresh !== 'string' && !sig.racy) doc.put('files', path, { sig: sig.sig, summary: fresh });
      return fresh;
    },
    save: () => doc.save(),
  };
}

/**
 * Summarise `files` one by one. `summarize` returns a summary, or a reason the
 * file is not a session (a warning); a thrown error is reported as unreadable.
 * Unchanged files are served from the cache `openCache` gives, which is saved at the end.
 */
export async function summarizeSessionFiles<F>(
  files: readonly F[],
  pathOf: (file: F) => string,
  summarize: (file: F) => Promise<SessionSummary | string>,
  options?: DiscoverOptions,
  openCache: () => SessionFileCache = () => noSessionFileCache,
): Promise<DiscoverResult> {
  const sessions: SessionSummary[] = [];
  const warnings: Warning[] = [];
  // `--no-cache`: the cache file is not even read.
  const cached = options?.cache === false ? noSessionFileCache : openCache();
  let done = 0;
  for (const file of files) {
    try {
      const summary = await cached.summary(pathOf(file), () => summarize(file));
      if (typeof summary === 'string') warnings.push({ source: pathOf(file), message: summary });
      else sessions.push(summary);
    } catch (e) {
      warnings.push({ source: pathOf(file), message: `unreadable, skipped: ${(e as Error).message}` });
    }
    options?.onProgress?.(++done, files.length);
  }
  await cached.save();
  return { sessions, warnings };
}

/** Read a session file and convert it to Common; `warnings` come first (e.g. from finding the file). */
export async function loadSessionFile<R>(
  file: string,
  id: string,
  harness: { text: TextCodec<R>; codec: WarningCodec<R> },
  warnings: Warning[] = [],
): Promise<LoadResult> {
  assertLoadable(file, (await fs.stat(file)).size);
  const parsed = harness.text.parse(await fs.readFile(file, 'utf8'), file);
  warnings.push(...parsed.warnings);
  const transcript = harness.codec.toCommon(parsed.records, {
    sessionId: id,
    source: file,
    onWarning: (w) => warnings.push(w),
  });
  return { transcript, source: file, warnings };
}
