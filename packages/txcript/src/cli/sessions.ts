/**
 * Finding sessions across harnesses: scan every store (or one), and resolve
 * what the user typed to one session: exact id, then exact title, then an
 * unambiguous id prefix.
 */
import type { SessionSource } from '../harness/listing.ts';
import type { DiscoverOptions, Harness, SessionSummary, Store, Warning } from '../harness/types.ts';
import type { CliContext } from './context.ts';
import { CliError, usageError } from './errors.ts';
import { createProgress, progressDelay } from './progress.ts';

export interface FoundSession {
  summary: SessionSummary;
  harness: Harness;
}

/** The harnesses to scan: the one `--from` names (which must have a store), or every one with a store. */
export async function scannedHarnesses(ctx: CliContext, from: string | undefined): Promise<Harness[]> {
  if (from === undefined) return (await ctx.harnesses()).filter((h) => h.store !== undefined);
  const harness = await ctx.findHarness(from);
  if (harness.store === undefined) {
    throw usageError({
      what: `harness ${harness.id} keeps no sessions of its own`,
      where: `--from ${from}`,
      todo: `pass a ${harness.id} file to "txcript convert" instead`,
    });
  }
  return [harness];
}

export interface Discovered {
  sessions: FoundSession[];
  warnings: Warning[];
}

/** A session as a listing knows it: its summary and which harness has it. */
export interface ListedSession {
  summary: SessionSummary;
  harness: { id: string };
}

/**
 * Every session the sources' stores know, and the warnings met on the way
 * (the caller decides whether they matter). A store that fails is a warning
 * when scanning all harnesses, and an error when it is the only one asked for.
 */
async function discoverIn<S extends { id: string }>(
  ctx: CliContext,
  scanned: readonly S[],
  openStore: (source: S) => Promise<Store>,
  from: string | undefined,
  options: Pick<DiscoverOptions, 'cache'>,
): Promise<{ sessions: { summary: SessionSummary; harness: S }[]; warnings: Warning[] }> {
  const progress = createProgress({
    stream: ctx.io.stderr,
    delayMs: progressDelay(ctx.io.env),
    label: 'txcript: scanning sessions',
  });
  try {
    const results = await Promise.all(
      scanned.map(async (source) => {
        try {
          const store = await openStore(source);
          const found = await store.discover({
            onProgress: (done, total) => progress.update(source.id, done, total),
            ...(options.cache === false ? { cache: false } : {}),
          });
          return { source, found };
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          if (from !== undefined) {
            throw new CliError({ what: `could not scan ${source.id} sessions: ${message}` });
          }
          return {
            source,
            found: { sessions: [], warnings: [{ source: source.id, message: `scan failed: ${message}` }] },
          };
        }
      }),
    );
    const sessions: { summary: SessionSummary; harness: S }[] = [];
    const warnings: Warning[] = [];
    for (const { source, found } of results) {
      warnings.push(...found.warnings);
      for (const summary of found.sessions) sessions.push({ summary, harness: source });
    }
    return { sessions, warnings };
  } finally {
    progress.finish();
  }
}

/**
 * Every session the harnesses' stores know (see discoverIn), with the
 * harness each came from. `cache: false` makes every store read its sources afresh.
 */
export async function discoverSessions(
  ctx: CliContext,
  from: string | undefined,
  options: Pick<DiscoverOptions, 'cache'> = {},
): Promise<Discovered> {
  const scanned = await scannedHarnesses(ctx, from);
  return discoverIn(ctx, scanned, (h) => Promise.resolve(h.store!(ctx.io.env)), from, options);
}

/**
 * The same listing for commands that only show summaries (`list`): the
 * stores are loaded alone (harness/listing.ts), not the whole registry with
 * every codec. A `--from` that names no store harness goes the registry's way,
 * for its error.
 */
export async function listSessions(
  ctx: CliContext,
  from: string | undefined,
  options: Pick<DiscoverOptions, 'cache'> = {},
): Promise<{ sessions: ListedSession[]; warnings: Warning[] }> {
  if (ctx.io.harnesses !== undefined) return discoverSessions(ctx, from, options);
  const { findByName, sessionSources } = await import('../harness/listing.ts');
  const picked = from === undefined ? sessionSources : [findByName(from, sessionSources)];
  if (picked.some((s) => s === undefined)) return discoverSessions(ctx, from, options);
  const scanned = picked as readonly SessionSource[];
  return discoverIn(ctx, scanned, (s) => s.openStore(ctx.io.env), from, options);
}

/** The ids of the harnesses `listSessions` scans for `from`, found as it finds them (no codec loaded). */
export async function listedHarnessIds(ctx: CliContext, from: string | undefined): Promise<string[]> {
  if (ctx.io.harnesses === undefined) {
    const { findByName, sessionSources } = await import('../harness/listing.ts');
    if (from === undefined) return sessionSources.map((s) => s.id);
    const source = findByName(from, sessionSources);
    if (source !== undefined) return [source.id];
  }
  return (await scannedHarnesses(ctx, from)).map((h) => h.id);
}

/** Listed sessions with their harnesses (codecs and all) loaded, to be read; none loaded for none. */
export async function withHarnesses(
  ctx: CliContext,
  listed: readonly ListedSession[],
): Promise<FoundSession[]> {
  if (listed.length === 0) return [];
  const byId = new Map((await ctx.harnesses()).map((h) => [h.id, h]));
  return listed.map((s) => {
    const harness = byId.get(s.harness.id);
    if (harness === undefined) throw new Error(`harness ${s.harness.id} is listed but not registered`);
    return { summary: s.summary, harness };
  });
}

function describeCandidate(s: FoundSession): string {
  const title = s.summary.title === undefined ? '(untitled)' : JSON.stringify(s.summary.title);
  return `${s.summary.id}  ${s.harness.id}  ${title}`;
}

const MAX_CANDIDATES = 10;

function ambiguous(query: string, how: string, matches: FoundSession[]): CliError {
  const shown = matches.slice(0, MAX_CANDIDATES).map(describeCandidate);
  if (matches.length > MAX_CANDIDATES) shown.push(`… and ${matches.length - MAX_CANDIDATES} more`);
  const harnessesInvolved = new Set(matches.map((m) => m.harness.id));
  return usageError({
    what: `"${query}" ${how} ${matches.length} sessions`,
    todo:
      harnessesInvolved.size > 1 && how === 'is the id of'
        ? 'add --from <harness> to pick one'
        : 'give more of the id, or --from <harness>',
    details: shown,
  });
}

/** The one session `query` names. Ambiguity is a usage error (2); no match a runtime error (1). */
export function resolveSession(
  query: string,
  sessions: readonly FoundSession[],
  from?: string,
): FoundSession {
  const exact = sessions.filter((s) => s.summary.id === query);
  if (exact.length === 1) return exact[0]!;
  if (exact.length > 1) throw ambiguous(query, 'is the id of', exact);
  const titled = sessions.filter((s) => s.summary.title === query);
  if (titled.length === 1) return titled[0]!;
  if (titled.length > 1) throw ambiguous(query, 'is the title of', titled);
  const prefixed = query === '' ? [] : sessions.filter((s) => s.summary.id.startsWith(query));
  if (prefixed.length === 1) return prefixed[0]!;
  if (prefixed.length > 1) throw ambiguous(query, 'is a prefix of', prefixed);
  throw new CliError({
    what: `no session matches "${query}"`,
    where:
      from === undefined
        ? `${sessions.length} sessions searched`
        : `--from ${from}, ${sessions.length} sessions searched`,
    todo: 'run "txcript list" to see session ids and titles',
  });
}
