/**
 * The word index (words.ts) against the trigram index it stands in for: for
 * every query it answers, the same hits in the same order with the same
 * scores, narrow or broad, after sessions are replaced and removed too; and
 * the same messages a direct check of every row finds.
 */
import { describe, expect, it } from 'vitest';
import { KINDS, type Kind } from './kinds.ts';
import { type HitFilters, findHits, foldCase, matchPlan } from './hits.ts';
import { SearchIndex, rowId } from './index-db.ts';
import { matchesTexts, parseQuery } from './query.ts';
import { anyOf } from './words.ts';

/** Words in several shapes: inside longer words, upper case, accents, digits, punctuation, KELVIN SIGN. */
const WORDS = [
  'Pagination',
  'repaginated',
  'cursor',
  'offset',
  'off-by-one',
  'DEPLOY',
  'ENV=staging',
  'naïve',
  'café-au-lait',
  'pac\u212aage',
  'build42',
  'snake_case_name',
  'dry run',
  '😀',
  'keyset',
  'filename',
];

function sessionRows(seed: number, count: number) {
  let state = seed;
  const random = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const words = (n: number) =>
    Array.from({ length: n }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ');
  return Array.from({ length: count }, (_, m) => {
    const texts = Object.fromEntries(KINDS.map((k) => [k, ''])) as Record<Kind, string>;
    for (const kind of KINDS) if (random() < 0.5) texts[kind] = words(1 + Math.floor(random() * 12));
    return { message: m, range: String(m), texts };
  });
}

function put(index: SearchIndex, s: number, seed = s + 1): void {
  index.put(
    {
      harness: s % 2 === 0 ? 'claude_code' : 'codex',
      id: `s${s}`,
      locator: `/tmp/s${s}`,
      sig: null,
      lastActivity: new Date(Date.UTC(2026, 0, 1 + (s % 7))).toISOString(),
    },
    sessionRows(seed, 10),
  );
}

function fixtureIndex(): SearchIndex {
  const index = SearchIndex.inMemory();
  for (let s = 0; s < 16; s++) put(index, s);
  return index;
}

/** Queries whose wanted terms the word index answers. */
const WORD_QUERIES = [
  'paginat',
  'agina',
  'cursor',
  'deploy',
  'cursor offset',
  'cursor -offset',
  'deploy -staging',
  'package',
  'build42',
  'case',
  'name -snake',
  'keyset -"dry run" -😀',
  'cursor of',
  'staging env',
  'zzzz',
  '"dry run"',
  'off-by-one -cursor',
  '"dry run" cursor',
  'env=staging',
  'e_case_na -"dry run"',
  '"run dry"',
  'cursor -café',
  '"dry run naïve"',
  '"package dry"',
  'package -naïve',
];
/** Queries it leaves to the trigram index. */
const TRIGRAM_QUERIES = ['café', 'paginaton~', 'naïve cursor'];

const hitsOf = (index: SearchIndex, source: string, filters: Omit<HitFilters, 'limit'> = {}) =>
  findHits(index, parseQuery(source), { limit: 500, ...filters }).map((h) => ({
    rowid: rowId(h.session.key, h.message),
    kind: h.kind,
    score: h.score,
    snippet: h.snippet,
  }));

/** Every row a direct check of its texts matches. */
function checkedRows(index: SearchIndex, source: string): bigint[] {
  const query = parseQuery(source);
  const rows = index.db
    .prepare(`SELECT rowid, ${KINDS.join(', ')} FROM messages`)
    .safeIntegers(true)
    .all() as Array<Record<string, unknown>>;
  return rows
    .filter((r) =>
      matchesTexts(
        query,
        KINDS.map((k) => foldCase(String(r[k]))),
      ),
    )
    .map((r) => r.rowid as bigint);
}

const sorted = (xs: readonly bigint[]) => [...xs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

describe('the word index', () => {
  it('answers plain words, narrows by the words of phrases and punctuation, and leaves accents and short terms', () => {
    const index = fixtureIndex();
    try {
      expect(index.wordMatch('agina')).toEqual({
        expression: '("pagination" OR "repaginated")',
        exact: true,
      });
      expect(index.wordMatch('package')).toEqual({ expression: '("package")', exact: true });
      expect(index.wordMatch('zzzz')).toBeNull();
      expect(matchPlan(index, parseQuery('cursor zzzz'))).toBeNull();
      expect(index.wordMatch('off-by-one')).toEqual({
        expression: '("off") AND "by" AND ("one")',
        exact: false,
      });
      expect(index.wordMatch('dry run')).toEqual({ expression: '("dry") AND ("run")', exact: false });
      expect(index.wordMatch('e_case_na')).toEqual({ expression: '"case"', exact: false });
      expect(index.wordMatch('snake_case_name')).toEqual({
        expression: '("snake") AND "case" AND ("name")',
        exact: false,
      });
      for (const term of ['café', 'naïve', 'ca']) expect(index.wordMatch(term)).toBeUndefined();
    } finally {
      index.close();
    }
  });

  it.each(WORD_QUERIES)('finds for %s what the trigram index finds', (source) => {
    const index = fixtureIndex();
    try {
      if (source !== 'zzzz') expect(matchPlan(index, parseQuery(source))?.index).toBe('words');
      const hits = hitsOf(index, source);
      expect(hits).toEqual(hitsOf(index, source, { wordIndex: false }));
      expect(sorted(hits.map((h) => h.rowid))).toEqual(sorted(checkedRows(index, source)));
      if (source !== 'zzzz' && source !== '"run dry"') expect(hits.length).toBeGreaterThan(0);
      // Broad: the newest matches, as the trigram index lists them.
      for (const broadMatches of [1, 5]) {
        expect(hitsOf(index, source, { broadMatches })).toEqual(
          hitsOf(index, source, { broadMatches, wordIndex: false }),
        );
      }
    } finally {
      index.close();
    }
  });

  it.each(TRIGRAM_QUERIES)('finds for %s what a direct check finds', (source) => {
    const index = fixtureIndex();
    try {
      expect(matchPlan(index, parseQuery(source))?.index).toBe('trigram');
      const hits = hitsOf(index, source);
      expect(hits.length).toBeGreaterThan(0);
      expect(sorted(hits.map((h) => h.rowid))).toEqual(sorted(checkedRows(index, source)));
    } finally {
      index.close();
    }
  });

  it('follows sessions that are replaced and removed', () => {
    const index = fixtureIndex();
    try {
      put(index, 3, 99);
      put(index, 20);
      const removed = index.sessions().find((s) => s.id === 's5')!.key;
      index.remove([removed]);
      for (const source of WORD_QUERIES) {
        const hits = hitsOf(index, source);
        expect(hits).toEqual(hitsOf(index, source, { wordIndex: false }));
        expect(sorted(hits.map((h) => h.rowid))).toEqual(sorted(checkedRows(index, source)));
      }
      // Nothing of the removed session is left in the word index.
      const everyWord = index.db.prepare('SELECT word FROM vocabulary').pluck().all() as string[];
      expect(
        index.db
          .prepare('SELECT count(*) FROM words WHERE words MATCH ? AND rowid BETWEEN ? AND ?')
          .pluck()
          .get(anyOf(everyWord), rowId(removed, 0), rowId(removed, 2 ** 24 - 1)),
      ).toBe(0);
    } finally {
      index.close();
    }
  });
});

describe('quotes in a query', () => {
  it('open a phrase only at the start of a term; inside a word they are characters', () => {
    expect(parseQuery('id="main" "dry run"').terms.map((t) => t.text)).toEqual(['id="main"', 'dry run']);
    expect(parseQuery('ticket-7"').terms.map((t) => t.text)).toEqual(['ticket-7"']);
    expect(() => parseQuery('"dry run')).toThrow(/has an unclosed "/);
  });
});
