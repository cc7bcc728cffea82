/**
 * `txcript pick` (and `txcript search` with no query on a terminal): type to
 * filter the search hits, arrows to move, Enter to continue the session of
 * the hit in its own harness (or `--with H`), Esc or Ctrl-C to cancel. The
 * hit under the cursor is previewed below the list.
 *
 * The terminal UI is @inquirer/search (a maintained prompt with an async
 * source, abortable searches, paging and a per-choice description, which is
 * the preview); it owns the screen, so no escape code is written here.
 * Esc is read as a keypress (readline's parsing) and aborts the prompt.
 */
import { emitKeypressEvents } from 'node:readline';
import search from '@inquirer/search';
import { KIND_LABELS } from '../search/kinds.ts';
import { SessionIndex, filtersFor, recentSessions, type Hit, type IndexedSession } from '../search/engine.ts';
import { findHits } from '../search/hits.ts';
import { parseQuery } from '../search/query.ts';
import type { CliContext } from './context.ts';
import { CliError, EXIT_OK, usageError } from './errors.ts';
import { formatLocalMinute } from './list.ts';
import { type SearchOptions, markSnippet, resolveBounds } from './search.ts';

export interface PickOptions extends SearchOptions {
  with?: string;
}

/** What a picker line stands for: a hit, or (before anything is typed) a recent session. */
interface Pick {
  session: IndexedSession;
  hit?: Hit;
}

/** Exit code of a cancelled pick, as a shell reports an interrupted command. */
export const EXIT_CANCELLED = 130;

const RECENT = 50;

function label(p: Pick): string {
  const s = p.session;
  const where = p.hit === undefined ? s.id : p.hit.ref;
  const kind = p.hit === undefined ? '' : `  ${KIND_LABELS[p.hit.kind]}`;
  return `${where}  ${s.harness}${kind}  ${s.title ?? '(untitled)'}`;
}

function preview(ctx: CliContext, p: Pick): string {
  const c = ctx.out;
  const s = p.session;
  const facts = [
    s.harness,
    s.messageCount === null ? undefined : `${s.messageCount} messages`,
    s.lastActivity === null ? undefined : formatLocalMinute(s.lastActivity),
    s.cwd ?? undefined,
  ].filter((x) => x !== undefined);
  const lines = [`${s.title ?? s.id}`, facts.join(' · ')];
  if (p.hit !== undefined) {
    lines.push(`${KIND_LABELS[p.hit.kind]} in ${p.hit.ref}:`);
    lines.push(markSnippet(p.hit.snippet, (x) => c.bold(c.yellow(x))));
  }
  return lines.join('\n');
}

export async function pickCommand(ctx: CliContext, options: PickOptions): Promise<number> {
  const input = process.stdin;
  if (input.isTTY !== true || ctx.io.stdout.isTTY !== true) {
    throw usageError({
      what: 'pick needs a terminal',
      todo: 'run it in a terminal, or use "txcript search <query>" in scripts',
    });
  }
  // Checked before the scan, so a bad option fails at once.
  if (options.with !== undefined) await ctx.findHarness(options.with);
  const bounds = resolveBounds(ctx, options);
  const filters = await filtersFor(ctx, options.from, { ...bounds, limit: options.limit ?? RECENT });
  const index = new SessionIndex(ctx, options);
  let picked: Pick;
  try {
    // One refresh up front; each keystroke only queries.
    const recent = await index.use(options.from, (i) =>
      recentSessions(i.sessions(filters.harnesses), filters).map((session): Pick => ({ session })),
    );
    const controller = new AbortController();
    emitKeypressEvents(input);
    const onKey = (_: unknown, key: { name?: string } | undefined) => {
      if (key?.name === 'escape') controller.abort();
    };
    input.on('keypress', onKey);
    try {
      picked = await search<Pick>(
        {
          message: 'Search sessions:',
          pageSize: 10,
          source: async (term) => {
            const text = term?.trim() ?? '';
            let picks: Pick[];
            try {
              picks =
                text === ''
                  ? recent
                  : await index.use(
                      options.from,
                      (i) =>
                        findHits(i, parseQuery(text), filters).map((hit): Pick => ({
                          session: hit.session,
                          hit,
                        })),
                      Infinity,
                    );
            } catch (err) {
              // Not thrown: @inquirer/search would keep the last list, and Enter would pick from it.
              return [unpickable(err)];
            }
            return picks.map((p) => ({ value: p, name: label(p), description: preview(ctx, p) }));
          },
        },
        { input, output: process.stdout, signal: controller.signal, clearPromptOnDone: true },
      );
    } catch (err) {
      const name = err instanceof Error ? err.name : '';
      if (name === 'AbortPromptError' || name === 'ExitPromptError') {
        ctx.io.stderr.write('txcript: pick cancelled\n');
        return EXIT_CANCELLED;
      }
      throw err;
    } finally {
      input.off('keypress', onKey);
    }
  } finally {
    index.close();
  }
  const { continueCommand } = await import('./continue.ts');
  const code = await continueCommand(ctx, picked.session.id, {
    from: picked.session.harness,
    ...(options.with !== undefined ? { with: options.with } : {}),
    resume: true,
    metadata: [],
  });
  return code ?? EXIT_OK;
}

/**
 * The one line of a list that cannot be searched yet (a query being typed may be
 * unfinished: `"half a phras`): why, and what to do, with nothing to pick.
 */
function unpickable(err: unknown): { value: Pick; name: string; disabled: string } {
  const why = err instanceof Error ? err.message : String(err);
  const todo = err instanceof CliError && err.todo !== undefined ? err.todo : 'edit the query';
  // The value is never returned: a disabled line cannot be chosen.
  return { value: undefined as unknown as Pick, name: why, disabled: `(${todo})` };
}
