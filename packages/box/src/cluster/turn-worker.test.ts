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

  it('runs other agents’ turns on a worker while one agent’s turn is long', async () => {
    // 'hold' waits in a shell call until the test lets it go; any other prompt is answered.
    const script = (): ScriptSource => (request) => {
      const last = request.messages.at(-1);
      if (last?.role === 'tool') return {};
      if (JSON.stringify(last).includes('hold'))
        return { toolCalls: [{ name: 'shell', input: { command: 'until [ -f go ]; do sleep 0.05; done' } }] };
      return sendText('answered');
    };
    const [gateway, worker] = (await cluster(2, script)).workers;
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
