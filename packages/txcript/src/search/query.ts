/**
 * The search query language (docs/cli.md "Search syntax"): words that must
 * all appear, "exact phrases", -excluded words or phrases, and `word~` for a
 * word that may be misspelt; a word written with two dashes (`--squash`) is
 * found as typed, not excluded. Matching ignores case and works on substrings,
 * so `paginat` finds "pagination".
 *
 * A query becomes an FTS5 expression over the trigram index for every term of
 * three characters or more, plus a check in JavaScript for what trigrams
 * cannot answer (shorter terms, typos).
 */
import { usageError } from '../cli/errors.ts';

export interface Term {
  /** Lower-cased text to find. */
  text: string;
  negated: boolean;
  /** `~`: up to `maxEdits(text)` typos allowed. */
  fuzzy: boolean;
}

export interface Query {
  source: string;
  terms: Term[];
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

const QUERY_TODO = 'write words (all must match), "an exact phrase", -exclude, or typo~';

/** Parse what the user typed. An empty query, or one that only excludes, is a usage error. */
export function parseQuery(source: string): Query {
  const terms: Term[] = [];
  let i = 0;
  const n = source.length;
  while (i < n) {
    while (i < n && /\s/.test(source[i]!)) i++;
    if (i >= n) break;
    let negated = false;
    // `-word` excludes; `--word` is text to find as typed (`git merge --squash`).
    if (source[i] === '-' && i + 1 < n && !/\s/.test(source[i + 1]!) && source[i + 1] !== '-') {
      negated = true;
      i++;
    }
    let text: string;
    let fuzzy = false;
    if (source[i] === '"') {
      const close = source.indexOf('"', i + 1);
      if (close < 0) {
        throw usageError({ what: `the query ${JSON.stringify(source)} has an unclosed "`, todo: QUERY_TODO });
      }
      text = source.slice(i + 1, close);
      i = close + 1;
      if (source[i] === '~') {
        throw usageError({
          what: `"~" marks one word, not the phrase "${text}"`,
          todo: 'put ~ after a single word, e.g. paginaton~',
        });
      }
    } else {
      const start = i;
      while (i < n && !/\s/.test(source[i]!)) i++;
      text = source.slice(start, i);
      if (text.length > 1 && text.endsWith('~')) {
        fuzzy = true;
        text = text.slice(0, -1);
      }
    }
    text = text.toLowerCase();
    if (text.trim() === '') continue;
    terms.push({ text, negated, fuzzy: fuzzy && maxEdits(text) > 0 });
  }
  if (terms.length === 0) throw usageError({ what: 'the search query is empty', todo: QUERY_TODO });
  if (terms.every((t) => t.negated)) {
    throw usageError({
      what: `the query ${JSON.stringify(source)} only excludes`,
      todo: 'add a word to find, e.g. "deploy -staging"',
    });
  }
  return { source, terms };
}

/** The trigram index answers substrings of this many characters or more. */
export const TRIGRAM = 3;

/**
 * Typos a `~` term tolerates: one from 6 characters, two from 9. Shorter
 * terms must match exactly: with fewer than three characters per piece
 * (see `fuzzyPieces`) the index could not narrow the search.
 */
export function maxEdits(text: string): number {
  const len = [...text].length;
  return len >= 9 ? 2 : len >= 6 ? 1 : 0;
}

/**
 * A term with k typos still contains one of k+1 consecutive pieces of it
 * unchanged (each typo spoils at most one piece), so those pieces, ORed,
 * find every candidate.
 */
export function fuzzyPieces(text: string): string[] {
  const chars = [...text];
  const count = maxEdits(text) + 1;
  const size = Math.floor(chars.length / count);
  const pieces: string[] = [];
  for (let p = 0; p < count; p++) {
    const end = p === count - 1 ? chars.length : (p + 1) * size;
    pieces.push(chars.slice(p * size, end).join(''));
  }
  return pieces;
}

function quoted(text: string): string {
  return `"${text.replaceAll('"', '""')}"`;
}

/**
 * The FTS5 MATCH expression that narrows candidates, or undefined when no
 * term is long enough for the trigram index (then every row is checked).
 */
export function ftsExpression(query: Query): string | undefined {
  const must: string[] = [];
  const not: string[] = [];
  for (const t of query.terms) {
    if (t.fuzzy) {
      // FTS5 cannot say "nothing within k edits": an excluded fuzzy term is left to the check in
      // JavaScript (never decidedByIndex), which every query with a fuzzy term gets.
      if (t.negated) continue;
      const pieces = fuzzyPieces(t.text);
      if (pieces.every((p) => [...p].length >= TRIGRAM)) must.push(`(${pieces.map(quoted).join(' OR ')})`);
    } else if ([...t.text].length >= TRIGRAM) {
      (t.negated ? not : must).push(quoted(t.text));
    }
  }
  if (must.length === 0) return undefined;
  return [must.join(' AND '), ...not].join(' NOT ');
}

/** Whether the FTS expression alone decides every term (no JavaScript check needed). */
export function decidedByIndex(query: Query): boolean {
  return query.terms.every((t) => !t.fuzzy && [...t.text].length >= TRIGRAM);
}

/** Where a term occurs in `haystack` (already lower-cased): [start, end) pairs. */
export function occurrences(term: Term, haystack: string, limit = Infinity): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  if (!term.fuzzy) {
    let at = haystack.indexOf(term.text);
    while (at >= 0 && found.length < limit) {
      found.push([at, at + term.text.length]);
      at = haystack.indexOf(term.text, at + Math.max(1, term.text.length));
    }
    return found;
  }
  return approximateOccurrences(term.text, haystack, maxEdits(term.text), limit);
}

/**
 * Substrings of `text` within `k` edits of `pattern` (Sellers' algorithm:
 * edit distance where the match may start anywhere). Each end found is
 * traced back to its start through the same table, one column at a time.
 */
function approximateOccurrences(
  pattern: string,
  text: string,
  k: number,
  limit: number,
): Array<[number, number]> {
  const m = pattern.length;
  // A match holds one piece unchanged (fuzzyPieces), so only the text around a piece can match.
  const windows: Array<[number, number]> = [];
  for (const piece of fuzzyPieces(pattern)) {
    for (let at = text.indexOf(piece); at >= 0; at = text.indexOf(piece, at + 1)) {
      windows.push([Math.max(0, at - m - k), Math.min(text.length, at + piece.length + m + k)]);
    }
  }
  const merged = mergeRanges(windows);
  const found: Array<[number, number]> = [];
  for (const [from, to] of merged) {
    for (const [s, e] of sellers(pattern, text.slice(from, to), k, limit - found.length)) {
      found.push([from + s, from + e]);
    }
    if (found.length >= limit) break;
  }
  return found;
}

function sellers(pattern: string, text: string, k: number, limit: number): Array<[number, number]> {
  const m = pattern.length;
  const found: Array<[number, number]> = [];
  let prev = new Array<number>(m + 1);
  let cur = new Array<number>(m + 1);
  /** starts[i]: where the best alignment ending here began. */
  let prevStart = new Array<number>(m + 1);
  let curStart = new Array<number>(m + 1);
  for (let i = 0; i <= m; i++) {
    prev[i] = i;
    prevStart[i] = 0;
  }
  /** The best end of the current run of ends within k edits: a match's ends overlap, keep its cheapest. */
  let run: { start: number; end: number; cost: number } | undefined;
  const emit = (): boolean => {
    if (run !== undefined) found.push([run.start, run.end]);
    run = undefined;
    return found.length >= limit;
  };
  for (let j = 1; j <= text.length; j++) {
    cur[0] = 0;
    curStart[0] = j;
    const c = text[j - 1];
    for (let i = 1; i <= m; i++) {
      const sub = prev[i - 1]! + (pattern[i - 1] === c ? 0 : 1);
      const del = prev[i]! + 1;
      const ins = cur[i - 1]! + 1;
      if (sub <= del && sub <= ins) {
        cur[i] = sub;
        curStart[i] = prevStart[i - 1]!;
      } else if (del <= ins) {
        cur[i] = del;
        curStart[i] = prevStart[i]!;
      } else {
        cur[i] = ins;
        curStart[i] = curStart[i - 1]!;
      }
    }
    const cost = cur[m]!;
    if (cost <= k) {
      const start = curStart[m]!;
      if (run !== undefined && start > run.end && emit()) return found;
      if (run === undefined) run = { start, end: j, cost };
      else if (cost < run.cost) run = { start, end: j, cost };
    } else if (run !== undefined && emit()) return found;
    [prev, cur] = [cur, prev];
    [prevStart, curStart] = [curStart, prevStart];
  }
  emit();
  return found;
}

/** [start, end) ranges sorted by start, overlapping or touching ones merged. */
export function mergeRanges(ranges: ReadonlyArray<[number, number]>): Array<[number, number]> {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const merged: Array<[number, number]> = [];
  for (const r of sorted) {
    const last = merged[merged.length - 1];
    if (last !== undefined && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
    else merged.push([r[0], r[1]]);
  }
  return merged;
}

/** Whether a row (its texts, lower-cased) satisfies the whole query: every term found, none excluded. */
export function matchesTexts(query: Query, texts: readonly string[]): boolean {
  return query.terms.every((t) => {
    const present = texts.some((x) => occurrences(t, x, 1).length > 0);
    return t.negated ? !present : present;
  });
}
