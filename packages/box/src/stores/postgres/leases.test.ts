/** Leases and fencing against a real PostgreSQL: one owner at a time, and a superseded writer refused. */
import type { LedgerEntry } from '@sendbox/protocol';
import { describe, expect, it } from 'vitest';
import { useBackend } from '../contract.ts';
import { clusterBackend, useServices, type ClusterHome } from './backend.ts';
import { Leases, SupersededError, writeLockKey, type AgentFence } from './leases.ts';
import { randomBytes } from 'node:crypto';
import { DocumentMemory } from '../../memory/memory-document.ts';
import { PgLedger } from './ledger.ts';
import { agentDocumentNames, PgSealedDocument } from './sealed-documents.ts';
import { PgTaskBook } from './task-book.ts';
import { WORKER_TTL_MS } from './worker-heartbeats.ts';
import { PgTranscript } from './transcript.ts';
import { CHILD_A } from '../transcript.contract.ts';

const services = useServices();
const notice = (id: string): LedgerEntry => ({ id, kind: 'notice', text: id, timestampMs: 1 });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('leases with fencing (postgres)', () => {
  const open = useBackend(
    clusterBackend<ClusterHome>(services, (home) => ({ open: () => home, close: () => undefined })),
  );

  it('gives the lease to one owner at a time, and a higher epoch to each claim', async () => {
    const home = await open();
    const a = new Leases(home.db, 'worker-a', 400);
    const b = new Leases(home.db, 'worker-b', 400);
    const first = await a.claim(home.agentId);
    expect(first).toMatchObject({ owner: 'worker-a', epoch: 1 });
    expect(await b.claim(home.agentId)).toBeUndefined();
    // The holder claiming again (its next turn) gets a new epoch.
    const again = await a.claim(home.agentId);
    expect(again?.epoch).toBe(2);
    expect(await a.renew(first!)).toBe(false);
    expect(await a.renew(again!)).toBe(true);
    // Once it lapses, another worker takes it.
    await sleep(500);
    const taken = await b.claim(home.agentId);
    expect(taken).toMatchObject({ owner: 'worker-b', epoch: 3 });
    expect(await a.renew(again!)).toBe(false);
    // A released lease is free at once, and its epoch still grows.
    await b.release(taken!);
    expect((await a.claim(home.agentId))?.epoch).toBe(4);
  });

  it('lets exactly one of many concurrent claims win', async () => {
    const home = await open();
    const workers = Array.from({ length: 12 }, (_, i) => new Leases(home.db, `worker-${i}`, 10_000));
    for (let round = 1; round <= 3; round++) {
      const agentId = `${home.agentId}-${round}`;
      const results = await Promise.all(workers.map((worker) => worker.claim(agentId)));
      const won = results.filter((lease) => lease !== undefined);
      expect(won).toHaveLength(1);
      expect(won[0]!.epoch).toBe(1);
    }
  });

  it('refuses every write of a worker whose lease was taken over, and keeps the new holder’s', async () => {
    const home = await open();
    const a = new Leases(home.db, 'worker-a', 300);
    const b = new Leases(home.db, 'worker-b', 300);
    const leaseA = (await a.claim(home.agentId))!;
    const fenceA: AgentFence = { agentId: home.agentId, epoch: leaseA.epoch };
    const ledgerA = new PgLedger(home.db, fenceA);
    const logA = new PgTranscript(home.db, fenceA);
    ledgerA.appendEntries([notice('t1u')]);
    logA.append('{"a":1}\n');

    // Worker A stalls past its lease (a GC pause, a stopped process); B takes the agent over.
    await sleep(400);
    const leaseB = await b.claimWhenFree(home.agentId);
    expect(leaseB.epoch).toBe(leaseA.epoch + 1);
    const fenceB: AgentFence = { agentId: home.agentId, epoch: leaseB.epoch };
    const ledgerB = new PgLedger(home.db, fenceB);
    const logB = new PgTranscript(home.db, fenceB);

    // A wakes and writes: refused, whole.
    expect(() => ledgerA.appendEntries([notice('t1a0'), notice('t1e')])).toThrow(SupersededError);
    expect(() => logA.append('{"a":2}\n')).toThrow(/taken over by another worker/);
    expect(await a.renew(leaseA)).toBe(false);

    ledgerB.appendEntries([notice('t1n0')]);
    logB.append('{"b":1}\n');
    expect(ledgerB.readLedgerEntries().rows.map((row) => [row.seq, row.id])).toEqual([
      [1, 't1u'],
      [2, 't1n0'],
    ]);
    expect(await logB.read()).toBe('{"a":1}\n{"b":1}\n');
    const epochs = await home.db.pool.query<{ epoch: string }>(
      `SELECT epoch FROM ${home.db.table('ledger')} WHERE agent_id = $1 UNION ALL
       SELECT epoch FROM ${home.db.table('transcript')} WHERE agent_id = $1 ORDER BY 1`,
      [home.agentId],
    );
    expect(epochs.rows.map((row) => Number(row.epoch))).toEqual([1, 1, 2, 2]);
  });

  it("refuses a subagent's line from a superseded worker, and lets one that outlived its turn write on while its task runs there", async () => {
    const home = await open();
    const a = new Leases(home.db, 'worker-a', 300);
    const b = new Leases(home.db, 'worker-b', 300);
    const leaseA = (await a.claim(home.agentId))!;
    const fenceA: AgentFence = { agentId: home.agentId, epoch: leaseA.epoch };
    // Worker A's turn starts the child (its task row, fenced) and the child writes its first line.
    await home.db.pool.query(
      `INSERT INTO ${home.db.table('worker_heartbeats')} (worker, seen_at) VALUES ('worker-a', now())`,
    );
    new PgTaskBook(home.db, home.agentId, 'worker-a', 60_000, fenceA).started({
      id: CHILD_A,
      kind: 'subagent',
      turn: 1,
      toolCallId: 'call_task',
      label: 'a job',
      outputPath: null,
      agentId: CHILD_A,
      startedAt: 1,
    });
    const childA = new PgTranscript(home.db, fenceA, { childId: CHILD_A, worker: 'worker-a' });
    childA.append('{"a":1}\n');

    // The turn ends and the agent's next turn takes the lease (here on worker B): the child, a
    // background one, still runs on A and writes on.
    await a.release(leaseA);
    const leaseB = (await b.claim(home.agentId))!;
    const fenceB: AgentFence = { agentId: home.agentId, epoch: leaseB.epoch };
    childA.append('{"a":2}\n');
    // Under the old epoch, a worker its task does not run on writes none of its lines.
    const elsewhere = new PgTranscript(home.db, fenceA, { childId: CHILD_A, worker: 'worker-b' });
    expect(() => elsewhere.append('{"stale":1}\n')).toThrow(SupersededError);
    const unnamed = new PgTranscript(home.db, fenceA, { childId: CHILD_A, worker: null });
    expect(() => unnamed.append('{"stale":2}\n')).toThrow(SupersededError);

    // A is found dead (its heartbeat lapsed): B's reader marks the task lost and closes the child
    // under B's lease; A, only paused, wakes and is refused.
    await home.db.pool.query(`DELETE FROM ${home.db.table('worker_heartbeats')} WHERE worker = 'worker-a'`);
    const lost = new PgTaskBook(home.db, home.agentId, 'worker-b', 60_000, fenceB).interruptLeftovers(2);
    expect(lost.map((task) => task.id)).toEqual([CHILD_A]);
    new PgTranscript(home.db, fenceB, { childId: CHILD_A, worker: 'worker-b' }).append('{"closed":1}\n');
    expect(() => childA.append('{"a":3}\n')).toThrow(SupersededError);

    const rows = await home.db.pool.query<{ text: string; epoch: string }>(
      `SELECT text, epoch FROM ${home.db.table('subagent_transcript')}
       WHERE agent_id = $1 AND child_id = $2 ORDER BY seq`,
      [home.agentId, CHILD_A],
    );
    expect(rows.rows.map((row) => [row.text, Number(row.epoch)])).toEqual([
      ['{"a":1}\n', 1],
      ['{"a":2}\n', 1],
      ['{"closed":1}\n', 2],
    ]);
  });

  it('orders a write in flight before a takeover: the claim waits for its commit', async () => {
    const home = await open();
    const a = new Leases(home.db, 'worker-a', 100);
    const b = new Leases(home.db, 'worker-b', 100);
    const leaseA = (await a.claim(home.agentId))!;
    await sleep(150); // lapsed, not yet taken
    const fence: AgentFence = { agentId: home.agentId, epoch: leaseA.epoch };
    const writer = await home.db.pool.connect();
    try {
      await writer.query('BEGIN');
      // A write's fence, passed (still epoch 1) in a transaction not yet committed.
      await writer.query(`SELECT ${home.db.schema}.fence_agent_write($1, $2, $3)`, [
        writeLockKey(home.db, home.agentId),
        home.agentId,
        fence.epoch,
      ]);
      let claimed = false;
      const claim = b.claim(home.agentId).then((lease) => {
        claimed = true;
        return lease;
      });
      await sleep(300);
      expect(claimed).toBe(false); // held back by the write's share lock on the lease row
      await writer.query('COMMIT');
      expect((await claim)?.epoch).toBe(leaseA.epoch + 1);
    } finally {
      writer.release();
    }
    // Once the claim committed, the same fence finds no row: the write is refused.
    expect(() => new PgLedger(home.db, fence).appendEntries([notice('late')])).toThrow(SupersededError);
  });

  it('refuses the task rows and memory saves of a turn whose lease was taken over; a gateway’s stay unfenced', async () => {
    const home = await open();
    const a = new Leases(home.db, 'worker-a', 200);
    const b = new Leases(home.db, 'worker-b', 200);
    const leaseA = (await a.claim(home.agentId))!;
    const fenceA: AgentFence = { agentId: home.agentId, epoch: leaseA.epoch };
    await sleep(300);
    const leaseB = await b.claimWhenFree(home.agentId);
    const fenceB: AgentFence = { agentId: home.agentId, epoch: leaseB.epoch };
    const gateway: AgentFence = { agentId: home.agentId, epoch: null };
    const task = (id: string) => ({
      id,
      kind: 'command' as const,
      turn: 0,
      toolCallId: `call-${id}`,
      label: 'sleep 300',
      outputPath: null,
      agentId: null,
      startedAt: Date.now(),
    });
    const book = (fence: AgentFence) => new PgTaskBook(home.db, home.agentId, 'worker', WORKER_TTL_MS, fence);
    expect(() => book(fenceA).started(task('late'))).toThrow(SupersededError);
    book(fenceB).started(task('current'));
    book(gateway).started(task('gateway'));
    expect(
      book(gateway)
        .recent(10)
        .map((record) => record.id)
        .sort(),
    ).toEqual(['current', 'gateway']);

    const key = randomBytes(32);
    const memory = (fence: AgentFence) =>
      new DocumentMemory(
        new PgSealedDocument(home.db, key, agentDocumentNames(home.agentId).memory, fence),
        'the agent memory row',
        'agent',
      );
    await expect(memory(fenceA).write('from the superseded turn', 1)).rejects.toThrow(SupersededError);
    await memory(fenceB).write('from the current turn', 2);
    await memory(gateway).write('from a gateway', 3);
    await expect(memory(fenceA).forget('from a gateway')).rejects.toThrow(SupersededError);
    expect((await memory(gateway).entries()).map((entry) => entry.text)).toEqual([
      'from the current turn',
      'from a gateway',
    ]);
  });

  it('writes under no lease (epoch null) serialized, with seqs counted per agent', async () => {
    const home = await open();
    const one = new PgLedger(home.db, { agentId: home.agentId, epoch: null });
    const other = new PgLedger(home.db, { agentId: `${home.agentId}-other`, epoch: null });
    expect(one.appendEntries([notice('a'), notice('b')])).toEqual([1, 2]);
    expect(other.appendEntries([notice('a')])).toEqual([1]);
    expect(one.appendEntries([notice('c')])).toEqual([3]);
    expect(() => one.appendEntries([notice('d'), notice('a')])).toThrow(/already exists/);
    expect(one.countEntries()).toBe(3);
  });
});
