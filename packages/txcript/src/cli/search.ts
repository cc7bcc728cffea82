/**
 * `txcript search`: ranked hits across every harness, each with the kind of
 * content that matched, a snippet with the matches marked, and a reference
 * that `view`, `export` and `continue` accept. `--json` is a stable array
 * (docs/cli.md). Without a query on a terminal it opens the picker.
 */
import { resolve } from 'node:path';
import { KIND_LABELS } from '../search/kinds.ts';
import type { Snippet } from '../search/hits.ts';
import { type Hit, searchOnce } from '../search/engine.ts';
import type { Colors } from './colors.ts';
import type { CliContext } from './context.ts';
import { EXIT_OK, usageError } from './errors.ts';
import { formatLocalMinute } from './list.ts';
import { parseWhen } from './when.ts';

export interface SearchOptions {
  from?: string;
  since?: string;
  until?: string;
  cwd?: string;
  limit?: number;
  json?: boolean;
  /** false: `--no-index`. */
  index?: boolean;
  /** The words came after `--`: a lone `--word` is text to find. */
  literal?: boolean;
}

export const DEFAULT_LIMIT = 20;

/** One element of `search --json`. Field names and types are a public contract (docs/cli.md). */
export interface SearchRow {
  ref: string;
  id: string;
  harness: string;
  /** 0 for a title hit. */
  message: number;
  kind: string;
  title: string | null;
  snippet: string;
  /** [start, end) offsets of the matches in `snippet` (UTF-16 units). */
  highlights: Array<[number, number]>;
  score: number;
  last_activity: string | null;
  cwd: string | null;
  locator: string;
}

export function hitRow(hit: Hit): SearchRow {
  return {
    ref: hit.ref,
    id: hit.session.id,
    harness: hit.session.harness,
    message: hit.message,
    kind: hit.kind,
    title: hit.session.title,
    snippet: hit.snippet.text,
    highlights: hit.snippet.highlights,
    score: hit.score,
    last_activity: hit.session.lastActivity,
    cwd: hit.session.cwd,
    locator: hit.session.locator,
  };
}

/** The snippet with its matches styled by `mark`. */
export function markSnippet(snippet: Snippet, mark: (s: string) => string): string {
  let out = '';
  let at = 0;
  for (const [start, end] of snippet.highlights) {
    out += snippet.text.slice(at, start) + mark(snippet.text.slice(start, end));
    at = end;
  }
  return out + snippet.text.slice(at);
}

/** The first line of a hit as people read it: reference, harness, kind, time, title. */
export function hitHeading(hit: Hit, c: Colors): string {
  const when = formatLocalMinute(hit.session.lastActivity);
  return [
    c.bold(hit.ref),
    c.cyan(hit.session.harness),
    c.magenta(KIND_LABELS[hit.kind]),
    when,
    hit.session.title ?? c.dim('(untitled)'),
  ]
    .filter((x) => x !== '')
    .join('  ');
}

export function formatHits(hits: readonly Hit[], c: Colors): string {
  // Without colour the matches are bracketed, so they still show in a pipe or a log.
  const mark = c.isColorSupported ? (s: string) => c.bold(c.yellow(s)) : (s: string) => `[${s}]`;
  return hits.map((h) => `${hitHeading(h, c)}\n    ${markSnippet(h.snippet, mark)}\n`).join('');
}

export interface ResolvedBounds {
  sinceMs?: number;
  untilMs?: number;
  cwd?: string;
}

/** `--since`, `--until` and `--cwd` as the index compares them. */
export function resolveBounds(
  ctx: CliContext,
  options: Pick<SearchOptions, 'since' | 'until' | 'cwd'>,
): ResolvedBounds {
  const now = ctx.io.now();
  return {
    ...(options.since !== undefined ? { sinceMs: parseWhen(options.since, '--since', now).getTime() } : {}),
    ...(options.until !== undefined ? { untilMs: parseWhen(options.until, '--until', now).getTime() } : {}),
    ...(options.cwd !== undefined ? { cwd: resolve(options.cwd) } : {}),
  };
}

export async function searchCommand(
  ctx: CliContext,
  words: readonly string[],
  options: SearchOptions,
): Promise<number> {
  // A --word among other words is text to find (`git merge --squash`); standing alone it is a
  // mistyped option, unless it came after `--`.
  const [only] = words;
  if (words.length === 1 && only!.startsWith('--') && options.literal !== true) {
    throw usageError({
      what: `unknown option '${only}'`,
      todo: `see "txcript search --help"; to find the text, write txcript search -- ${only}`,
    });
  }
  const query = words.join(' ');
  if (query.trim() === '') {
    if (ctx.io.stdout.isTTY === true && options.json !== true) {
      const { pickCommand } = await import('./pick.ts');
      return pickCommand(ctx, options);
    }
    throw usageError({
      what: 'search needs a query',
      todo: 'give words to find, e.g. txcript search pagination bug (or run it on a terminal to pick)',
    });
  }
  const hits = await searchOnce(ctx, {
    query,
    ...(options.from !== undefined ? { from: options.from } : {}),
    ...(options.index === false ? { index: false } : {}),
    filters: { ...resolveBounds(ctx, options), limit: options.limit ?? DEFAULT_LIMIT },
  });
  if (options.json === true) {
    ctx.io.stdout.write(`${JSON.stringify(hits.map(hitRow), null, 2)}\n`);
    return EXIT_OK;
  }
  if (hits.length === 0) {
    ctx.io.stderr.write(`txcript: nothing matches ${JSON.stringify(query)}\n`);
    return EXIT_OK;
  }
  ctx.io.stdout.write(formatHits(hits, ctx.out));
  return EXIT_OK;
}
