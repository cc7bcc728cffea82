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
import { parseQuery } from './query.ts';
import { type RefreshStats, refreshIndex } from './refresh.ts';

export interface IndexChoice {
  /** false (`--no-index`): scan every session now; the index file is neither read nor written. */
  index?: boolean;
}

/** An open index that refreshes itself on demand; the MCP server and the picker keep one open. */
export class SessionIndex {
  private index: SearchIndex | undefined;
  private refreshedAt = -Infinity;
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
    if (this.index !== undefined) return this.index;
    if (this.file === undefined) return (this.index = SearchIndex.inMemory());
    try {
      this.index = SearchIndex.open(this.file, (t) => this.note(t));
    } catch (err) {
      if (isCorruption(err)) throw err;
      // A cache folder that cannot be written (read-only, full, not a folder) costs speed, not the search.
      this.note(
        `cannot use the search index ${this.file} (${err instanceof Error ? err.message : String(err)}); scanning every session instead`,
      );
      return (this.index = SearchIndex.inMemory());
    }
    removeOlderIndexFiles(this.ctx.io.env, (t) => this.note(t));
    return this.index;
  }

  /**
   * Run `use` on an index refreshed within `maxAgeMs` (0: now). A damaged
   * file found on the way is deleted, and the index built again.
   */
  async use<T>(from: string | undefined, use: (index: SearchIndex) => T, maxAgeMs = 0): Promise<T> {
    try {
      return await this.fresh(from, use, maxAgeMs);
    } catch (err) {
      if (this.file === undefined || !isCorruption(err)) throw err;
      this.close();
      this.note(
        `the search index ${this.file} was rebuilt: it is damaged (${err instanceof Error ? err.message : String(err)})`,
      );
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${this.file}${suffix}`, { force: true });
      return this.fresh(from, use, 0);
    }
  }

  private async fresh<T>(
    from: string | undefined,
    use: (index: SearchIndex) => T,
    maxAgeMs: number,
  ): Promise<T> {
    const index = this.opened();
    // One refresh of every harness covers a later call for one of them.
    const age = Date.now() - this.refreshedAt;
    if (this.refreshedAt === -Infinity || maxAgeMs <= 0 || age > maxAgeMs || from !== undefined) {
      this.lastStats = await refreshIndex(this.ctx, index, from);
      if (from === undefined) this.refreshedAt = Date.now();
    }
    return use(index);
  }

  /** What the last refresh did (benchmarks, tests). */
  lastStats: RefreshStats | undefined;

  close(): void {
    this.index?.close();
    this.index = undefined;
    this.refreshedAt = -Infinity;
  }
}

export interface SearchRequest extends IndexChoice {
  query: string;
  from?: string;
  filters: Omit<HitFilters, 'harnesses'>;
}

/** One query, start to end: parse (a bad query fails before any scan), refresh, search, close. */
export async function searchOnce(ctx: CliContext, request: SearchRequest): Promise<Hit[]> {
  const query = parseQuery(request.query);
  const filters = await filtersFor(ctx, request.from, request.filters);
  const sessions = new SessionIndex(ctx, request);
  try {
    return await sessions.use(request.from, (index) => findHits(index, query, filters));
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
