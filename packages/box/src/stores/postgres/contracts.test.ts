/** The store contract suites on the cluster backend: PostgreSQL and Ceph RGW, real and on loopback. */
import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { AttachmentStore } from '../../attachments/store.ts';
import { attachmentsContract } from '../attachments.contract.ts';
import { useBackend } from '../contract.ts';
import { secretsContract } from '../secrets.contract.ts';
import { clusterBackend, useServices } from './backend.ts';
import { S3AttachmentStore } from './attachments.ts';
import { PgSecretStore } from './secrets.ts';
import { PgInbox } from './inbox.ts';
import { acceptBatchOf } from './accept-batch.ts';
import { inboxContract } from '../inbox.contract.ts';
import { TURN_QUEUE } from './turn-queue.ts';
import { StoreWriteError } from '../errors.ts';
import { ledgerContract } from '../ledger.contract.ts';
import { CHILD_A, childTranscriptContract, transcriptContract } from '../transcript.contract.ts';
import { PgLedger } from './ledger.ts';
import { PgTranscript } from './transcript.ts';
import { childTranscripts } from '../agent-stores.ts';

const services = useServices();
const key = randomBytes(32);

inboxContract(
  'postgres',
  clusterBackend(services, (home) => ({
    open: async () => PgInbox.open(home.db, await home.turnQueue(), home.agentId),
    close: (inbox) => inbox.close(),
  })),
);

describe('PgInbox accepting an input', () => {
  const open = useBackend(
    clusterBackend(services, (home) => ({
      open: async () => ({ home, boss: await home.turnQueue() }),
      close: () => undefined,
    })),
  );

  it('commits the row and its turn job together, keyed by agent, and a repeat adds neither', async () => {
    const { home, boss } = await open();
    const gatewayA = await PgInbox.open(home.db, boss, home.agentId);
    const gatewayB = await PgInbox.open(home.db, boss, home.agentId);
    expect(await gatewayA.accept('n1', { kind: 'prompt', prompt: 'one' }, 1)).toBe(true);
    // Another gateway that has not seen it: the database's conflict rule answers.
    expect(gatewayB.has('n1')).toBe(false);
    expect(await gatewayB.accept('n1', { kind: 'prompt', prompt: 'one' }, 2)).toBe(false);
    expect(await gatewayB.accept('n2', { kind: 'prompt', prompt: 'two' }, 3)).toBe(true);
    const rows = await home.db.pool.query<{ nonce: string }>(
      `SELECT nonce FROM ${home.db.table('inbox')} WHERE agent_id = $1 ORDER BY seq`,
      [home.agentId],
    );
    expect(rows.rows.map((row) => row.nonce)).toEqual(['n1', 'n2']);
    const jobs = await boss.findJobs<{ agentId: string; nonce: string }>(TURN_QUEUE, { key: home.agentId });
    expect(jobs.map((job) => job.data.nonce).sort()).toEqual(['n1', 'n2']);
    expect(new Set(jobs.map((job) => job.singletonKey))).toEqual(new Set([home.agentId]));
  });

  it('reads again what other handles changed: new rows, and pending rows settled or still pending', async () => {
    const { home, boss } = await open();
    const turns = await PgInbox.open(home.db, boss, home.agentId);
    const gateway = await PgInbox.open(home.db, boss, home.agentId);
    await gateway.accept('a', { kind: 'prompt', prompt: 'a' }, 1);
    await gateway.accept('b', { kind: 'prompt', prompt: 'b' }, 2);
    await turns.load();
    expect(turns.pending().map((row) => row.nonce)).toEqual(['a', 'b']);
    // Another handle starts 'a' and accepts 'c'; 'b', read before, is still pending.
    await gateway.markStarted('a', 0);
    await gateway.accept('c', { kind: 'prompt', prompt: 'c' }, 3);
    await turns.load();
    expect(turns.pending().map((row) => row.nonce)).toEqual(['b', 'c']);
    expect(['a', 'b', 'c'].map((nonce) => turns.has(nonce))).toEqual([true, true, true]);
    await gateway.withdraw('b', 'removed');
    await turns.load();
    expect(turns.pending().map((row) => row.nonce)).toEqual(['c']);
    expect(turns.has('b')).toBe(true);
  });

  it('commits inputs that arrive together in a few transactions: each acknowledged after its commit, in order, repeats known', async () => {
    const { home, boss } = await open();
    const agents = [home.agentId, `${home.agentId}-b`, `${home.agentId}-c`];
    const inboxes = await Promise.all(agents.map((agent) => PgInbox.open(home.db, boss, agent)));
    const batch = acceptBatchOf(home.db, boss);
    const before = batch.batches;
    const reader = await home.db.pool.connect();
    try {
      const accepted = await Promise.all(
        Array.from({ length: 60 }, async (_, i) => {
          // i % 10 === 9: the nonce of the input before it again, in the same burst.
          const nonce = `n${i % 10 === 9 ? i - 1 : i}`;
          const fresh = await inboxes[i % 3]!.accept(nonce, { kind: 'prompt', prompt: `p${i}` }, i);
          // Acknowledged: its row is there for another connection, with its turn job.
          const row = await reader.query(
            `SELECT 1 FROM ${home.db.table('inbox')} WHERE agent_id = $1 AND nonce = $2`,
            [agents[i % 3], nonce],
          );
          expect(row.rowCount, nonce).toBe(1);
          return fresh;
        }),
      );
      // A repeat lands on another agent (i % 3 differs), so it is that agent's own first input.
      expect(accepted.filter(Boolean)).toHaveLength(60);
      expect(batch.batches - before).toBeLessThan(60);
      const again = await inboxes[0]!.accept('n0', { kind: 'prompt', prompt: 'p0' }, 99);
      expect(again).toBe(false);
      const twice = await Promise.all([
        inboxes[1]!.accept('same', { kind: 'prompt', prompt: 'x' }, 100),
        inboxes[1]!.accept('same', { kind: 'prompt', prompt: 'x' }, 101),
      ]);
      expect(twice.sort()).toEqual([false, true]);
      for (const [a, agent] of agents.entries()) {
        const rows = await reader.query<{ nonce: string }>(
          `SELECT nonce FROM ${home.db.table('inbox')} WHERE agent_id = $1 ORDER BY seq`,
          [agent],
        );
        const sent = Array.from({ length: 60 }, (_, i) => i).filter((i) => i % 3 === a);
        const expected = [...sent.map((i) => `n${i % 10 === 9 ? i - 1 : i}`), ...(a === 1 ? ['same'] : [])];
        expect(rows.rows.map((row) => row.nonce)).toEqual(expected);
        const jobs = await boss.findJobs<{ nonce: string }>(TURN_QUEUE, { key: agent });
        expect(jobs.map((job) => job.data.nonce).sort()).toEqual([...expected].sort());
      }
    } finally {
      reader.release();
    }
  });

  it('keeps no row when the job cannot be sent (one transaction)', async () => {
    const { home, boss } = await open();
    const inbox = await PgInbox.open(home.db, boss, home.agentId);
    await boss.deleteQueue(TURN_QUEUE);
    await expect(inbox.accept('n1', { kind: 'prompt', prompt: 'one' }, 1)).rejects.toBeInstanceOf(
      StoreWriteError,
    );
    expect(inbox.has('n1')).toBe(false);
    expect(inbox.pending()).toEqual([]);
    const rows = await home.db.pool.query(`SELECT 1 FROM ${home.db.table('inbox')} WHERE agent_id = $1`, [
      home.agentId,
    ]);
    expect(rows.rowCount).toBe(0);
  });
});

// Each handle writes under no lease (epoch null), as the gateway's own writes do.
ledgerContract(
  'postgres',
  clusterBackend(services, ({ db, agentId }) => ({
    open: () => new PgLedger(db, { agentId, epoch: null }),
    close: (ledger) => ledger.close(),
  })),
);

describe('PgLedger updating a kv value', () => {
  const open = useBackend<PgLedger>(
    clusterBackend(services, ({ db, agentId }) => ({
      open: () => new PgLedger(db, { agentId, epoch: null }),
      close: (ledger) => ledger.close(),
    })),
  );

  it('loses no write made between its read and its write: it reads again and updates that', async () => {
    const ledger = await open();
    const gateway = await open();
    ledger.setKv('unreadState', { unreadCount: 3, lastViewedAt: 1 });
    const seen: unknown[] = [];
    const written = ledger.updateKv('unreadState', (current) => {
      seen.push(current);
      // Another worker marks the agent read while this one counts (once: the retry is not raced).
      if (seen.length === 1) gateway.setKv('unreadState', { unreadCount: 0, lastViewedAt: 5 });
      const state = current as { unreadCount: number; lastViewedAt: number };
      return { ...state, unreadCount: state.unreadCount + 1 };
    });
    expect(seen).toEqual([
      { unreadCount: 3, lastViewedAt: 1 },
      { unreadCount: 0, lastViewedAt: 5 },
    ]);
    expect(written).toEqual({ unreadCount: 1, lastViewedAt: 5 });
    expect(gateway.getKv('unreadState')).toEqual({ unreadCount: 1, lastViewedAt: 5 });
  });

  it('creates a value that is absent, and retries when another handle created it first', async () => {
    const ledger = await open();
    const gateway = await open();
    let tries = 0;
    const written = ledger.updateKv('metadata', (current) => {
      tries++;
      if (tries === 1) gateway.setKv('metadata', { by: 'gateway' });
      return { ...(current as object | undefined), seen: tries };
    });
    expect(written).toEqual({ by: 'gateway', seen: 2 });
  });

  it('gives up with a clear error when the value changes under every try, leaving the other write', async () => {
    const ledger = await open();
    const gateway = await open();
    ledger.setKv('unreadState', { n: 0 });
    let n = 0;
    expect(() =>
      ledger.updateKv('unreadState', () => {
        gateway.setKv('unreadState', { n: ++n });
        return { n: -1 };
      }),
    ).toThrow(/changed under each of 8 updates/);
    expect(gateway.getKv('unreadState')).toEqual({ n: 8 });
  });
});

transcriptContract(
  'postgres',
  clusterBackend(services, ({ db, agentId }) => ({
    open: () => new PgTranscript(db, { agentId, epoch: null }),
    close: (log) => log.close(),
  })),
);

transcriptContract(
  'postgres, a subagent',
  clusterBackend(services, ({ db, agentId }) => ({
    open: () => new PgTranscript(db, { agentId, epoch: null }, { childId: CHILD_A, worker: null }),
    close: (log) => log.close(),
  })),
);

childTranscriptContract(
  'postgres',
  clusterBackend(services, ({ db, agentId }) => ({
    open: () => ({
      own: () => new PgTranscript(db, { agentId, epoch: null }),
      // As the cluster's stores open it (postgres/agent-stores.ts).
      child: childTranscripts(
        (childId) => new PgTranscript(db, { agentId, epoch: null }, { childId, worker: null }),
      ),
    }),
    close: () => undefined,
  })),
);

secretsContract(
  'postgres',
  clusterBackend(services, ({ db, agentId }) => ({
    open: () => new PgSecretStore(db, key, agentId),
    close: () => undefined,
  })),
);

attachmentsContract(
  's3',
  clusterBackend(services, ({ s3, bucket, agentId, dir }) => {
    let workers = 0;
    return {
      // Each handle is another worker: its own local copy, the same bucket.
      open: () => {
        const store = new S3AttachmentStore(
          s3,
          bucket,
          agentId,
          new AttachmentStore(path.join(dir, `worker-${++workers}`), 1024),
        );
        return {
          store,
          // Read back from the bucket, not from the local copy.
          async readBack(file: string) {
            const response = await s3.send(
              new GetObjectCommand({ Bucket: bucket, Key: store.keyOf(path.basename(file)) }),
            );
            return response.Body!.transformToByteArray();
          },
        };
      },
      close: () => undefined,
    };
  }),
);

describe('S3AttachmentStore across workers', () => {
  const open = useBackend(
    clusterBackend(services, ({ s3, bucket, agentId, dir }) => {
      let workers = 0;
      return {
        open: () => ({
          s3,
          bucket,
          store: new S3AttachmentStore(
            s3,
            bucket,
            agentId,
            new AttachmentStore(path.join(dir, `worker-${++workers}`), 1 << 20),
          ),
        }),
        close: () => undefined,
      };
    }),
  );

  it('lets the first worker create an object, another find it there, and a third fetch it whole', async () => {
    const first = await open();
    const second = await open();
    const third = await open();
    const bytes = randomBytes(300_000);
    const made = await first.store.ingestBytes(bytes, 'photo.png');
    expect(made.created).toBe(true);
    // The second worker has no local copy: the bucket refused its write (If-None-Match: *).
    const again = await second.store.ingestBytes(bytes, 'photo.png');
    expect(again).toMatchObject({ created: false, sha256: made.sha256 });
    const fetched = await third.store.fetch(path.basename(made.path));
    expect(fetched).not.toBe(made.path);
    expect(
      createHash('sha256')
        .update(await readFile(fetched))
        .digest('hex'),
    ).toBe(made.sha256);
  });

  it('refuses an object whose bytes are not the ones its name says, and keeps no copy', async () => {
    const first = await open();
    const second = await open();
    const made = await first.store.ingestBytes(new TextEncoder().encode('the real bytes'), 'a.txt');
    const name = path.basename(made.path);
    await first.s3.send(
      new PutObjectCommand({ Bucket: first.bucket, Key: first.store.keyOf(name), Body: 'changed bytes' }),
    );
    await expect(second.store.fetch(name)).rejects.toThrow(/changed outside the box/);
    const target = path.join(path.dirname(path.dirname(made.path)), 'worker-2', name);
    await expect(readFile(target)).rejects.toThrow(/ENOENT/);
    expect(() => second.store.keyOf('../other-agent/x')).toThrow(/not a stored attachment name/);
  });
});
