/**
 * Search without the index file (issue 23 item 3): `--no-index`, and a first
 * search while the index is being built. It reads at the speed of the bytes:
 * - a byte pass over each session file of a harness whose text is in its
 *   file (byte-filter.ts), spread over worker threads (scan-files.ts), drops
 *   the files that cannot hold the query's words, with no JSON decoded: one
 *   line must hold them all where each message is one line (Claude Code, Codex, pi),
 *   the whole file elsewhere;
 * - the sessions left are read as `view` reads them, newest first, and only
 *   their messages that match the whole query are kept; from 16 MiB of
 *   sources the reads are spread over worker threads (scan-reads.ts);
 * - those go into an index in memory, which answers as the file would
 *   (hits.ts): the same matches, kinds, snippets and references.
 *
 * Two differences from the file, both documented in docs/cli.md: BM25's
 * collection statistics are those of the matching messages (the order of
 * hits can differ where several terms weigh differently), and once more
 * messages match than a broad query ranks (BROAD_MATCHES), older sessions
 * are not read: the newest matches are what a broad query shows.
 */
import { statSync } from 'node:fs';
import type { CliContext } from '../cli/context.ts';
import { type FoundSession, type ListedSession, withHarnesses } from '../cli/sessions.ts';
import { createProgress, progressDelay } from '../cli/progress.ts';
import type { SearchRow } from './kinds.ts';
import { BROAD_MATCHES, type Hit, type HitFilters, findHits, foldCase } from './hits.ts';
import { SearchIndex, type SessionFacts } from './index-db.ts';
import type { Query } from './query.ts';
import { type IndexTotals, scoredPhrases } from './ranking.ts';
import { readInOrder, type ScanReadOptions } from './scan-reads.ts';
import { type FileCheck, checkFiles, type ScanFileOptions } from './scan-files.ts';

/**
 * Words a codec may put into a session's searchable text that its file need
 * not spell: the typed tool names and the keys of a MultiEdit's edits
 * (model/common.ts), and booleans written as text. A needle inside one of
 * them proves nothing.
 */
const DERIVED = [
  'bash',
  'read',
  'write',
  'multiedit',
  'command',
  'old_string',
  'new_string',
  'replace_all',
  'true',
  'false',
];

/** Pieces of a needle shorter than this are in nearly every file: not worth looking for. */
const MIN_NEEDLE = 3;

/**
 * The lower-case ASCII pieces that every matching session's file must hold:
 * each wanted, exact term cut at characters JSON may escape or that are not
 * ASCII (`"`, `\`, `/`, controls, white space, non-ASCII), less what
 * DERIVED (and the harness's own `derivedWords`) holds, and, where the
 * harness's codec makes numbers up (`derivedNumbers`), but digits.
 */
export function byteNeedles(
  query: Query,
  derived: readonly string[] = [],
  { derivedNumbers = false }: { derivedNumbers?: boolean } = {},
): string[] {
  const needles = new Set<string>();
  for (const t of query.terms) {
    if (t.negated || t.fuzzy) continue;
    for (const piece of t.text.split(/[^\x21-\x7e]|["\\/]/)) {
      if (piece.length < MIN_NEEDLE) continue;
      if (derivedNumbers && /^[0-9]+$/.test(piece)) continue;
      if (DERIVED.some((w) => w.includes(piece)) || derived.some((w) => w.includes(piece))) continue;
      needles.add(piece);
    }
  }
  return [...needles];
}

export interface ScanOptions extends ScanFileOptions, ScanReadOptions {
  /** Matching messages past which older sessions are not read (default: a broad query's bound). */
  broadMatches?: number;
  /** false: no byte pass, every session is read (to check that the byte pass changes no hit). */
  bytePass?: boolean;
}

export interface ScanStats {
  sessions: number;
  /** Session files the byte pass looked at, and how many of them could match. */
  files: number;
  passed: number;
  /** Sessions read as `view` reads them, and the worker threads started to read them. */
  read: number;
  readWorkers: number;
}

/** The hits of `query` among `sessions`, read now. `stats` (when given) is filled in. */
export async function scanHits(
  ctx: CliContext,
  query: Query,
  filters: HitFilters,
  listed: readonly ListedSession[],
  options: ScanOptions = {},
  stats?: ScanStats,
): Promise<Hit[]> {
  const sessions = await withHarnesses(ctx, listed);
  const wanted = sessions.filter((s) => within(s, filters));
  // Newest first: a broad query's hits are the newest matches.
  // (Each session's time parsed once: a sort compares each about log2(n) times.)
  const times = new Map(wanted.map((s) => [s, activity(s)]));
  wanted.sort((a, b) => times.get(b)! - times.get(a)!);
  const skipped =
    options.bytePass === false ? new Set<string>() : await byteSkipped(wanted, query, options, stats);
  const bound = options.broadMatches ?? filters.broadMatches ?? BROAD_MATCHES;
  const progress = createProgress({
    stream: ctx.io.stderr,
    delayMs: progressDelay(ctx.io.env),
    label: 'txcript: reading sessions',
  });
  const kept: Array<{ facts: SessionFacts; rows: SearchRow[] }> = [];
  // BM25's collection: the sessions read, counted; those not read, estimated from their message counts.
  const collection: IndexTotals = { rows: 0, tokens: 0 };
  const phrases = scoredPhrases(query);
  const frequencies = phrases.map(() => 0);
  const readIds = new Set<FoundSession>();
  // (Every listed session counts, as every one is in the index file, whatever the filters.)
  let matches = 0;
  let read = 0;
  try {
    const left = wanted.filter((s) => !skipped.has(s.summary.locator));
    const workers = await readInOrder(
      ctx.io.env,
      left,
      query,
      phrases,
      (r) => {
        for (const w of r.warnings) ctx.warn(w);
        readIds.add(left[read]!);
        read++;
        progress.update('scan', read, left.length);
        collection.rows += r.rows;
        collection.tokens += r.tokens;
        r.frequencies.forEach((n, i) => (frequencies[i]! += n));
        if (r.matching.length > 0) {
          kept.push({ facts: r.facts, rows: r.matching });
          matches += r.matching.length;
        }
        // The working-folder filter is known only once a session is read: past the bound, stop only without it.
        return !(matches > bound && filters.cwd === undefined);
      },
      options,
    );
    if (stats !== undefined) stats.readWorkers = workers;
  } finally {
    progress.finish();
  }
  if (stats !== undefined) {
    stats.sessions = wanted.length;
    stats.read = read;
  }
  const perRow = collection.rows === 0 ? 1 : collection.tokens / collection.rows;
  for (const s of sessions) {
    if (readIds.has(s)) continue;
    collection.rows += s.summary.messageCount ?? 0;
    collection.tokens += (s.summary.messageCount ?? 0) * perRow;
  }
  const index = SearchIndex.inMemory();
  index.collection = {
    totals: collection,
    frequency: (phrase) => frequencies[phrases.indexOf(phrase)] ?? 0,
  };
  try {
    // Oldest first, so that the newest have the highest row ids, which a broad query lists first.
    for (let i = kept.length - 1; i >= 0; i--) index.put(kept[i]!.facts, kept[i]!.rows);
    return findHits(index, query, filters);
  } finally {
    index.close();
  }
}

function activity(s: FoundSession): number {
  const ms = s.summary.lastActivity === undefined ? NaN : Date.parse(s.summary.lastActivity);
  return Number.isNaN(ms) ? -Infinity : ms;
}

/** Whether a listed session can be a hit under the filters that its summary decides. */
function within(s: FoundSession, filters: HitFilters): boolean {
  if (filters.harnesses !== undefined && !filters.harnesses.includes(s.harness.id)) return false;
  if (filters.sinceMs === undefined && filters.untilMs === undefined) return true;
  const ms = activity(s);
  if (ms === -Infinity) return false;
  return (
    (filters.sinceMs === undefined || ms >= filters.sinceMs) &&
    (filters.untilMs === undefined || ms <= filters.untilMs)
  );
}

/** The session sources whose bytes cannot hold the query's needles (harnesses whose text is in their files, or that check their database rows: `mayHold`). */
export async function byteSkipped(
  sessions: readonly FoundSession[],
  query: Query,
  options: ScanFileOptions,
  stats: ScanStats | undefined,
): Promise<Set<string>> {
  const skipped = new Set<string>();
  // One check per file: a Claude Code parent and its inline sidechains share one, with all their titles.
  // Files are checked per harness: each may add words its codec makes up.
  const byHarness = new Map<FoundSession['harness'], Map<string, string[]>>();
  for (const s of sessions) {
    if (s.harness.textInSource !== true && s.harness.mayHold === undefined) continue;
    const files = byHarness.get(s.harness) ?? new Map<string, string[]>();
    byHarness.set(s.harness, files);
    const titles = files.get(s.summary.locator) ?? [];
    files.set(s.summary.locator, titles);
    if (s.summary.title !== undefined) titles.push(foldCase(s.summary.title));
  }
  let count = 0;
  for (const [harness, files] of byHarness) {
    const needles = byteNeedles(query, harness.derivedWords, { derivedNumbers: harness.derivedNumbers });
    count += files.size;
    if (needles.length === 0) continue;
    if (harness.textInSource !== true && harness.mayHold !== undefined) {
      // Rows of a database: asked of the database.
      const held = await harness.mayHold(
        [...files].map(([locator, titles]) => ({ locator, titles })),
        needles,
      );
      for (const locator of files.keys()) if (!held.has(locator)) skipped.add(locator);
      continue;
    }
    const checks: FileCheck[] = [];
    for (const [path, titles] of files) {
      const parts = harness.textFiles === undefined ? [path] : await harness.textFiles(path);
      let bytes = 0;
      for (const p of parts) bytes += statSync(p, { throwIfNoEntry: false })?.size ?? 0;
      checks.push({ path, parts, bytes, titles, perLine: harness.messageInOneLine === true });
    }
    const verdicts = await checkFiles(checks, needles, options);
    // An unreadable file is left to the full read, which says why.
    verdicts.forEach((v, i) => {
      if (v === false) skipped.add(checks[i]!.path);
    });
  }
  if (stats !== undefined) {
    stats.files = count;
    stats.passed = count - skipped.size;
  }
  return skipped;
}
