/**
 * A turn cut while its call waits on an approval card (issue 25): the worker process running it is
 * SIGKILLed, and another worker takes the agent over, on the real PostgreSQL and Ceph RGW.
 *
 * What a user gets, as after a restart of a single box (docs/mcp-client.md, "Approvals"):
 * - the card stays answerable. Answered after the move, no running turn takes it (`resumed: false`);
 *   the cut turn was ended by the new worker (its call "interrupted", no model step after it, since
 *   the turn was waiting on the user), and the answer starts a turn of its own that tells the model,
 *   whose repeated call then runs without a second card ("allow once" is used by it);
 * - answered while the turn moves (the worker dead, its lease not yet lapsed), the answer waits for
 *   no one: the gateway says `resumed: false` once the lease lapses, and the new worker goes on with
 *   the cut turn (the card is answered, so the turn is not waiting on the user), then runs the
 *   answer's own turn.
 */
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '@sendbox/txcript';
import { useServices } from '../stores/postgres/backend.ts';
import { crashInvariantBreaks } from '../testing/crash-invariants.ts';
import { ledgerRows, setApprovalRules, transcriptRows } from '../testing/cluster-rows.ts';
import { alive, startFailoverCluster, type FailoverCluster } from './failover-harness.ts';

const services = useServices();

describe('a turn cut while it waits on an approval card', () => {
  it('is ended or resumed by another worker process, and its card, answered before or after the move, still works', async () => {
    const cluster = await startFailoverCluster(services(), 'approval-failover');
    try {
      await run(cluster);
    } finally {
      await cluster.close();
    }
  }, 240_000);
});

async function run(cluster: FailoverCluster): Promise<void> {
  const { observer } = cluster;
  const host = observer.host;
  // One worker process first, so both agents' cards wait in it; the other starts before the kill.
  const first = await cluster.startWorker('worker-a');
  const after = await host.createAgent({ name: 'Answered after the move' });
  const during = await host.createAgent({ name: 'Answered while it moves' });
  for (const agent of [after, during]) await setApprovalRules(observer.db, agent.id, { shell: 'ask' });
  await host.sendPrompt({ agentId: after.id, prompt: 'first', clientNonce: 'a1' });
  await host.sendPrompt({ agentId: during.id, prompt: 'first', clientNonce: 'd1' });

  const rowsOf = (agentId: string) => ledgerRows(observer.db, agentId);
  const cardOf = async (agentId: string) =>
    (await rowsOf(agentId)).filter((row) => row.entry.status === 'awaiting-approval').map((row) => row);
  for (const agent of [after, during])
    await cluster.until(
      async () => (await cardOf(agent.id)).length === 1,
      'the approval card',
      60_000,
      agent.id,
    );
  const afterCard = (await cardOf(after.id))[0]!;
  const duringCard = (await cardOf(during.id))[0]!;
  expect(afterCard.id).toMatch(/^approval-worker-a-\d+$/);

  const second = await cluster.startWorker('worker-b');
  first.child.kill('SIGKILL');
  await cluster.until(() => !alive(first), 'worker-a to die', 10_000, after.id);

  // Answered while the turn moves: the call that waited is gone with its worker.
  expect(
    await host.answerToolApproval({ agentId: during.id, entryId: duringCard.id, decision: 'allow' }),
  ).toEqual({ accepted: true, resumed: false });

  // worker-b takes both agents over.
  for (const agent of [after, during])
    await cluster.until(
      async () => (await rowsOf(agent.id)).some((row) => row.id === 't0e') && (await idle(cluster, agent.id)),
      'the cut turn to end on worker-b',
      90_000,
      agent.id,
    );

  // Not answered before the move: the cut turn is ended, its card still open and answerable.
  const ended = await rowsOf(after.id);
  const endEpoch = ended.find((row) => row.id === 't0e')!.epoch!;
  expect(endEpoch).toBeGreaterThan(afterCard.epoch!);
  expect(ended.some((row) => row.id === `${afterCard.id}-answer`)).toBe(false);
  expect(await transcriptText(cluster, after.id)).not.toContain('This turn was cut');
  expect(
    await host.answerToolApproval({ agentId: after.id, entryId: afterCard.id, decision: 'allow' }),
  ).toEqual({ accepted: true, resumed: false });
  await cluster.until(
    async () => (await rowsOf(after.id)).some((row) => row.id === 't1e'),
    'the answer’s own turn to end',
    60_000,
    after.id,
  );
  const answered = await rowsOf(after.id);
  const user = answered.find((row) => row.id === 't1u')!.entry;
  expect(user.hidden).toBe(true);
  expect(user.approval).toEqual({ answers: afterCard.id, decision: 'allow' });
  // The model was told, and its call, made again, ran once without a second card (allowed once).
  expect(answered.filter((row) => row.entry.status === 'awaiting-approval')).toHaveLength(1);
  expect(answered.find((row) => row.id === 't1c0')?.entry.status).toBe('success');
  expect(sends(answered)).toEqual(['done by worker-b']);

  // Answered while it moved: the new worker went on with the cut turn (the card was answered, so
  // the turn was not waiting on the user), its note telling the model what the user decided; the
  // answer is taken by that turn, whose call made again ran without a second card.
  const moved = await rowsOf(during.id);
  const movedText = await transcriptText(cluster, during.id);
  expect(movedText).toContain('This turn was cut');
  expect(movedText).toContain(
    `The user allowed the shell call you asked approval for (${duringCard.id}), but this turn was cut before the call had a result`,
  );
  expect(moved.filter((row) => /^t\d+u$/.test(row.id)).map((row) => row.id)).toEqual(['t0u']);
  expect(moved.filter((row) => row.entry.status === 'awaiting-approval')).toHaveLength(1);
  expect(moved.find((row) => row.id === 't0c0')?.entry.status).toBe('success');
  expect(sends(moved)).toEqual(['done by worker-b']);
  await cluster.until(
    async () => (await inboxState(cluster, during.id, `approval:${duringCard.id}`)) === 'started 0',
    'the answer to be taken by the resumed turn',
    30_000,
    during.id,
  );

  // Both read as a reader expects: every call has its result, every turn its end.
  for (const agent of [after, during]) {
    const records = (await transcriptText(cluster, agent.id))
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as JsonObject);
    const rows = await rowsOf(agent.id);
    expect(
      crashInvariantBreaks(
        rows.map((row) => ({ id: row.id, kind: String(row.entry.kind) })),
        records,
      ),
    ).toEqual([]);
  }
  expect(alive(second)).toBe(true);
}

function sends(rows: Awaited<ReturnType<typeof ledgerRows>>): string[] {
  return rows.flatMap((row) =>
    row.entry.kind === 'send-message' ? [String((row.entry.message as { content?: unknown }).content)] : [],
  );
}

async function transcriptText(cluster: FailoverCluster, agentId: string): Promise<string> {
  return (await transcriptRows(cluster.observer.db, agentId)).map((row) => row.text).join('');
}

async function inboxState(cluster: FailoverCluster, agentId: string, nonce: string): Promise<string> {
  const { db } = cluster.observer;
  const { rows } = await db.pool.query<{ state: string; turn: number | null }>(
    `SELECT state, turn FROM ${db.table('inbox')} WHERE agent_id = $1 AND nonce = $2`,
    [agentId, nonce],
  );
  return rows[0] ? `${rows[0].state} ${rows[0].turn}` : 'none';
}

/** No input of the agent waits, and no worker holds its lease. */
async function idle(cluster: FailoverCluster, agentId: string): Promise<boolean> {
  const { db } = cluster.observer;
  const { rows } = await db.pool.query<{ busy: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM ${db.table('inbox')} WHERE agent_id = $1 AND state = 'pending')
        OR EXISTS (SELECT 1 FROM ${db.table('leases')} WHERE agent_id = $1 AND expires_at > now()) AS busy`,
    [agentId],
  );
  return rows[0]?.busy === false;
}
