/**
 * BM25 over the trigram index, computed here rather than by FTS5's `bm25()`.
 *
 * FTS5's `bm25()` counts, before it scores the first row, every message that
 * holds each phrase of the query (its document frequency) by walking the
 * whole index once per phrase: a second full walk for a rare phrase whose
 * trigrams are all common, and a walk over a common word's every message for
 * `rare -common` or `rare common`. Here the matches are already in hand
 * (at most BROAD_MATCHES of them), so a phrase's frequency is that count when
 * it is the whole query, and otherwise a count that stops at DF_BOUND.
 *
 * The formula is FTS5's (k1 1.2, b 0.75; term frequency weighted by kind; the
 * row's length in trigrams against the average), so the order is the one
 * `bm25(messages, …WEIGHTS)` gives whenever no phrase matches more than
 * DF_BOUND messages (search.test.ts checks that it does).
 */
import type Database from 'better-sqlite3';
import { KINDS, type Kind } from './kinds.ts';
import { type Query, TRIGRAM, fuzzyPieces } from './query.ts';

/** BM25 weight of each kind, in KINDS order. */
export const WEIGHTS: Record<Kind, number> = {
  title: 8,
  user: 4,
  assistant: 3,
  thinking: 1.5,
  tool_input: 1.2,
  tool_output: 0.6,
};

/** A phrase matching more messages than this counts as matching this many (its weight is near its floor by then). */
export const DF_BOUND = 10_000;

const K1 = 1.2;
const B = 0.75;

/** The phrases of the query's FTS expression that a matching row holds (excluded terms score nothing). */
export function scoredPhrases(query: Query): string[] {
  const phrases: string[] = [];
  for (const t of query.terms) {
    if (t.negated) continue;
    if (t.fuzzy) {
      const pieces = fuzzyPieces(t.text);
      if (pieces.every((p) => [...p].length >= TRIGRAM)) phrases.push(...pieces);
    } else if ([...t.text].length >= TRIGRAM) phrases.push(t.text);
  }
  return phrases;
}

export interface IndexTotals {
  rows: number;
  /** Trigrams in every row. */
  tokens: number;
}

/** FTS5's own counts (its "averages" record, rowid 1 of `messages_data`: varints of rows, then trigrams per column). */
export function indexTotals(db: Database.Database): IndexTotals {
  const block = db.prepare('SELECT block FROM messages_data WHERE id = 1').pluck().get() as
    Buffer | undefined;
  if (block === undefined) return { rows: 0, tokens: 0 };
  let at = 0;
  const varint = (): number => {
    let value = 0;
    for (let i = 0; i < 9 && at < block.length; i++) {
      const byte = block[at++]!;
      if (i === 8) return value * 256 + byte;
      value = value * 128 + (byte & 0x7f);
      if ((byte & 0x80) === 0) break;
    }
    return value;
  };
  const rows = varint();
  let tokens = 0;
  for (let c = 0; c < KINDS.length && at < block.length; c++) tokens += varint();
  return { rows, tokens };
}

/** Messages holding `phrase`, counted newest first up to DF_BOUND (a count FTS5 can stop early). */
export function documentFrequency(db: Database.Database, phrase: string): number {
  return db
    .prepare(
      'SELECT count(*) FROM (SELECT 1 FROM messages WHERE messages MATCH ? ORDER BY rowid DESC LIMIT ?)',
    )
    .pluck()
    .get(`"${phrase.replaceAll('"', '""')}"`, DF_BOUND) as number;
}

/** Characters as the trigram tokenizer counts them (code points). */
function codePoints(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) n--;
  }
  return n;
}

/** A row's length as FTS5's trigram tokenizer counts it: the trigrams of each of its texts. */
export function rowTrigrams(texts: Record<Kind, string>): number {
  let length = 0;
  for (const kind of KINDS) length += Math.max(0, codePoints(texts[kind]) - (TRIGRAM - 1));
  return length;
}

/** Occurrences of `phrase` in `text`, overlapping ones too (each is a trigram position to FTS5). */
function hitsOf(phrase: string, text: string): number {
  let n = 0;
  for (let at = text.indexOf(phrase); at >= 0; at = text.indexOf(phrase, at + 1)) n++;
  return n;
}

export class Bm25 {
  private readonly idf: number[];
  private readonly avgdl: number;

  /** `frequencies[i]`: messages holding `phrases[i]`. */
  constructor(
    private readonly phrases: readonly string[],
    frequencies: readonly number[],
    totals: IndexTotals,
  ) {
    this.idf = frequencies.map((n) => {
      const idf = Math.log((totals.rows - n + 0.5) / (n + 0.5));
      return idf <= 0 ? 1e-6 : idf;
    });
    this.avgdl = totals.rows === 0 ? 1 : totals.tokens / totals.rows;
  }

  /** Lower is better, as FTS5 gives it. `folded`: the row's texts lower-cased, by kind. */
  score(folded: Record<Kind, string>): number {
    const length = rowTrigrams(folded);
    let score = 0;
    this.phrases.forEach((phrase, i) => {
      let freq = 0;
      for (const kind of KINDS) if (folded[kind] !== '') freq += WEIGHTS[kind] * hitsOf(phrase, folded[kind]);
      score += (this.idf[i]! * (freq * (K1 + 1))) / (freq + K1 * (1 - B + (B * length) / this.avgdl));
    });
    return -score;
  }
}
