/**
 * Running a query against the index: candidates from FTS5, checked in
 * JavaScript where trigrams cannot decide (short terms, typos), ranked by
 * BM25 with the kinds weighted (a title or the user's words count more than a
 * tool's output), ties broken by recency; then each hit's kind and snippet.
 */
import { KINDS, type Kind } from './documents.ts';
import { type IndexedSession, type SearchIndex, sessionFromRow, splitRowId } from './index-db.ts';
import {
  type Query,
  type Term,
  decidedByIndex,
  ftsExpression,
  matchesTexts,
  mergeRanges,
  occurrences,
} from './query.ts';

/** BM25 weight of each kind, in KINDS order. */
const WEIGHTS: Record<Kind, number> = {
  title: 8,
  user: 4,
  assistant: 3,
  thinking: 1.5,
  tool_input: 1.2,
  tool_output: 0.6,
};

export interface HitFilters {
  harnesses?: readonly string[];
  sinceMs?: number;
  untilMs?: number;
  /** An absolute folder: sessions whose working folder is it or under it. */
  cwd?: string;
  limit: number;
  /** Past this many matching messages, newest first rather than by BM25 (default BROAD_MATCHES). */
  broadMatches?: number;
}

export interface Snippet {
  text: string;
  /** [start, end) ranges of `text` that matched. */
  highlights: Array<[number, number]>;
}

export interface Hit {
  session: IndexedSession;
  /** 0: the title; else the 1-based message number. */
  message: number;
  /** What `view`, `export` and `continue` accept: `id`, `id#N` or `id#N-M`. */
  ref: string;
  kind: Kind;
  snippet: Snippet;
  /** Lower is better (BM25 as SQLite gives it); 0 when ranked by recency alone. */
  score: number;
}

/**
 * Lower-case without changing the length, so offsets found in the folded text
 * are offsets in the original (a character whose lower case is longer stays).
 */
export function foldCase(text: string): string {
  const lower = text.toLowerCase();
  if (lower.length === text.length) return lower;
  let out = '';
  for (const ch of text) {
    const l = ch.toLowerCase();
    out += l.length === ch.length ? l : ch;
  }
  return out;
}

const VERIFY = 'txcript_matches';
/** Rows a query with a `~` or a short term checks in JavaScript, best first by the index. */
export const CANDIDATES = 2_000;
const MAX_ROW = (1 << 24) - 1;
/** Past this many matching messages, a query is ranked newest first rather than by BM25. */
export const BROAD_MATCHES = 1_000;

/**
 * Whether the FTS expression matches more than `bound` messages: counted in
 * rowid order, which FTS5 can stop early, unlike a BM25 ranking.
 */
function isBroad(index: SearchIndex, fts: string, bound: number): boolean {
  const count = index.db
    .prepare(
      'SELECT count(*) FROM (SELECT 1 FROM messages WHERE messages MATCH ? ORDER BY rowid DESC LIMIT ?)',
    )
    .pluck()
    .get(fts, bound + 1) as number;
  return count > bound;
}

export function findHits(index: SearchIndex, query: Query, filters: HitFilters): Hit[] {
  const { db } = index;
  const fts = ftsExpression(query);
  const where: string[] = [];
  const params: Record<string, unknown> = { limit: filters.limit };
  if (fts !== undefined) params.fts = fts;
  const checked = !decidedByIndex(query);
  if (checked) {
    db.function(VERIFY, { varargs: true, deterministic: true }, (...texts: unknown[]) =>
      matchesTexts(
        query,
        texts.map((t) => foldCase(typeof t === 'string' ? t : '')),
      )
        ? 1
        : 0,
    );
    where.push(`${VERIFY}(${KINDS.map((k) => `m.${k}`).join(', ')})`);
  }
  if (filters.harnesses !== undefined) {
    const names = filters.harnesses.map((h, i) => {
      params[`h${i}`] = h;
      return `@h${i}`;
    });
    where.push(`s.harness IN (${names.join(', ')})`);
  }
  if (filters.sinceMs !== undefined) {
    where.push('s.last_activity_ms >= @since');
    params.since = filters.sinceMs;
  }
  if (filters.untilMs !== undefined) {
    where.push('s.last_activity_ms <= @until');
    params.until = filters.untilMs;
  }
  if (filters.cwd !== undefined) {
    where.push("(s.cwd = @cwd OR substr(s.cwd, 1, length(@cwd) + 1) = @cwd || '/')");
    params.cwd = filters.cwd.replace(/\/+$/, '') || '/';
  }
  const and = (clauses: readonly string[]) => clauses.map((c) => ` AND ${c}`).join('');
  const score = `bm25(messages, ${KINDS.map((k) => WEIGHTS[k]).join(', ')})`;
  let sql: string;
  if (fts === undefined) {
    // No term the index can narrow by: the most recent sessions first, stopping at `limit` hits.
    sql = `
      SELECT m.rowid AS rowid, m.ref AS ref, 0 AS score, s.*
      FROM sessions s INDEXED BY sessions_by_activity
      CROSS JOIN messages m ON m.rowid BETWEEN (s.key << 24) AND (s.key << 24) + ${MAX_ROW}
      WHERE 1${and(where)}
      ORDER BY s.last_activity_ms DESC
      LIMIT @limit`;
  } else {
    // BM25 scores every match before the first is returned: a broad query takes the newest instead.
    const broad = isBroad(index, fts, filters.broadMatches ?? BROAD_MATCHES);
    const order = broad ? 'm.rowid DESC' : 'score, s.last_activity_ms DESC, m.rowid';
    // BM25's document frequencies cost a walk over every match too: a broad query is not scored.
    const rowScore = broad ? '0' : score;
    if (!checked) {
      sql = `
        SELECT m.rowid AS rowid, m.ref AS ref, ${rowScore} AS score, s.*
        FROM messages m CROSS JOIN sessions s ON s.key = (m.rowid >> 24)
        WHERE messages MATCH @fts${and(where)}
        ORDER BY ${order}
        LIMIT @limit`;
    } else {
      // The check in JavaScript sees the CANDIDATES best (or newest) rows the index found, not all.
      sql = `
        WITH c AS (
          SELECT rowid, ${rowScore} AS score FROM messages WHERE messages MATCH @fts
          ORDER BY ${broad ? 'rowid DESC' : 'score'} LIMIT ${CANDIDATES})
        SELECT m.rowid AS rowid, m.ref AS ref, c.score AS score, s.*
        FROM c CROSS JOIN messages m ON m.rowid = c.rowid CROSS JOIN sessions s ON s.key = (m.rowid >> 24)
        WHERE 1${and(where)}
        ORDER BY ${order}
        LIMIT @limit`;
    }
  }
  const rows = db.prepare(sql).safeIntegers(true).all(params) as Array<Record<string, unknown>>;
  const hits: Hit[] = [];
  for (const row of rows) {
    const rowid = row.rowid as bigint;
    const { message } = splitRowId(rowid);
    const texts = index.texts(rowid);
    if (texts === undefined) continue;
    const session = sessionFromRow(row);
    const kind = matchedKind(query, texts);
    const ref = message === 0 ? session.id : `${session.id}#${String(row.ref)}`;
    hits.push({
      session,
      message,
      ref,
      kind,
      snippet: snippetOf(query, texts[kind]),
      score: Number(row.score),
    });
  }
  return hits;
}

/** The kind holding the most of the query's terms; among equals, the one listed first. */
function matchedKind(query: Query, texts: Record<Kind, string>): Kind {
  const wanted = query.terms.filter((t) => !t.negated);
  let best: Kind = KINDS.find((k) => texts[k] !== '') ?? 'user';
  let bestCount = -1;
  for (const kind of KINDS) {
    if (texts[kind] === '') continue;
    const folded = foldCase(texts[kind]);
    const count = wanted.filter((t) => occurrences(t, folded, 1).length > 0).length;
    if (count > bestCount) {
      best = kind;
      bestCount = count;
    }
  }
  return best;
}

const SNIPPET_BEFORE = 60;
const SNIPPET_LENGTH = 200;

/** Where in `text` each of `terms` occurs, sorted, overlaps merged. */
function highlightsIn(terms: readonly Term[], text: string): Array<[number, number]> {
  const folded = foldCase(text);
  return mergeRanges(terms.flatMap((t) => occurrences(t, folded, 50)));
}

/** A one-line window of `text` around the first match, with every match in it marked. */
export function snippetOf(query: Query, text: string): Snippet {
  const terms = query.terms.filter((t) => !t.negated);
  const first = highlightsIn(terms, text)[0];
  let start = Math.max(0, (first?.[0] ?? 0) - SNIPPET_BEFORE);
  // Start at a word boundary when one is near.
  if (start > 0) {
    const space = text.slice(start, start + 15).search(/\s/);
    if (space >= 0) start += space + 1;
  }
  const end = Math.min(text.length, Math.max(start + SNIPPET_LENGTH, first?.[1] ?? 0));
  const window = `${start > 0 ? '…' : ''}${text.slice(start, end).replace(/\s+/g, ' ').trim()}${end < text.length ? '…' : ''}`;
  return { text: window, highlights: highlightsIn(terms, window) };
}
