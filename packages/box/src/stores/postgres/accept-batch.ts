/**
 * Group commit for the cluster's inbox (issue 25 §2, issue 24 fast accepts): the inputs a worker
 * accepts while its earlier accepts are committing are committed together, in one transaction (the
 * rows in one `INSERT … ON CONFLICT (agent_id, nonce) DO NOTHING`, their turn jobs in one pg-boss
 * insert), so a burst pays a few round trips and one WAL flush per batch instead of five round
 * trips and a flush per input. Each input still resolves only after the commit that holds it: a 2xx
 * never comes before its row and its job are durable. A failed batch fails every input in it,
 * and none of them is kept.
 *
 * At most `MAX_BATCHES` batches commit at once (on as many pooled connections); an input that
 * arrives while they all run waits for the next batch, which takes everything waiting then.
 */
import type { PgBoss } from 'pg-boss';
import type { Database } from './database.ts';
import type { InboxInput } from '../inbox.ts';
import { TURN_QUEUE } from './turn-queue.ts';

/** Batches committing at once, per worker. */
const MAX_BATCHES = 4;
/** Inputs in one transaction at most. */
const MAX_BATCH = 500;

export interface AcceptRequest {
  agentId: string;
  nonce: string;
  input: InboxInput;
  acceptedAt: number;
}

interface Waiting {
  request: AcceptRequest;
  /** The row's seq, or null when the nonce was accepted before (here or by another worker). */
  resolve: (seq: number | null) => void;
  reject: (error: unknown) => void;
}

export class AcceptBatch {
  private waiting: Waiting[] = [];
  private running = 0;
  /** Batches committed so far, and inputs in them (tests and benchmarks). */
  batches = 0;
  inputs = 0;

  constructor(
    private readonly db: Database,
    private readonly boss: PgBoss,
  ) {}

  /** Commits one input with whatever else is waiting; resolves after the commit with its seq (null: a repeat). */
  accept(request: AcceptRequest): Promise<number | null> {
    return new Promise<number | null>((resolve, reject) => {
      this.waiting.push({ request, resolve, reject });
      // Inputs read in the same turn of the event loop join this batch.
      if (this.waiting.length === 1 && this.running < MAX_BATCHES) queueMicrotask(() => this.next());
    });
  }

  private next(): void {
    if (this.waiting.length === 0 || this.running >= MAX_BATCHES) return;
    const batch = this.waiting.splice(0, MAX_BATCH);
    this.running += 1;
    void this.commit(batch)
      .then(
        (seqs) => batch.forEach((one, i) => one.resolve(seqs[i]!)),
        (error: unknown) => batch.forEach((one) => one.reject(error)),
      )
      .finally(() => {
        this.running -= 1;
        this.next();
      });
  }

  private async commit(batch: readonly Waiting[]): Promise<Array<number | null>> {
    const key = (r: AcceptRequest) => `${r.agentId}\0${r.nonce}`;
    // A nonce twice in one batch is one row: the first is the input, the others repeats of it.
    const first = new Map<string, AcceptRequest>();
    for (const { request } of batch) if (!first.has(key(request))) first.set(key(request), request);
    const rows = [...first.values()];
    const client = await this.db.pool.connect();
    try {
      await client.query('BEGIN');
      // In the batch's order: seq follows it.
      const inserted = await client.query<{ agent_id: string; nonce: string; seq: string }>(
        `INSERT INTO ${this.db.table('inbox')} (agent_id, nonce, kind, input, accepted_at)
         SELECT r.agent_id, r.nonce, r.kind, r.input::jsonb, r.accepted_at
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[]) WITH ORDINALITY
              AS r(agent_id, nonce, kind, input, accepted_at, ord)
         ORDER BY r.ord
         ON CONFLICT (agent_id, nonce) DO NOTHING
         RETURNING agent_id, nonce, seq`,
        [
          rows.map((r) => r.agentId),
          rows.map((r) => r.nonce),
          rows.map((r) => r.input.kind),
          rows.map((r) => JSON.stringify(r.input)),
          rows.map((r) => r.acceptedAt),
        ],
      );
      const seqOf = new Map(inserted.rows.map((row) => [`${row.agent_id}\0${row.nonce}`, Number(row.seq)]));
      const started = rows.filter((r) => seqOf.has(key(r)));
      if (started.length > 0) {
        const ids = await this.boss.insert(
          TURN_QUEUE,
          started.map((r) => ({ data: { agentId: r.agentId, nonce: r.nonce }, singletonKey: r.agentId })),
          { db: { executeSql: (text, values) => client.query(text, values) }, returnId: true },
        );
        if (ids?.length !== started.length)
          throw new Error(`the turn queue took ${ids?.length ?? 0} of ${started.length} turn jobs`);
      }
      await client.query('COMMIT');
      this.batches += 1;
      this.inputs += batch.length;
      // The first of a key gets its seq; a repeat in the same batch, null.
      return batch.map(({ request }) =>
        first.get(key(request)) === request ? (seqOf.get(key(request)) ?? null) : null,
      );
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }
}

const batches = new WeakMap<Database, AcceptBatch>();

/** The worker's batch for its database (one per pool, shared by every agent's inbox). */
export function acceptBatchOf(db: Database, boss: PgBoss): AcceptBatch {
  let batch = batches.get(db);
  if (!batch) batches.set(db, (batch = new AcceptBatch(db, boss)));
  return batch;
}
