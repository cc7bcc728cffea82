/**
 * Counts the statements this process sends to PostgreSQL through `pg` (every pool and client; pg's
 * Pool sends through Client.query), for tests and benches that check how often a worker asks the
 * database. The ledger's synchronous connection lives in a worker thread and is not counted.
 */
import pg from 'pg';

export interface StatementCount {
  /** Statements sent since the count started (or since `reset`). */
  all: number;
  /** Those whose text `matches` picked. */
  matched: number;
  reset(): void;
}

export function countStatements(matches: (text: string) => boolean): StatementCount {
  const counted: StatementCount = {
    all: 0,
    matched: 0,
    reset() {
      counted.all = 0;
      counted.matched = 0;
    },
  };
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called with its client as `this` below
  const query = pg.Client.prototype.query as (this: pg.Client, ...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const config = args[0];
    const text =
      typeof config === 'string' ? config : ((config as { text?: string } | undefined)?.text ?? '');
    counted.all++;
    if (matches(text)) counted.matched++;
    return query.apply(this, args);
  } as typeof pg.Client.prototype.query;
  return counted;
}

/** pg-boss's fetch of a key_strict_fifo queue's jobs (the turn queue's). */
export const isStrictFifoFetch = (text: string): boolean => text.includes('strict_fifo_heads');
