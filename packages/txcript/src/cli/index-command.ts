/**
 * `txcript index`: bring the search index up to date now, and say what it
 * holds. A first `search` starts it in the background (search/index-build.ts);
 * run by hand, it builds the index before the first search needs it.
 */
import { summaryCacheDisabled } from '../harness/summary-cache-file.ts';
import { holdingBuildLock } from '../search/index-build.ts';
import { SessionIndex } from '../search/engine.ts';
import { indexFile } from '../search/index-db.ts';
import type { CliContext } from './context.ts';
import { EXIT_OK, usageError } from './errors.ts';

export async function indexCommand(ctx: CliContext, options: { from?: string }): Promise<number> {
  if (summaryCacheDisabled(ctx.io.env)) {
    throw usageError({
      what: 'TXCRIPT_NO_CACHE is set: txcript keeps no search index',
      todo: 'unset TXCRIPT_NO_CACHE to build one (searches then scan every session)',
    });
  }
  const file = indexFile(ctx.io.env);
  return holdingBuildLock(ctx.io.env, async () => {
    const sessions = new SessionIndex(ctx);
    try {
      await sessions.use(options.from, () => undefined);
    } finally {
      sessions.close();
    }
    const stats = sessions.lastStats;
    if (stats !== undefined) {
      ctx.io.stdout.write(
        `${stats.sessions} sessions indexed (${stats.read} read now, ${stats.removed} gone) in ${file}\n`,
      );
    }
    return EXIT_OK;
  });
}
