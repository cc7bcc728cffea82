/**
 * Finding sessions across harnesses: scan every store (or one), and resolve
 * what the user typed to one session: exact id, then exact title, then an
 * unambiguous id prefix.
 */
import type { DiscoverOptions, Harness, SessionSummary, Warning } from '../harness/types.ts';
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

/**
 * Every session the harnesses' stores know, and the warnings met on the way
 * (the caller decides whether they matter). A store that fails is a warning
 * when scanning all harnesses, and an error when it is the only one asked for.
 * `cache: false` makes every store read its sources afresh.
 */
export async function discoverSessions(
  ctx: CliContext,
  from: string | undefined,
  options: Pick<DiscoverOptions, 'cache'> = {},
): Promise<Discovered> {
  const scanned = await scannedHarnesses(ctx, from);
  const progress = createProgress({
    stream: ctx.io.stderr,
    delayMs: progressDelay(ctx.io.env),
    label: 'txcript: scanning sessions',
  });
  try {
    const results = await Promise.all(
      scanned.map(async (harness) => {
        try {
          const store = harness.store!(ctx.io.env);
          const found = await store.discover({
            onProgress: (done, total) => progress.update(harness.id, done, total),
            ...(options.cache === false ? { cache: false } : {}),
          });
          return { harness, found };
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          if (from !== undefined) {
            throw new CliError({ what: `could not scan ${harness.id} sessions: ${message}` });
          }
          return {
            harness,
            found: { sessions: [], warnings: [{ source: harness.id, message: `scan failed: ${message}` }] },
          };
        }
      }),
    );
    const sessions: FoundSession[] = [];
    const warnings: Warning[] = [];
    for (const { harness, found } of results) {
      warnings.push(...found.warnings);
      for (const summary of found.sessions) sessions.push({ summary, harness });
    }
    return { sessions, warnings };
  } finally {
    progress.finish();
  }
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
