/**
 * Routines in a cluster (issue 25): they are the cluster's rows, not a worker's file. A routine
 * made through one worker's gateway is listed through another's, fires once per instant though
 * every worker arms it, and goes on firing after the worker it was made on is SIGKILLed. Its runs
 * are recorded whichever worker ran their turns.
 */
import { describe, expect, it } from 'vitest';
import { useServices } from '../stores/postgres/backend.ts';
import type { WorkerProcess } from '../testing/cluster-children.ts';
import { until } from '../testing/processes.ts';
import { useClusterKit } from '../testing/cluster-kit.ts';

const services = useServices();

const callOn = async (worker: WorkerProcess, method: string, body: unknown): Promise<unknown> => {
  const response = await fetch(new URL(`api/${method}`, worker.url), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${worker.token}` },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} on ${worker.name}: ${response.status} ${text}`);
  return JSON.parse(text) as unknown;
};

describe('routines across workers', () => {
  const kit = useClusterKit(services);

  it('lists a routine made through one gateway on another, fires it once per instant, and goes on after its maker dies', async () => {
    const cluster = await kit.cluster();
    const { worker: front } = await cluster.acceptingGateway({ name: 'front' });
    const start = (name: string) =>
      cluster.workerProcess(name, { gateway: true, env: { SENDBOX_ROUTINE_MIN_INTERVAL_S: '1' } });
    const maker = await start('maker');
    const other = await start('other');

    const agent = await front.host.createAgent({ name: 'Ticker' });
    const made = (await callOn(maker, 'updateRoutine', {
      agentId: agent.id,
      action: 'create',
      name: 'Tick',
      schedule: '@every 2s',
      prompt: 'tick',
    })) as { routine: { id: string } };
    const routineId = made.routine.id;

    // Listed through the other worker's gateway and the front's, with its next run armed there.
    const listed = (await callOn(other, 'listRoutines', { agentId: agent.id })) as {
      routines: Array<{ id: string; nextRunAt: number | null }>;
    };
    expect(listed.routines.map((r) => r.id)).toEqual([routineId]);
    expect((await front.host.listRoutines(agent.id)).map((r) => r.id)).toEqual([routineId]);
    // The front runs no turn of it: only the maker's word (the relayed change) arms it there.
    await until(
      async () => (await front.host.listRoutines(agent.id))[0]?.nextRunAt != null,
      'the front to arm the routine made elsewhere',
      10_000,
    );

    const runs = async () =>
      (await front.host.entriesAfter(agent.id, 0)).flatMap((e) => {
        const mark = e.routine as { id: string; instant: number } | undefined;
        return e.kind === 'message' && mark?.id === routineId ? [mark.instant] : [];
      });
    const output = () => `maker said:\n${maker.output()}\nother said:\n${other.output()}`;
    await until(async () => (await runs()).length >= 2, 'two runs of the routine', 60_000).catch(
      (error: unknown) => {
        throw new Error(`${(error as Error).message}; ${output()}`);
      },
    );

    // The worker it was made on dies: the routine goes on, fired by the others.
    maker.child.kill('SIGKILL');
    const killedAt = Date.now();
    await until(
      async () => (await runs()).filter((instant) => instant > killedAt).length >= 2,
      'two runs after the maker died',
      90_000,
    ).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}; ${output()}`);
    });

    // Once per instant: three workers arm it, the inbox keeps each instant's fire once.
    const instants = await runs();
    expect(new Set(instants).size).toBe(instants.length);
    for (const [i, instant] of instants.entries()) {
      if (i > 0) expect(instant).toBeGreaterThan(instants[i - 1]!);
      expect((instant - instants[0]!) % 2000).toBe(0);
    }
    // The run history, written by whichever worker ran the turn, is the same through every gateway.
    await until(
      async () => {
        const [view] = await front.host.listRoutines(agent.id);
        return (view?.runs ?? []).filter((run) => run.status === 'ok').length >= 3;
      },
      'three runs recorded as ended',
      30_000,
    );
    const again = (await callOn(other, 'listRoutines', { agentId: agent.id })) as {
      routines: Array<{ runs: Array<{ instant: number; entryId: string | null }> }>;
    };
    expect(again.routines[0]!.runs.length).toBeGreaterThanOrEqual(3);
  }, 240_000);
});
