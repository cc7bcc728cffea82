/**
 * Approval cards across workers (issue 25), on the real PostgreSQL and Ceph RGW with in-process
 * workers: a card is answered through a gateway (a worker that runs no turn) while the call waits
 * on it in the turn worker. The call takes the answer there at once, the gateway says `resumed:
 * true`, and the grants ("always allow", "allow once") hold across workers.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { scriptedProvider, type ScriptedStep } from '../providers/scripted.ts';
import type { ModelStepRequest } from '../providers/types.ts';
import { useServices } from '../stores/postgres/backend.ts';
import type { Database } from '../stores/postgres/database.ts';
import type { SequencedEntry } from '../stores/ledger.ts';
import { useClusterKit } from '../testing/cluster-kit.ts';
import { setApprovalRules } from '../testing/cluster-rows.ts';
import { until } from '../testing/processes.ts';
import { ClusterApprovalWaits } from './approval-waits.ts';
import type { ClusterWorker } from './worker.ts';

const services = useServices();
const masterKey = randomBytes(32);

type Entry = SequencedEntry & Record<string, unknown>;

/**
 * Each worker's model: a prompt `run <label>` is one shell call (`echo <label>`), its result one
 * send "<worker> ran: <the result>", and that an empty step. Call ids carry the worker's name, as a
 * real model's are unique.
 */
function script(worker: string) {
  let calls = 0;
  return (request: ModelStepRequest): ScriptedStep => {
    const last = request.messages.at(-1);
    if (last?.role === 'tool') {
      const result = last.content.find((part) => part.type === 'tool-result');
      if (result?.toolName === 'send_message') return {};
      const said = result ? JSON.stringify(result.output) : '';
      // The shell's stdout, or the error (a declined call).
      const content = `${worker} ran: ${/stdout\\":\\"(\w+)/.exec(said)?.[1] ?? said}`;
      return {
        toolCalls: [{ id: `${worker}-${++calls}`, name: 'send_message', input: { type: 'text', content } }],
      };
    }
    const text = JSON.stringify(last?.content ?? '');
    const label = /run (\w+)/.exec(text)?.[1] ?? 'answer';
    return {
      toolCalls: [{ id: `${worker}-${++calls}`, name: 'shell', input: { command: `echo ${label}` } }],
    };
  };
}

describe('approval cards across workers', () => {
  const kit = useClusterKit(services);

  /** A gateway that runs no turn, then `turnWorkers` workers that do (named worker-1, worker-2, …). */
  async function cluster(turnWorkers: number) {
    const schema = kit.schemaName();
    const start = (name: string, takeTurns: boolean) =>
      kit.startWorker({
        dataDirName: name,
        schema,
        masterKey,
        env: {},
        provider: scriptedProvider(script(name)),
        workerName: name,
        takeTurns,
      });
    const gateway = (await start('gateway', false)).worker;
    const workers = [];
    for (let i = 1; i <= turnWorkers; i++) workers.push(await start(`worker-${i}`, true));
    return {
      gateway,
      workers,
      start: (name: string) => start(name, true),
      startGateway: async (name: string) => (await start(name, false)).worker,
    };
  }

  /** An agent made through `gateway` whose profile row says shell calls ask first. */
  async function askingAgent(gateway: ClusterWorker, name: string): Promise<string> {
    const agent = await gateway.host.createAgent({ name });
    await setApprovalRules(gateway.db, agent.id, { shell: 'ask' });
    return agent.id;
  }

  const entries = async (gateway: ClusterWorker, agentId: string) =>
    (await gateway.host.entriesAfter(agentId, 0)) as Entry[];
  const cards = async (gateway: ClusterWorker, agentId: string) =>
    (await entries(gateway, agentId)).filter((e) => e.status === 'awaiting-approval').map((e) => e.id);
  const sends = async (gateway: ClusterWorker, agentId: string) =>
    (await entries(gateway, agentId)).flatMap((e) =>
      e.kind === 'send-message' ? [String((e.message as { content?: unknown }).content)] : [],
    );
  const ended = async (gateway: ClusterWorker, agentId: string, turn: number) =>
    (await entries(gateway, agentId)).some((e) => e.id === `t${turn}e`);

  /** Waits for card number `n` of the agent (1-based), and the turn `awaiting-user` on the gateway. */
  async function nthCard(gateway: ClusterWorker, agentId: string, n: number): Promise<string> {
    await until(async () => (await cards(gateway, agentId)).length >= n, `approval card ${n}`, 30_000);
    return (await cards(gateway, agentId))[n - 1]!;
  }

  it('a card answered through another worker’s gateway reaches the call waiting on the turn’s worker at once (resumed: true)', async () => {
    const { gateway, workers } = await cluster(1);
    const agentId = await askingAgent(gateway, 'Asks first');
    await gateway.host.sendPrompt({ agentId, prompt: 'run one', clientNonce: 'n1' });
    // The card is committed once the call waits on it in the turn worker.
    const card = await nthCard(gateway, agentId, 1);
    // The gateway's roster says so too (the turn's state and its card, relayed).
    const row = async () => (await gateway.host.listAgents()).find((agent) => agent.id === agentId)!;
    await until(async () => (await row()).awaitingApproval, 'the roster to show the card');
    expect(await gateway.host.answerToolApproval({ agentId, entryId: card, decision: 'allow' })).toEqual({
      accepted: true,
      resumed: true,
    });
    await until(() => ended(gateway, agentId, 0), 'turn 0 to end with the call run', 30_000);
    expect(await sends(gateway, agentId)).toEqual(['worker-1 ran: one']);
    await until(async () => !(await row()).awaitingApproval, 'the roster to drop the card');

    // The ledger reads as in one box: the card, its answer, then the call's result in the same turn,
    // and the answer's inbox input taken by turn 0 (no turn of its own tells the model again).
    const ids = (await entries(gateway, agentId)).map((e) => e.id);
    expect(ids.indexOf(`${card}-answer`)).toBeGreaterThan(ids.indexOf(card));
    expect(ids.indexOf('t0c0')).toBeGreaterThan(ids.indexOf(`${card}-answer`));
    const result = (await entries(gateway, agentId)).find((e) => e.id === 't0c0')!;
    expect(result.status).toBe('success');
    await until(
      async () => (await inboxState(gateway.db, agentId, `approval:${card}`)) === 'started 0',
      'the answer to be taken by turn 0',
    );
    expect(ids.filter((id) => /^t\d+u$/.test(id))).toEqual(['t0u']);
    // Answered once: a second answer through any gateway is refused.
    await expect(
      workers[0]!.worker.host.answerToolApproval({ agentId, entryId: card, decision: 'deny' }),
    ).rejects.toMatchObject({ status: 409 });
  }, 90_000);

  it('a prompt sent through another gateway while the call waits on a card ends that wait, as in one box: the prompt’s turn runs, the card stays answerable', async () => {
    const { gateway } = await cluster(1);
    const agentId = await askingAgent(gateway, 'Yields');
    await gateway.host.sendPrompt({ agentId, prompt: 'run one', clientNonce: 'n1' });
    const first = await nthCard(gateway, agentId, 1);
    // The gateway heard that the agent awaits the user (the turn's state, relayed).
    await until(
      async () =>
        (await gateway.host.listAgents()).find((row) => row.id === agentId)?.state === 'awaiting-user',
      'the relayed awaiting-user state',
    );
    await gateway.host.sendPrompt({ agentId, prompt: 'run two', clientNonce: 'n2' });
    await until(() => ended(gateway, agentId, 0), 'the waiting turn to end', 30_000);
    const call = (await entries(gateway, agentId)).find((e) => e.id === 't0c0')!;
    expect(call.status).toBe('error');
    expect(JSON.stringify(call)).toContain('the user sent a new message before answering the approval card');
    // The prompt's turn runs (and asks for its own call); the first card is still open.
    const second = await nthCard(gateway, agentId, 2);
    expect((await entries(gateway, agentId)).map((e) => e.id)).not.toContain(`${first}-answer`);
    expect(await gateway.host.answerToolApproval({ agentId, entryId: second, decision: 'allow' })).toEqual({
      accepted: true,
      resumed: true,
    });
    await until(() => ended(gateway, agentId, 1), 'the prompt’s turn to end', 30_000);
    expect(await sends(gateway, agentId)).toEqual(['worker-1 ran: two']);
  }, 90_000);

  it('a gateway started after the card opened shows it, and a prompt’s yield stored while its note is missed still ends the wait', async () => {
    const { gateway, startGateway } = await cluster(1);
    const agentId = await askingAgent(gateway, 'Late gateway');
    await gateway.host.sendPrompt({ agentId, prompt: 'run one', clientNonce: 'n1' });
    const card = await nthCard(gateway, agentId, 1);
    // Up after the card's entry and the turn's state were told: it reads the waits at start.
    const late = await startGateway('late');
    const row = (await late.host.listAgents()).find((agent) => agent.id === agentId)!;
    expect([row.state, row.awaitingApproval]).toEqual(['awaiting-user', true]);
    // A prompt's yield stored, its note lost (no note is sent here): the waiting worker reads it at
    // its lease's next renewal, and the call ends as on the note; the card stays open.
    new ClusterApprovalWaits(late.db, 'late', () => undefined).yieldElsewhere(agentId);
    await until(() => ended(gateway, agentId, 0), 'the waiting turn to end on the stored yield', 30_000);
    const call = (await entries(gateway, agentId)).find((e) => e.id === 't0c0')!;
    expect(JSON.stringify(call)).toContain('the user sent a new message before answering the approval card');
    expect((await entries(gateway, agentId)).map((e) => e.id)).not.toContain(`${card}-answer`);
    // The wait's row is gone: a gateway started now would not show a card waited on.
    await until(
      async () => (await new ClusterApprovalWaits(late.db, 'late', () => undefined).openWaits()).length === 0,
      'the wait to be ended in the database',
    );
  }, 90_000);

  it('Stop through another worker’s gateway stops the turn waiting on a card there: the card reads "stopped" and refuses a late answer', async () => {
    const { gateway } = await cluster(1);
    const agentId = await askingAgent(gateway, 'Stopped');
    await gateway.host.sendPrompt({ agentId, prompt: 'run one', clientNonce: 'n1' });
    const card = await nthCard(gateway, agentId, 1);
    await until(
      async () =>
        (await gateway.host.listAgents()).find((row) => row.id === agentId)?.state === 'awaiting-user',
      'the relayed awaiting-user state',
    );
    expect(await gateway.host.cancelTurn(agentId)).toEqual({ cancelled: true });
    await until(() => ended(gateway, agentId, 0), 'the stopped turn to end', 30_000);
    const answer = (await entries(gateway, agentId)).find((e) => e.id === `${card}-answer`);
    expect(answer?.status).toBe('stopped');
    await expect(
      gateway.host.answerToolApproval({ agentId, entryId: card, decision: 'allow' }),
    ).rejects.toMatchObject({ status: 409 });
    expect(await sends(gateway, agentId)).toEqual([]);
    // Nothing runs now: Stop says so, once the turn's end is relayed.
    await until(
      async () => !(await gateway.host.cancelTurn(agentId)).cancelled,
      'Stop to find nothing running',
    );
  }, 90_000);

  it('"always allow" answered through one gateway lets the next such call run without a card on another worker; "allow once" is used up once', async () => {
    const { gateway, workers, start } = await cluster(2);
    const always = await askingAgent(gateway, 'Always');
    const once = await askingAgent(gateway, 'Once');

    await gateway.host.sendPrompt({ agentId: always, prompt: 'run first', clientNonce: 'a1' });
    await gateway.host.sendPrompt({ agentId: once, prompt: 'run first', clientNonce: 'o1' });
    const alwaysCard = await nthCard(gateway, always, 1);
    const onceCard = await nthCard(gateway, once, 1);
    expect(
      await gateway.host.answerToolApproval({
        agentId: always,
        entryId: alwaysCard,
        decision: 'allow-always',
      }),
    ).toEqual({ accepted: true, resumed: true });
    expect(
      await gateway.host.answerToolApproval({ agentId: once, entryId: onceCard, decision: 'allow' }),
    ).toEqual({ accepted: true, resumed: true });
    await until(
      async () => (await ended(gateway, always, 0)) && (await ended(gateway, once, 0)),
      'both turns',
    );

    // The workers that ran those turns stop: each agent's next turn runs on another worker.
    const ranBy = async (agentId: string) => (await sends(gateway, agentId))[0]!.split(' ')[0];
    const first = new Set([await ranBy(always), await ranBy(once)]);
    for (const running of workers) if (first.has(running.worker.leases.owner)) await running.close();
    const next = workers.find(({ worker }) => !first.has(worker.leases.owner)) ?? (await start('worker-3'));
    await gateway.host.sendPrompt({ agentId: always, prompt: 'run second', clientNonce: 'a2' });
    await until(() => ended(gateway, always, 1), 'the always-allowed agent’s next turn', 30_000);
    expect(await cards(gateway, always)).toEqual([alwaysCard]);
    expect((await sends(gateway, always))[1]).toBe(`${next.worker.leases.owner} ran: second`);

    // Allowed once: used by the call that waited, so the next such call asks again (and is denied).
    await gateway.host.sendPrompt({ agentId: once, prompt: 'run second', clientNonce: 'o2' });
    const second = await nthCard(gateway, once, 2);
    expect(
      await gateway.host.answerToolApproval({ agentId: once, entryId: second, decision: 'deny' }),
    ).toEqual({ accepted: true, resumed: true });
    await until(() => ended(gateway, once, 1), 'the allowed-once agent’s next turn', 30_000);
    const denied = (await entries(gateway, once)).find((e) => e.id === 't1c0')!;
    expect(denied.status).toBe('error');
    expect(JSON.stringify(denied)).toContain('declined');
  }, 120_000);
});

async function inboxState(db: Database, agentId: string, nonce: string): Promise<string | undefined> {
  const { rows } = await db.pool.query<{ state: string; turn: number | null }>(
    `SELECT state, turn FROM ${db.table('inbox')} WHERE agent_id = $1 AND nonce = $2`,
    [agentId, nonce],
  );
  return rows[0] ? `${rows[0].state} ${rows[0].turn}` : undefined;
}
