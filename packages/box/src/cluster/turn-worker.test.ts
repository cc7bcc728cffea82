/**
 * Cluster workers in one process, over a real PostgreSQL and Ceph RGW: an input accepted by one is
 * run by another that takes its job, behind the agent's lease, and both see the same agent; `sendbox
 * export` writes what they wrote in Grok Bot's layout, read back by txcript.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { readFile, writeFile } from 'node:fs/promises';
import { grokBot, ledgerToCommon, readLedgerFile } from '@sendbox/txcript';
import { describe, expect, it } from 'vitest';
import { sendboxProgram } from '../cli/program.ts';
import { agentPaths } from '../stores/files/layout.ts';
import { scriptedProvider, type ScriptSource } from '../providers/scripted.ts';
import { useServices } from '../stores/postgres/backend.ts';
import { sendText } from '../testing/host-fixture.ts';
import { until } from '../testing/processes.ts';
import { Leases } from '../stores/postgres/leases.ts';
import { TURN_QUEUE } from '../stores/postgres/turn-queue.ts';
import { BOX_STOPPED_NOTICE } from '../agent/turn-texts.ts';
import { ledgerRows, transcriptRows } from '../testing/cluster-rows.ts';
import { crashInvariantBreaks } from '../testing/crash-invariants.ts';
import { DEFAULT_TURN_CONCURRENCY, turnConcurrency } from './turn-worker.ts';
import { useClusterKit } from '../testing/cluster-kit.ts';
import type { ClusterWorker } from './worker.ts';

const services = useServices();
const masterKey = randomBytes(32);

describe('cluster turn worker', () => {
  const kit = useClusterKit(services);

  /** Workers over one schema; the first takes no turns (a gateway), so every turn runs elsewhere. */
  async function cluster(count: number, script: () => ScriptSource, leaseTtlMs?: number) {
    const schema = kit.schemaName();
    const workers: ClusterWorker[] = [];
    for (let i = 0; i < count; i++) {
      const { worker } = await kit.startWorker({
        dataDirName: `worker-${i}`,
        schema,
        masterKey,
        env: {},
        provider: scriptedProvider(script()),
        workerName: `worker-${i}`,
        takeTurns: i > 0,
        ...(leaseTtlMs ? { leaseTtlMs } : {}),
      });
      workers.push(worker);
    }
    return { workers, schema };
  }

  async function ledgerIds(worker: ClusterWorker, agentId: string): Promise<string[]> {
    const { rows } = await worker.db.pool.query<{ id: string }>(
      `SELECT id FROM ${worker.db.table('ledger')} WHERE agent_id = $1 ORDER BY seq`,
      [agentId],
    );
    return rows.map((row) => row.id);
  }

  /** 'hold' waits in a shell call until the test writes `go` in the sandbox; any other prompt is answered. */
  const holding = (): ScriptSource => (request) => {
    const last = request.messages.at(-1);
    if (last?.role === 'tool') return {};
    if (JSON.stringify(last).includes('hold'))
      return { toolCalls: [{ name: 'shell', input: { command: 'until [ -f go ]; do sleep 0.05; done' } }] };
    return sendText('answered');
  };

  it('runs other agents’ turns on a worker while one agent’s turn is long', async () => {
    const [gateway, worker] = (await cluster(2, holding)).workers;
    const slow = await gateway!.host.createAgent({ name: 'Slow agent' });
    const quick = await gateway!.host.createAgent({ name: 'Quick agent' });
    await gateway!.host.sendPrompt({ agentId: slow.id, prompt: 'hold', clientNonce: 's1' });
    await until(async () => (await ledgerIds(gateway!, slow.id)).includes('t0u'), 'the long turn to start');
    await gateway!.host.sendPrompt({ agentId: quick.id, prompt: 'quick', clientNonce: 'q1' });
    // The only turn worker answers the other agent while the long turn still runs.
    await until(
      async () => (await ledgerIds(gateway!, quick.id)).includes('t0e'),
      'the other agent’s turn to end',
    );
    expect(await ledgerIds(gateway!, slow.id)).not.toContain('t0e');
    await writeFile(path.join(agentPaths(worker!.host.dataDir, slow.id).sandbox, 'go'), '');
    await until(async () => (await ledgerIds(gateway!, slow.id)).includes('t0e'), 'the long turn to end');
  });

  it('stops a turn on a Stop stored while its NOTIFY was missed, and not a turn that started after it', async () => {
    // A short lease: renewed every 500 ms, when a stored Stop is read.
    const [gateway, worker] = (await cluster(2, holding, 1_500)).workers;
    const agent = await gateway!.host.createAgent({ name: 'Stopped agent' });
    await gateway!.host.sendPrompt({ agentId: agent.id, prompt: 'first', clientNonce: 'n0' });
    await until(async () => (await ledgerIds(gateway!, agent.id)).includes('t0e'), 'the first turn to end');
    // Asked while no turn ran: the turn that starts later is not stopped by it.
    await gateway!.leases.askStop(agent.id);
    await gateway!.host.sendPrompt({ agentId: agent.id, prompt: 'hold', clientNonce: 'n1' });
    await until(async () => (await ledgerIds(gateway!, agent.id)).includes('t1u'), 'the long turn to start');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await ledgerIds(gateway!, agent.id)).not.toContain('t1e');
    // Only stored (the worker hears no NOTIFY of it): the turn stops at a renewal of its lease.
    await gateway!.leases.askStop(agent.id);
    await until(async () => (await ledgerIds(gateway!, agent.id)).includes('t1e'), 'the stopped turn to end');
    const entries = await gateway!.host.openAgent(agent.id);
    expect(entries.some((entry) => entry.kind === 'notice' && entry.reason === 'stopped')).toBe(true);
    await writeFile(path.join(agentPaths(worker!.host.dataDir, agent.id).sandbox, 'go'), '');
    // The gateway's Stop stores it beside the NOTIFY: the agent's last ledger seq.
    await gateway!.host.cancelTurn(agent.id);
    const stored = async () =>
      (
        await gateway!.db.pool.query<{ stop_seq: string; last: string }>(
          `SELECT stop_seq, (SELECT max(seq) FROM ${gateway!.db.table('ledger')} WHERE agent_id = $1) AS last
           FROM ${gateway!.db.table('leases')} WHERE agent_id = $1`,
          [agent.id],
        )
      ).rows[0]!;
    await until(async () => (await stored()).stop_seq === (await stored()).last, 'the Stop to be stored');
  });

  it('refuses a turn concurrency that is not a whole number from 1 to 256, saying what to give', () => {
    expect(turnConcurrency({})).toBe(DEFAULT_TURN_CONCURRENCY);
    expect(turnConcurrency({ SENDBOX_TURN_CONCURRENCY: '3' })).toBe(3);
    for (const bad of ['0', '-1', '2.5', 'many', '257'])
      expect(() => turnConcurrency({ SENDBOX_TURN_CONCURRENCY: bad })).toThrow(
        `SENDBOX_TURN_CONCURRENCY=${bad}: give a whole number of turns at once, 1 to 256`,
      );
  });

  it('runs a prompt accepted by one worker as a turn on another, behind a lease, seen by both', async () => {
    const [a, b] = (await cluster(2, () => [sendText('first answer'), sendText('second answer')])).workers;
    const agent = await a!.host.createAgent({ name: 'Cluster agent' });
    await a!.host.sendPrompt({ agentId: agent.id, prompt: 'hello', clientNonce: 'n1' });
    // Accepted again through the other worker's gateway: the same input, not a second one.
    expect(await b!.host.sendPrompt({ agentId: agent.id, prompt: 'hello', clientNonce: 'n1' })).toEqual({
      accepted: true,
      duplicate: true,
    });
    await until(async () => (await ledgerIds(a!, agent.id)).includes('t0e'), 'turn 0 ends');
    await b!.host.sendPrompt({ agentId: agent.id, prompt: 'again', clientNonce: 'n2' });
    await until(async () => (await ledgerIds(a!, agent.id)).includes('t1e'), 'turn 1 ends');

    const ids = await ledgerIds(a!, agent.id);
    expect(ids.filter((id) => /^t\du$/.test(id))).toEqual(['t0u', 't1u']);
    expect(ids.filter((id) => id.endsWith('e'))).toEqual(['t0e', 't1e']);
    // Every row of a turn was written under a lease epoch; turn 1 under turn 0's job's, or a later
    // job's (a prompt accepted before a job ends is run by it: host/turn-sessions.ts).
    const { rows } = await a!.db.pool.query<{ id: string; epoch: string | null }>(
      `SELECT id, epoch FROM ${a!.db.table('ledger')} WHERE agent_id = $1 ORDER BY seq`,
      [agent.id],
    );
    const epochOf = (id: string) => rows.find((row) => row.id === id)?.epoch;
    expect(epochOf('t0u')).not.toBeNull();
    expect(Number(epochOf('t1u'))).toBeGreaterThanOrEqual(Number(epochOf('t0u')));
    expect(epochOf('t1e')).toBe(epochOf('t1u'));
    expect(epochOf('t0e')).toBe(epochOf('t0u'));
    // Released after the turns (not left to lapse).
    await until(async () => {
      const holder = await a!.leases.holder(agent.id);
      return holder !== undefined && holder.expiresAt <= Date.now() + 1000;
    }, 'the lease to be released');
    // (The last job may be the second input's, which found it run and ended at once under its own.)
    expect((await a!.leases.holder(agent.id))?.epoch).toBeGreaterThanOrEqual(Number(epochOf('t1u')));

    // Both workers answer for the agent from the database, whichever ran its turns.
    for (const worker of [a!, b!]) {
      const entries = await worker.host.openAgent(agent.id);
      const texts = entries.flatMap((entry) =>
        entry.kind === 'send-message' ? [JSON.stringify(entry.message)] : [],
      );
      expect(texts.join(' ')).toContain('first answer');
      expect(texts.join(' ')).toContain('second answer');
    }
    const transcript = await a!.db.pool.query<{ text: string }>(
      `SELECT text FROM ${a!.db.table('transcript')} WHERE agent_id = $1 ORDER BY seq`,
      [agent.id],
    );
    const jsonl = transcript.rows.map((row) => row.text).join('');
    expect(jsonl).toContain('hello');
    expect(jsonl.endsWith('\n')).toBe(true);
  });

  it('gives a turn job out of tries one more try: the agent answers again, and its later prompts run', async () => {
    const { workers, schema } = await cluster(
      2,
      () => [sendText('first answer'), sendText('second answer')],
      300,
    );
    const [gateway] = workers as [ClusterWorker, ClusterWorker];
    const agent = await gateway.host.createAgent({ name: 'Stuck agent' });
    const jobStates = async () =>
      (
        await gateway.db.pool.query<{ state: string }>(
          `SELECT state FROM "${schema}_jobs".job WHERE name = $1 AND singleton_key = $2 ORDER BY created_on`,
          [TURN_QUEUE, agent.id],
        )
      ).rows.map((row) => row.state);
    // A worker that lives on holds the agent's lease: every try of the turn job waits for it and fails.
    const stuck = new Leases(gateway.db, 'stuck-worker', 300);
    const held = (await stuck.claim(agent.id))!;
    const renewal = setInterval(() => void stuck.renew(held), 100);
    kit.defer(() => clearInterval(renewal));
    await gateway.host.sendPrompt({ agentId: agent.id, prompt: 'hello', clientNonce: 'n1' });
    await until(
      async () => (await jobStates()).includes('failed'),
      'the turn job to run out of tries',
      30_000,
    );
    // Behind the failed job (pg-boss's key_strict_fifo holds the agent's key for it).
    await gateway.host.sendPrompt({ agentId: agent.id, prompt: 'again', clientNonce: 'n2' });
    clearInterval(renewal);
    await stuck.release(held);

    await until(
      async () => (await ledgerIds(gateway, agent.id)).includes('t1e'),
      'both turns to end',
      60_000,
    );
    const ids = await ledgerIds(gateway, agent.id);
    expect(ids.filter((id) => /^t\du$|^t\de$/.test(id))).toEqual(['t0u', 't0e', 't1u', 't1e']);
    // The failed job is gone, so the agent's key holds nothing: its next prompt runs at once.
    await until(async () => !(await jobStates()).includes('failed'), 'the failed job to go', 30_000);
    await gateway.host.sendPrompt({ agentId: agent.id, prompt: 'third', clientNonce: 'n3' });
    await until(async () => (await ledgerIds(gateway, agent.id)).includes('t2e'), 'turn 2 to end', 30_000);
  }, 120_000);

  it('closes a cut turn whose job ran out of tries in the dead letter’s closing try: its notice, its end, its calls’ results, and the next prompts run', async () => {
    // 'hold' is a shell call that runs until it is killed; a tool result is answered; any other prompt too.
    const script = (): ScriptSource => (request) => {
      const last = request.messages.at(-1);
      if (last?.role === 'tool')
        return last.content.some((part) => part.type === 'tool-result' && part.toolName === 'send_message')
          ? {}
          : sendText('answered');
      if (JSON.stringify(last).includes('hold'))
        return {
          toolCalls: [{ name: 'shell', input: { command: 'until [ -f never ]; do sleep 0.05; done' } }],
        };
      return sendText('answered');
    };
    const { workers, schema } = await cluster(2, script, 300);
    const [gateway] = workers as [ClusterWorker, ClusterWorker];
    const agent = await gateway.host.createAgent({ name: 'Cut agent' });
    const rows = () => ledgerRows(gateway.db, agent.id);
    const jsonl = async () => (await transcriptRows(gateway.db, agent.id)).map((row) => row.text).join('');
    const jobStates = async () =>
      (
        await gateway.db.pool.query<{ state: string }>(
          `SELECT state FROM "${schema}_jobs".job WHERE name = $1 AND singleton_key = $2 ORDER BY created_on`,
          [TURN_QUEUE, agent.id],
        )
      ).rows.map((row) => row.state);
    await gateway.host.sendPrompt({ agentId: agent.id, prompt: 'hold', clientNonce: 'n1' });
    await until(async () => (await jsonl()).includes('until [ -f never ]'), 'the shell call to start');

    // Another holder takes the lease over while the call runs (as one does from a worker it thinks
    // dead) and keeps it: the turn is stopped on its worker, whose writes are refused from then on,
    // so the turn is left cut; every try of its job then finds the lease held, and the job fails.
    const stuck = new Leases(gateway.db, 'stuck-worker', 300);
    const { rows: taken } = await gateway.db.pool.query<{ epoch: string }>(
      `UPDATE ${gateway.db.table('leases')} SET owner = 'stuck-worker', epoch = epoch + 1, expires_at = now() + interval '300 milliseconds'
       WHERE agent_id = $1 RETURNING epoch`,
      [agent.id],
    );
    const held = { agentId: agent.id, owner: 'stuck-worker', epoch: Number(taken[0]!.epoch), expiresAt: 0 };
    const renewal = setInterval(() => void stuck.renew(held), 100);
    kit.defer(() => clearInterval(renewal));
    await until(
      async () => (await jobStates()).includes('failed'),
      'the turn job to run out of tries',
      60_000,
    );
    const cut = await rows();
    expect(cut.map((row) => row.id)).not.toContain('t0e');
    await gateway.host.sendPrompt({ agentId: agent.id, prompt: 'again', clientNonce: 'n2' });
    clearInterval(renewal);
    await stuck.release(held);

    // The dead letter's closing try: the cut turn is closed, not resumed, then the waiting prompt runs.
    await until(async () => (await rows()).some((row) => row.id === 't1e'), 'the next turn to end', 90_000);
    const closed = await rows();
    const ids = closed.map((row) => row.id);
    const notice = closed.find((row) => row.entry.kind === 'notice' && /^t0n\d+$/.test(row.id));
    expect(notice?.entry.text).toBe(BOX_STOPPED_NOTICE);
    expect(ids.indexOf('t0e')).toBeGreaterThan(ids.indexOf(notice!.id));
    expect(ids.indexOf('t1u')).toBeGreaterThan(ids.indexOf('t0e'));
    // Written under the closing try's lease, after the stuck holder's.
    expect(notice!.epoch).toBeGreaterThan(held.epoch);
    expect(closed.find((row) => row.id === 't0e')!.epoch).toBe(notice!.epoch);
    // The model took no step after the cut: no note telling it the turn goes on.
    const text = await jsonl();
    expect(text).not.toContain('This turn was cut');
    // As a reader expects: the codec reads every line, the open call has its result, every turn its end.
    const parsed = grokBot.text.parse(text, 'transcript rows');
    expect(parsed.records.every((line) => line.kind === 'record')).toBe(true);
    const records = parsed.records.flatMap((line) => (line.kind === 'record' ? [line.json] : []));
    const entries = closed.map((row) => ({ id: row.id, kind: String(row.entry.kind) }));
    expect(crashInvariantBreaks(entries, records)).toEqual([]);
    expect(text).toContain('interrupted');
    const common = ledgerToCommon(
      closed.map((row) => row.entry as never),
      { sessionId: agent.id, source: 'rows' },
    );
    expect(common.warnings).toEqual([]);
    // Turn 0 has no step of the model: the reader sees the two prompts, then turn 1's answer.
    expect(common.transcript.messages.map((message) => message.role)).toEqual([
      'user',
      'user',
      'assistant',
      'user',
    ]);

    // The failed job is gone, so the agent's key holds nothing: its next prompt runs.
    await until(async () => !(await jobStates()).includes('failed'), 'the failed job to go', 30_000);
    await gateway.host.sendPrompt({ agentId: agent.id, prompt: 'third', clientNonce: 'n3' });
    await until(async () => (await rows()).some((row) => row.id === 't2e'), 'turn 2 to end', 30_000);
  }, 180_000);

  it('exports the agents in Grok Bot’s layout, the same rows and lines, read back by txcript', async () => {
    const { workers, schema } = await cluster(2, () => [sendText('exported answer')]);
    const [gateway] = workers as [ClusterWorker, ClusterWorker];
    const agent = await gateway.host.createAgent({ name: 'Exported agent' });
    await gateway.host.sendPrompt({ agentId: agent.id, prompt: 'export me', clientNonce: 'e1' });
    await until(async () => (await ledgerIds(gateway, agent.id)).includes('t0e'), 'the turn to end');

    const out = path.join(await kit.tempDir('export'), 'new', 'dir');
    const said: string[] = [];
    const program = sendboxProgram(() => Promise.reject(new Error('no host for export')), {
      out: (line) => said.push(line),
      err: () => undefined,
    });
    const { databaseUrl } = services();
    await program.parseAsync(['export', '--database-url', databaseUrl, '--schema', schema, '--out', out], {
      from: 'user',
    });
    expect(said.join('\n')).toMatch(/exported 1 agent/);

    const paths = agentPaths(out, agent.id);
    const rows = await gateway.db.pool.query<{ seq: string; id: string; entry: string }>(
      `SELECT seq, id, entry FROM ${gateway.db.table('ledger')} WHERE agent_id = $1 ORDER BY seq`,
      [agent.id],
    );
    const ledger = readLedgerFile(paths.storeDb);
    expect(ledger.warnings).toEqual([]);
    expect(ledger.rows.map((row) => [row.seq, row.id, row.entry])).toEqual(
      rows.rows.map((row) => [Number(row.seq), row.id, JSON.parse(row.entry) as unknown]),
    );
    const transcript = await gateway.db.pool.query<{ text: string }>(
      `SELECT text FROM ${gateway.db.table('transcript')} WHERE agent_id = $1 ORDER BY seq`,
      [agent.id],
    );
    const jsonl = await readFile(paths.jsonl, 'utf8');
    expect(jsonl).toBe(transcript.rows.map((row) => row.text).join(''));
    const parsed = grokBot.text.parse(jsonl, paths.jsonl);
    expect(parsed.records.every((line) => line.kind === 'record')).toBe(true);
    const profile = JSON.parse(await readFile(paths.profile, 'utf8')) as { name: string };
    expect(profile.name).toBe('Exported agent');
    // The ledger as txcript's readers see it: the user's prompt and the agent's answer.
    const common = JSON.stringify(
      ledgerToCommon(
        ledger.rows.map((row) => row.entry),
        { sessionId: agent.id, source: paths.storeDb },
      ),
    );
    expect(common).toContain('export me');
    expect(common).toContain('exported answer');
  });
});
