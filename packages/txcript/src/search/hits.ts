/**
 * Running a query against the index: every match from FTS5 newest first, up
 * to the broad bound; a narrow query's matches checked in JavaScript where
 * trigrams cannot decide (short terms, typos, exclusions) and ranked by BM25
 * (ranking.ts) with the kinds weighted (a title or the user's words count
 * more than a tool's output), ties broken by recency; a broad query's newest
 * matches unscored; then each hit's kind and snippet.
 */
import { KINDS, type Kind } from './kinds.ts';
import { type IndexedSession, type SearchIndex, sessionFromRow, splitRowId } from './index-db.ts';
import { Bm25, indexTotals, scoredPhrases } from './ranking.ts';
import {
  foldCase,
  type Query,
  type Term,
  TRIGRAM,
  decidedByIndex,
  ftsExpression,
  matchesTexts,
  mergeRanges,
  occurrences,
} from './query.ts';

export interface HitFilters {
  harnesses?: readonly string[];
  sinceMs?: number;
  untilMs?: number;
  /** An absolute folder: sessions whose working folder is it or under it. */
  cwd?: string;
  limit: number;
  /** Past this many matching messages, newest first rather than by BM25 (default BROAD_MATCHES). */
  broadMatches?: number;
  /** false: the trigram index alone, never the word index (to compare the two: tests, bench). */
  wordIndex?: boolean;
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

export { foldCase };

const VERIFY = 'txcript_matches';
/** Rows a query with a `~` or a short term checks in JavaScript, best first by the index. */
export const CANDIDATES = 2_000;
const MAX_ROW = (1 << 24) - 1;
/** Past this many matching messages, a query is ranked newest first rather than by BM25. */
export const BROAD_MATCHES = 1_000;

/**
 * Where the matches of a query's terms come from, newest first: FTS5 rows
 * (`from`, the row's id `rowid`, `where` its condition), with `m` the
 * message row when `texts` asks for it.
 */
export interface MatchPlan {
  /** Which index finds the rows. */
  index: 'words' | 'trigram';
  /** The wanted terms' rows (all: the rows of every term the plan decides, exclusions too). */
  rows(all: boolean, texts: boolean): { from: string; rowid: string; where: string };
  /** What `rows` binds: the expression @wanted (the trigram index's `all`: @fts), and any terms it checks. */
  params: Record<string, string>;
  /** Whether `all` differs from the wanted terms alone (the index decides an exclusion). */
  excludes: boolean;
}

/** The trigram index decides every term of three characters or more (query.ts). */
function trigramPlan(query: Query, fts: string): MatchPlan {
  const wanted = ftsExpression({ ...query, terms: query.terms.filter((t) => !t.negated) })!;
  return {
    index: 'trigram',
    rows: (all) => ({
      from: 'messages m',
      rowid: 'm.rowid',
      where: `messages MATCH @${all ? 'fts' : 'wanted'}`,
    }),
    params: { wanted, fts },
    excludes: wanted !== fts,
  };
}

const KEEPS = 'txcript_keeps';
/** Candidates of a query with a phrase past this many: the trigram index finds its rows for less than checking them. */
export const WORD_CANDIDATES = 5_000;

/**
 * The word index (words.ts) when it narrows by every wanted term the trigram
 * index would: the same rows, found from each word's short list, those of a
 * phrase or a term with punctuation checked on their texts. An excluded term
 * of three characters or more (what the trigram index would exclude) is
 * checked on the texts of the wanted rows, newest first: reading a row costs
 * less than FTS5's NOT over a common word, which walks its every message.
 * Undefined when the trigram index is the better plan (a `~` term, a term
 * the word index cannot narrow by, a phrase of too many candidates); null
 * when a wanted term is in no message (nothing matches).
 */
function wordPlan(index: SearchIndex, query: Query): MatchPlan | null | undefined {
  if (query.terms.some((t) => t.fuzzy)) return undefined;
  const wanted: string[] = [];
  const checked: Term[] = [];
  for (const t of query.terms) {
    if (t.negated || [...t.text].length < TRIGRAM) continue;
    const words = index.wordMatch(t.text);
    if (words === undefined) return undefined;
    if (words === null) return null;
    wanted.push(words.expression);
    if (!words.exact) checked.push(t);
  }
  const expression = wanted.join(' AND ');
  if (checked.length > 0) {
    const candidates = index.db
      .prepare('SELECT count(*) FROM (SELECT 1 FROM words WHERE words MATCH ? LIMIT ?)')
      .pluck()
      .get(expression, WORD_CANDIDATES + 1) as number;
    if (candidates > WORD_CANDIDATES) return undefined;
  }
  const excluded = query.terms.filter((t) => t.negated && [...t.text].length >= TRIGRAM);
  const params: Record<string, string> = { wanted: expression };
  const texts = KINDS.map((k) => `m.${k}`).join(', ');
  // A term of ASCII alone is found in SQL: `lower` folds ASCII, KELVIN SIGN aside (foldCase makes it `k`).
  const ascii = (t: Term) => ![...t.text].some((c) => c.charCodeAt(0) > 0x7f);
  const held = (t: Term) => {
    const name = `t${Object.keys(params).length}`;
    params[name] = t.text;
    // As written first: a common excluded word is usually found so, without folding.
    const found = [
      ...KINDS.map((k) => `instr(m.${k}, @${name}) > 0`),
      ...KINDS.map((k) => `instr(lower(replace(m.${k}, char(8490), 'k')), @${name}) > 0`),
    ];
    return `(${found.join(' OR ')})`;
  };
  const inJs = { checked: checked.filter((t) => !ascii(t)), excluded: excluded.filter((t) => !ascii(t)) };
  const wantedChecks = checked.filter(ascii).map(held);
  const excludedChecks = excluded.filter(ascii).map((t) => `NOT ${held(t)}`);
  if (inJs.checked.length > 0) wantedChecks.push(`${KEEPS}(0, ${texts})`);
  if (inJs.excluded.length > 0) excludedChecks.push(`${KEEPS}(1, ${texts})`);
  if (inJs.checked.length > 0 || inJs.excluded.length > 0) {
    index.db.function(
      KEEPS,
      { varargs: true, deterministic: true },
      (exclusions: unknown, ...row: unknown[]) => {
        const strings = row.map((t) => (typeof t === 'string' ? t : ''));
        const keeps =
          exclusions === 0
            ? inJs.checked.every((t) => strings.some((x) => holdsAny([t], x)))
            : !strings.some((x) => holdsAny(inJs.excluded, x));
        return keeps ? 1 : 0;
      },
    );
  }
  return {
    index: 'words',
    rows: (all, withTexts) => {
      const checks = [...wantedChecks, ...(all ? excludedChecks : [])];
      return {
        from:
          withTexts || checks.length > 0 ? 'words w CROSS JOIN messages m ON m.rowid = w.rowid' : 'words w',
        rowid: 'w.rowid',
        where: ['words MATCH @wanted', ...checks].join(' AND '),
      };
    },
    params,
    excludes: excluded.length > 0,
  };
}

/** Whether `text` holds one of `terms` (not fuzzy), as `occurrences` finds them in its folded text. */
function holdsAny(terms: readonly Term[], text: string): boolean {
  // An excluded word is often common: found as it is written, the text need not be folded.
  if (terms.some((t) => text.includes(t.text))) return true;
  const folded = foldCase(text);
  return folded !== text && terms.some((t) => folded.includes(t.text));
}

/** Whether no message can match: an excluded term is part of a wanted one, so every row holding that holds it. */
function selfExcluding(query: Query): boolean {
  const wanted = query.terms.filter((t) => !t.negated && !t.fuzzy);
  return query.terms.some((x) => x.negated && !x.fuzzy && wanted.some((w) => w.text.includes(x.text)));
}

/**
 * How the index finds the query's matches: undefined when no term narrows
 * (every message is checked), null when a wanted term is in no message.
 */
export function matchPlan(
  index: SearchIndex,
  query: Query,
  filters: Pick<HitFilters, 'wordIndex'> = {},
): MatchPlan | null | undefined {
  const fts = ftsExpression(query);
  if (fts === undefined) return undefined;
  const words = filters.wordIndex === false ? undefined : wordPlan(index, query);
  return words === undefined ? trigramPlan(query, fts) : words;
}

export function findHits(index: SearchIndex, query: Query, filters: HitFilters): Hit[] {
  if (selfExcluding(query)) return [];
  const { db } = index;
  const fts = ftsExpression(query);
  const where: string[] = [];
  const params: Record<string, unknown> = { limit: filters.limit };
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
    // The folder itself, or any under it (`/`: every absolute folder).
    const dir = filters.cwd.replace(/\/+$/, '');
    where.push('(s.cwd = @cwd OR substr(s.cwd, 1, length(@under)) = @under)');
    params.cwd = dir || '/';
    params.under = `${dir}/`;
  }
  const and = (clauses: readonly string[]) => clauses.map((c) => ` AND ${c}`).join('');
  const verify = checked ? [`${VERIFY}(${KINDS.map((k) => `m.${k}`).join(', ')})`] : [];
  if (fts === undefined) {
    // No term the index can narrow by: the most recent sessions first, stopping at `limit` hits.
    return hitsOf(
      index,
      query,
      db
        .prepare(
          `SELECT m.rowid AS rowid, m.ref AS ref, 0 AS score, s.*
          FROM sessions s INDEXED BY sessions_by_activity
          CROSS JOIN messages m ON m.rowid BETWEEN (s.key << 24) AND (s.key << 24) + ${MAX_ROW}
          WHERE 1${and([...where, ...verify])}
          ORDER BY s.last_activity_ms DESC`,
        )
        .safeIntegers(true)
        .iterate(params) as Iterable<Record<string, unknown>>,
      filters.limit,
    );
  }
  const plan = matchPlan(index, query, filters);
  // (Never undefined here: some term narrows.)
  if (plan == null) return [];
  Object.assign(params, plan.params);
  // Every match, newest first, up to one past the bound: in rowid order FTS5 can stop early.
  const bound = filters.broadMatches ?? BROAD_MATCHES;
  const matchesOf = (all: boolean) => {
    const rows = plan.rows(all, false);
    return db
      .prepare(
        `SELECT ${rows.rowid} FROM ${rows.from} WHERE ${rows.where} ORDER BY ${rows.rowid} DESC LIMIT @n`,
      )
      .pluck()
      .safeIntegers(true)
      .all({ ...plan.params, n: bound + 1 }) as bigint[];
  };
  // The wanted terms first: the texts of a narrow query's matches are read anyway, and an
  // excluded word is checked there for less than the index's exclusion, which walks its messages too.
  let matches = matchesOf(false);
  const wantedCount = matches.length;
  const ranked = (checkAll: boolean) =>
    rankedHits(index, query, matches, wantedCount, and(where), params, checkAll);
  if (matches.length <= bound) return ranked(checked || plan.excludes);
  if (plan.excludes) {
    matches = matchesOf(true);
    if (matches.length <= bound) return ranked(checked);
  }
  // A broad query: the newest matches, unscored (BM25 would walk every match before the first).
  // Newest by their session's last activity, then the session's latest messages: the order the scan
  // reads sessions in. A row id says only when its session was indexed, and a session written to
  // since keeps its first one.
  const rows = plan.rows(true, !checked);
  const newest = (rowid: string, session: string) => `${session}.last_activity_ms DESC, ${rowid} DESC`;
  const sql = checked
    ? // The check in JavaScript sees the CANDIDATES newest rows the index found, not all.
      `WITH c AS (SELECT ${rows.rowid} AS rowid FROM ${rows.from}
          CROSS JOIN sessions cs ON cs.key = (${rows.rowid} >> 24)
          WHERE ${rows.where} ORDER BY ${newest(rows.rowid, 'cs')} LIMIT ${CANDIDATES})
        SELECT m.rowid AS rowid, m.ref AS ref, 0 AS score, s.*
        FROM c CROSS JOIN messages m ON m.rowid = c.rowid CROSS JOIN sessions s ON s.key = (m.rowid >> 24)
        WHERE 1${and([...where, ...verify])}
        ORDER BY ${newest('m.rowid', 's')}`
    : `SELECT m.rowid AS rowid, m.ref AS ref, 0 AS score, s.*
        FROM ${rows.from} CROSS JOIN sessions s ON s.key = (${rows.rowid} >> 24)
        WHERE ${rows.where}${and(where)}
        ORDER BY ${newest(rows.rowid, 's')}`;
  return hitsOf(
    index,
    query,
    db.prepare(sql).safeIntegers(true).iterate(params) as Iterable<Record<string, unknown>>,
    filters.limit,
  );
}

/** What a hit opens: a session's message, or its range keeping a tool call with its result (shared by both). */
function placeOf(sessionKey: number, ref: string): string {
  return `${sessionKey}\0${ref}`;
}

/**
 * Rows of (rowid, ref, score, the session's columns) as hits, their texts
 * read for kind and snippet, until `limit` places to open: a row whose
 * reference an earlier row had (a tool result of the call it answers) adds none.
 */
function hitsOf(
  index: SearchIndex,
  query: Query,
  rows: Iterable<Record<string, unknown>>,
  limit: number,
): Hit[] {
  const hits: Hit[] = [];
  const places = new Set<string>();
  for (const row of rows) {
    if (hits.length >= limit) break;
    const rowid = row.rowid as bigint;
    const place = placeOf(Number(row.key), String(row.ref));
    if (places.has(place)) continue;
    const texts = index.texts(rowid);
    if (texts === undefined) continue;
    places.add(place);
    hits.push(hitOf(query, sessionFromRow(row), rowid, String(row.ref), texts, Number(row.score)));
  }
  return hits;
}

function hitOf(
  query: Query,
  session: IndexedSession,
  rowid: bigint,
  range: string,
  texts: Record<Kind, string>,
  score: number,
): Hit {
  const { message } = splitRowId(rowid);
  const kind = matchedKind(query, texts);
  const ref = message === 0 ? session.id : `${session.id}#${range}`;
  return { session, message, ref, kind, snippet: snippetOf(query, texts[kind]), score };
}

/**
 * Every match of a narrow query (at most the bound), kept to the filters and
 * the JavaScript check, ranked by BM25 (ranking.ts), ties to the most recent
 * session, then the earlier message.
 */
function rankedHits(
  index: SearchIndex,
  query: Query,
  matches: readonly bigint[],
  wantedCount: number,
  filterSql: string,
  params: Record<string, unknown>,
  checked: boolean,
): Hit[] {
  const { db } = index;
  if (matches.length === 0) return [];
  const keys = [...new Set(matches.map((rowid) => String(rowid >> 24n)))];
  const sessions = new Map<number, IndexedSession>();
  const sessionRows = db
    .prepare(`SELECT s.* FROM sessions s WHERE s.key IN (SELECT value FROM json_each(@keys))${filterSql}`)
    .all({ ...params, keys: `[${keys.join(',')}]` }) as Array<Record<string, unknown>>;
  for (const row of sessionRows) {
    const session = sessionFromRow(row);
    sessions.set(session.key, session);
  }
  const phrases = scoredPhrases(query);
  // One phrase: its frequency scales every score alike, so the count of its matches in hand
  // (exact up to the bound) does; several are weighed against each other by their counts.
  const totals = index.collection?.totals ?? indexTotals(db);
  const frequencies =
    phrases.length === 1
      ? [wantedCount]
      : phrases.map((p) => index.collection?.frequency(p) ?? index.frequency(p, totals));
  const bm25 = new Bm25(phrases, frequencies, totals);
  const read = db.prepare(`SELECT ref, ${KINDS.join(', ')} FROM messages WHERE rowid = ?`);
  const ranked: Array<{
    rowid: bigint;
    session: IndexedSession;
    ref: string;
    texts: Record<Kind, string>;
    score: number;
  }> = [];
  for (const rowid of matches) {
    const session = sessions.get(Number(rowid >> 24n));
    if (session === undefined) continue;
    const row = read.get(rowid) as (Record<Kind, string> & { ref: string }) | undefined;
    if (row === undefined) continue;
    const folded = {} as Record<Kind, string>;
    for (const kind of KINDS) folded[kind] = foldCase(row[kind] ?? '');
    if (
      checked &&
      !matchesTexts(
        query,
        KINDS.map((k) => folded[k]),
      )
    )
      continue;
    ranked.push({ rowid, session, ref: row.ref, texts: row, score: bm25.score(folded) });
  }
  const recency = (s: IndexedSession) => s.lastActivityMs ?? -Infinity;
  ranked.sort(
    (a, b) =>
      a.score - b.score ||
      (recency(a.session) === recency(b.session) ? 0 : recency(b.session) > recency(a.session) ? 1 : -1) ||
      (a.rowid < b.rowid ? -1 : a.rowid > b.rowid ? 1 : 0),
  );
  // One hit a place to open, at its best match.
  const places = new Set<string>();
  const best = ranked.filter((r) => {
    const place = placeOf(r.session.key, r.ref);
    if (places.has(place)) return false;
    places.add(place);
    return true;
  });
  return best
    .slice(0, Number(params.limit))
    .map((r) => hitOf(query, r.session, r.rowid, r.ref, r.texts, r.score));
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
