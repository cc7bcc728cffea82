/**
 * Search as the commands use it: an index that is up to date when asked,
 * whether the file in the cache folder (rebuilt with a note when it is
 * damaged or old) or, with `--no-index` or `TXCRIPT_NO_CACHE`, one built in
 * memory from a direct scan and thrown away.
 */
import { rmSync } from 'node:fs';
import type { CliContext } from '../cli/context.ts';
import { scannedHarnesses } from '../cli/sessions.ts';
import { summaryCacheDisabled } from '../harness/summary-cache-file.ts';
import { type HitFilters, findHits, type Hit } from './hits.ts';
import {
  type IndexedSession,
  SearchIndex,
  indexFile,
  isCorruption,
  removeOlderIndexFiles,
} from './index-db.ts';
import { startBuild } from './index-build.ts';
import { type Query, parseQuery } from './query.ts';
import {
  type RefreshOptions,
  type RefreshPlan,
  type RefreshStats,
  planRefresh,
  refreshIndex,
} from './refresh.ts';
import { scanHits } from './scan.ts';
import { discoverSessions } from '../cli/sessions.ts';

/**
 * Sources to read into the index past which a search answers from a scan and
 * leaves the index to a background build: refreshing reads about 10 MB a
 * second (each session decoded whole and written to two full-text indexes),
 * a scan's byte pass ten times that and more.
 */
export const INLINE_REFRESH_BYTES = 4 * 1024 * 1024;

export interface IndexChoice {
  /** false (`--no-index`): scan every session now; the index file is neither read nor written. */
  index?: boolean;
}

/**
 * An open index that refreshes itself on demand; the MCP server and the picker keep one open.
 * One refresh runs at a time: a call that arrives during one waits for it, then refreshes again
 * only if what it asked for is still not fresh enough.
 */
export class SessionIndex {
  private index: SearchIndex | undefined;
  /** When the last refresh of each scope (a harness, or `ALL`, which covers every one) started. */
  private readonly refreshedAt = new Map<string, number>();
  /** The refresh under way. */
  private running: Promise<void> | undefined;
  /** Aborted by `stop` and `close`, for good. */
  private readonly stopping = new AbortController();
  private readonly watchers = new Set<(done: number, total: number) => void>();
  private readonly file: string | undefined;

  constructor(
    private readonly ctx: CliContext,
    choice: IndexChoice = {},
  ) {
    const direct = choice.index === false || summaryCacheDisabled(ctx.io.env);
    this.file = direct ? undefined : indexFile(ctx.io.env);
  }

  private note(text: string): void {
    this.ctx.io.stderr.write(`${this.ctx.err.yellow(`txcript: note: ${text}`)}\n`);
  }

  private opened(): SearchIndex {
    this.stopping.signal.throwIfAborted();
    if (this.index !== undefined) return this.index;
    if (this.file === undefined) return (this.index = SearchIndex.inMemory());
    try {
      this.index = SearchIndex.open(this.file, (t) => this.note(t));
    } catch (err) {
      if (isCorruption(err)) throw err;
      // A cache folder that cannot be written (read-only, full, not a folder) costs speed, not the search.
      this.note(
        `cannot use the search index ${this.file} (${errorText(err)}); scanning every session instead`,
      );
      return (this.index = SearchIndex.inMemory());
    }
    removeOlderIndexFiles(this.ctx.io.env, (t) => this.note(t));
    return this.index;
  }

  /**
   * Run `use` on an index refreshed within `maxAgeMs` (0: now) for `from`
   * (default every harness). A damaged file found on the way is deleted, and
   * the index built again.
   */
  async use<T>(
    from: string | undefined,
    use: (index: SearchIndex) => T,
    maxAgeMs = 0,
    plan?: RefreshPlan,
  ): Promise<T> {
    try {
      await this.fresh(from, maxAgeMs, plan);
      return use(this.opened());
    } catch (err) {
      if (!this.damaged(err)) throw err;
      await this.idle();
      this.rebuild(err);
      await this.fresh(from, 0);
      return use(this.opened());
    }
  }

  /**
   * One query's hits: from the index brought up to date, or, when that
   * would mean reading more than INLINE_REFRESH_BYTES of sources and the
   * context can start a background build, from a scan of the sessions while
   * `txcript index` builds the index for the next search.
   */
  async search(from: string | undefined, query: Query, filters: HitFilters): Promise<Hit[]> {
    let plan: RefreshPlan | undefined;
    try {
      plan = await planRefresh(this.ctx, this.opened(), from);
    } catch (err) {
      // A damaged file: `use` rebuilds it.
      if (!this.damaged(err)) throw err;
    }
    if (plan !== undefined) {
      // No file to keep (the cache folder cannot be used): a scan, as --no-index.
      if (this.index?.db.memory === true) return scanHits(this.ctx, query, filters, plan.sessions);
      const { startIndexBuild } = this.ctx.io;
      if (startIndexBuild !== undefined && plan.staleBytes > INLINE_REFRESH_BYTES) {
        const hits = await scanHits(this.ctx, query, filters, plan.sessions);
        startBuild(this.ctx.io.env, startIndexBuild);
        return hits;
      }
    }
    return this.use(from, (index) => findHits(index, query, filters), 0, plan);
  }

  /**
   * Start bringing every harness up to date now, in the background (the MCP
   * server at start, so that the first call rarely waits for a first index).
   * A failure is a note; the next call tries again.
   */
  warm(): void {
    this.fresh(undefined, Infinity).catch((err: unknown) => {
      if (!this.stopping.signal.aborted)
        this.note(`could not index the sessions: ${errorText(err)}; the next search tries again`);
    });
  }

  /** Be told of each source a refresh reads (done of total), until the returned function is called. */
  watch(watcher: (done: number, total: number) => void): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  private damaged(err: unknown): boolean {
    return this.file !== undefined && isCorruption(err);
  }

  private rebuild(err: unknown): void {
    this.index?.close();
    this.index = undefined;
    this.refreshedAt.clear();
    this.note(`the search index ${this.file} was rebuilt: it is damaged (${errorText(err)})`);
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${this.file}${suffix}`, { force: true });
  }

  /** Until no refresh runs (one that a waiting call started after another ended included). */
  private async idle(): Promise<void> {
    while (this.running !== undefined) await this.running.catch(() => undefined);
  }

  private async fresh(from: string | undefined, maxAgeMs: number, plan?: RefreshPlan): Promise<void> {
    // Keyed by the harness id, so that an alias and the id share one freshness.
    const scope = from === undefined ? ALL : (await this.ctx.findHarness(from)).id;
    // Not `await this.idle()`: that yields even when nothing runs, and calls made together would
    // each start a refresh.
    while (this.running !== undefined) await this.running.catch(() => undefined);
    this.stopping.signal.throwIfAborted();
    const at = Math.max(this.refreshedAt.get(ALL) ?? -Infinity, this.refreshedAt.get(scope) ?? -Infinity);
    if (at !== -Infinity && maxAgeMs > 0 && Date.now() - at <= maxAgeMs) return;
    // No await since the loop: no other refresh can have started.
    this.running = this.refresh(scope === ALL ? undefined : scope, scope, plan).finally(
      () => (this.running = undefined),
    );
    return this.running;
  }

  private async refresh(from: string | undefined, scope: string, plan?: RefreshPlan): Promise<void> {
    const signal = this.stopping.signal;
    const options: RefreshOptions = {
      signal,
      onProgress: (done, total) => this.watchers.forEach((watcher) => watcher(done, total)),
    };
    // Stamped with its start: a source changed while it ran may not be in it.
    const started = Date.now();
    try {
      this.lastStats = await refreshIndex(this.ctx, this.opened(), from, options, plan);
    } catch (err) {
      if (!this.damaged(err) || signal.aborted) throw err;
      this.rebuild(err);
      this.lastStats = await refreshIndex(this.ctx, this.opened(), from, options);
    }
    this.refreshedAt.set(scope, started);
  }

  /** What the last refresh did (benchmarks, tests). */
  lastStats: RefreshStats | undefined;

  /**
   * Stop a refresh under way (what it stored so far is kept; the session it
   * was reading is left for next time), then close.
   */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.idle();
    this.close();
  }

  /** Close at once: a refresh under way fails, and so does every later call. */
  close(): void {
    this.stopping.abort();
    this.index?.close();
    this.index = undefined;
  }
}

const ALL = '';

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export interface SearchRequest extends IndexChoice {
  query: string;
  from?: string;
  filters: Omit<HitFilters, 'harnesses'>;
}

/** One query, start to end: parse (a bad query fails before any scan), then the index or a scan, close. */
export async function searchOnce(ctx: CliContext, request: SearchRequest): Promise<Hit[]> {
  const query = parseQuery(request.query);
  const filters = await filtersFor(ctx, request.from, request.filters);
  if (request.index === false || summaryCacheDisabled(ctx.io.env)) {
    const { sessions, warnings } = await discoverSessions(ctx, request.from);
    for (const w of warnings) ctx.warnListing(w);
    return scanHits(ctx, query, filters, sessions);
  }
  const sessions = new SessionIndex(ctx, request);
  try {
    return await sessions.search(request.from, query, filters);
  } finally {
    sessions.close();
  }
}

/** The filters with `--from` (an id or alias) as the harness id the index stores. */
export async function filtersFor(
  ctx: CliContext,
  from: string | undefined,
  filters: Omit<HitFilters, 'harnesses'>,
): Promise<HitFilters> {
  if (from === undefined) return filters;
  const harnesses = (await scannedHarnesses(ctx, from)).map((h) => h.id);
  return { ...filters, harnesses };
}

export interface SessionBounds {
  sinceMs?: number;
  untilMs?: number;
  cwd?: string;
  limit: number;
}

/** Sessions within the bounds, most recent first (a listing, or the picker before anything is typed). */
export function recentSessions(sessions: readonly IndexedSession[], bounds: SessionBounds): IndexedSession[] {
  const { sinceMs, untilMs, cwd } = bounds;
  const dir = cwd?.replace(/\/+$/, '');
  return sessions
    .filter((s) => sinceMs === undefined || (s.lastActivityMs !== null && s.lastActivityMs >= sinceMs))
    .filter((s) => untilMs === undefined || (s.lastActivityMs !== null && s.lastActivityMs <= untilMs))
    .filter((s) => dir === undefined || (s.cwd !== null && (s.cwd === dir || s.cwd.startsWith(`${dir}/`))))
    .sort(
      (a, b) => (b.lastActivityMs ?? -Infinity) - (a.lastActivityMs ?? -Infinity) || a.id.localeCompare(b.id),
    )
    .slice(0, bounds.limit);
}

export type { Hit, IndexedSession };
