/**
 * The ranking computed in JavaScript (ranking.ts) against FTS5's own
 * `bm25()` over the same index: the same hits, in the same order, with the
 * same scores, for every kind of query.
 */
import { describe, expect, it } from 'vitest';
import { KINDS, type Kind } from './kinds.ts';
import { findHits, foldCase } from './hits.ts';
import { SearchIndex } from './index-db.ts';
import { decidedByIndex, ftsExpression, matchesTexts, parseQuery } from './query.ts';
import { WEIGHTS, indexTotals } from './ranking.ts';

const WORDS = ['cursor', 'offset', 'pagination', 'deploy', 'staging', 'keyset', 'naïve', 'zürich', 'aaaa'];

/** A small index of varied rows: lengths, repeats, kinds, accents and a character outside the BMP. */
function fixtureIndex(): SearchIndex {
  const index = SearchIndex.inMemory();
  let seed = 7;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const words = (n: number) =>
    Array.from({ length: n }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ');
  for (let s = 0; s < 12; s++) {
    const rows = Array.from({ length: 8 }, (_, m) => {
      const texts = Object.fromEntries(KINDS.map((k) => [k, ''])) as Record<Kind, string>;
      for (const kind of KINDS) if (random() < 0.5) texts[kind] = words(1 + Math.floor(random() * 30));
      if (m === 3) texts.user = `${texts.user} 😀 the dry run passed`;
      return { message: m, range: String(m), texts };
    });
    index.put(
      {
        harness: s % 2 === 0 ? 'claude_code' : 'codex',
        id: `s${s}`,
        locator: `/tmp/s${s}`,
        sig: null,
        title: `session ${s}`,
        lastActivity: new Date(Date.UTC(2026, 0, 1 + (s % 5))).toISOString(),
      },
      rows,
    );
  }
  return index;
}

/** What FTS5 says: every match of the expression, checked as findHits checks, ordered by `bm25()`. */
function fts5Ranking(index: SearchIndex, source: string, limit: number) {
  const query = parseQuery(source);
  const rows = index.db
    .prepare(
      `SELECT m.rowid AS rowid, ${KINDS.map((k) => `m.${k}`).join(', ')},
        bm25(messages, ${KINDS.map((k) => WEIGHTS[k]).join(', ')}) AS score
      FROM messages m JOIN sessions s ON s.key = (m.rowid >> 24)
      WHERE messages MATCH ? ORDER BY score, s.last_activity_ms DESC, m.rowid`,
    )
    .all(ftsExpression(query)) as Array<Record<string, unknown>>;
  return rows
    .filter(
      (r) =>
        decidedByIndex(query) ||
        matchesTexts(
          query,
          KINDS.map((k) => foldCase(String(r[k]))),
        ),
    )
    .slice(0, limit)
    .map((r) => ({ rowid: Number(r.rowid), score: Number(r.score) }));
}

describe('BM25 computed from the matches', () => {
  const queries = [
    'cursor',
    'pagination',
    'cursor offset',
    '"dry run"',
    '"cursor offset"',
    'deploy -staging',
    'keyset -"cursor offset" -zz',
    'paginaton~',
    'naïve',
    'zürich cursor',
    'aaa',
    'aaaa keyset',
    'cursor ke',
    '😀 dry',
  ];

  it.each(queries)('ranks %s as bm25() does', (source) => {
    const index = fixtureIndex();
    try {
      const hits = findHits(index, parseQuery(source), { limit: 500 }).map((h) => ({
        rowid: Number((BigInt(h.session.key) << 24n) | BigInt(h.message)),
        score: h.score,
      }));
      const expected = fts5Ranking(index, source, 500);
      expect(expected.length).toBeGreaterThan(0);
      expect(hits.map((h) => h.rowid)).toEqual(expected.map((e) => e.rowid));
      hits.forEach((h, i) => expect(h.score).toBeCloseTo(expected[i]!.score, 9));
    } finally {
      index.close();
    }
  });

  it('ranks an exclusion whose wanted word alone is broad, but not the query, as bm25() does', () => {
    const index = fixtureIndex();
    try {
      const source = 'cursor -offset';
      const expected = fts5Ranking(index, source, 500);
      const wanted = fts5Ranking(index, 'cursor', 500);
      expect(wanted.length).toBeGreaterThan(expected.length);
      const hits = findHits(index, parseQuery(source), { limit: 500, broadMatches: expected.length });
      expect(hits.map((h) => h.score)).not.toContain(0);
      expect(hits.map((h) => Number((BigInt(h.session.key) << 24n) | BigInt(h.message)))).toEqual(
        expected.map((e) => e.rowid),
      );
    } finally {
      index.close();
    }
  });

  it('excludes a term marked ~ without requiring its pieces, broad or narrow', () => {
    const index = fixtureIndex();
    try {
      const refs = (source: string, broadMatches?: number) =>
        findHits(index, parseQuery(source), {
          limit: 500,
          ...(broadMatches === undefined ? {} : { broadMatches }),
        })
          .map((h) => `${h.session.key}#${h.message}`)
          .sort(); // a broad query's hits come newest first, unscored: compare the sets
      const cursor = refs('cursor');
      const near = new Set(refs('paginaton~'));
      expect(cursor.some((ref) => near.has(ref)) && cursor.some((ref) => !near.has(ref))).toBe(true);
      for (const broadMatches of [undefined, 1, 5]) {
        expect(refs('cursor -zqxjvw~', broadMatches), String(broadMatches)).toEqual(cursor);
        expect(refs('cursor -paginaton~', broadMatches), String(broadMatches)).toEqual(
          cursor.filter((ref) => !near.has(ref)),
        );
      }
    } finally {
      index.close();
    }
  });

  it('counts document frequencies again once the index changed', () => {
    const index = fixtureIndex();
    try {
      const scores = () =>
        findHits(index, parseQuery('"dry run" passed'), { limit: 500 }).map((h) => h.score);
      const before = scores();
      const texts = Object.fromEntries(KINDS.map((k) => [k, k === 'user' ? 'a dry run' : ''])) as Record<
        Kind,
        string
      >;
      index.put(
        { harness: 'codex', id: 'more', locator: '/tmp/more', sig: null },
        Array.from({ length: 40 }, (_, m) => ({ message: m, range: String(m), texts })),
      );
      expect(scores()).not.toEqual(before);
      const expected = fts5Ranking(index, '"dry run" passed', 500);
      scores().forEach((score, i) => expect(score).toBeCloseTo(expected[i]!.score, 9));
    } finally {
      index.close();
    }
  });

  it('reads the row and trigram totals FTS5 keeps', () => {
    const index = fixtureIndex();
    try {
      const rows = index.db.prepare('SELECT count(*) FROM messages').pluck().get() as number;
      const texts = index.db.prepare(`SELECT ${KINDS.join(', ')} FROM messages`).all() as Array<
        Record<Kind, string>
      >;
      const tokens = texts.reduce(
        (sum, r) => sum + KINDS.reduce((n, k) => n + Math.max(0, [...r[k]].length - 2), 0),
        0,
      );
      expect(indexTotals(index.db)).toEqual({ rows, tokens });
    } finally {
      index.close();
    }
  });
});

describe('one hit for each place to open', () => {
  /** A tool call (message 2) and its result (message 3) share the reference #2-3; both hold "staging". */
  function pairedIndex(): SearchIndex {
    const index = SearchIndex.inMemory();
    const texts = (kind: Kind, text: string) =>
      Object.fromEntries(KINDS.map((k) => [k, k === kind ? text : ''])) as Record<Kind, string>;
    index.put({ harness: 'codex', id: 'deploy', locator: '/tmp/deploy', sig: null, title: 'release' }, [
      { message: 1, range: '1', texts: texts('user', 'deploy to staging please') },
      { message: 2, range: '2-3', texts: texts('tool_input', 'make deploy ENV=staging') },
      { message: 3, range: '2-3', texts: texts('tool_output', 'deployed build 42 to staging') },
      { message: 4, range: '4', texts: texts('assistant', 'staging has build 42') },
    ]);
    return index;
  }

  it('shows a tool call and its result that both match once, at the better match, ranked, broad or short', () => {
    const index = pairedIndex();
    try {
      const refs = (source: string, filters: { limit: number; broadMatches?: number }) =>
        findHits(index, parseQuery(source), filters).map((h) => h.ref);
      // Ranked (BM25), broad (newest first) and a term too short for the index (checked row by row).
      for (const [source, broadMatches] of [
        ['staging', undefined],
        ['staging', 0],
        ['ng', undefined],
      ] as const) {
        const all = refs(source, { limit: 10, ...(broadMatches === undefined ? {} : { broadMatches }) });
        expect(all.toSorted(), source).toEqual(['deploy#1', 'deploy#2-3', 'deploy#4']);
        // The limit counts places, not rows.
        expect(refs(source, { limit: 3, ...(broadMatches === undefined ? {} : { broadMatches }) })).toEqual(
          all,
        );
      }
      // The input's kind: "make deploy ENV=staging" is shorter, so it ranks above the output.
      expect(
        findHits(index, parseQuery('staging'), { limit: 10 }).find((h) => h.ref === 'deploy#2-3')?.kind,
      ).toBe('tool_input');
    } finally {
      index.close();
    }
  });
});
