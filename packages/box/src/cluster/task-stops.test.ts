/**
 * Stops asked through another gateway, on a real PostgreSQL: the worker whose name a flagged running
 * row carries acts on the flag once and clears it, also when no process of the task runs here (it is
 * not retried every second forever).
 */
import { describe, expect, it } from 'vitest';
import { useServices } from '../stores/postgres/backend.ts';
import { PgTaskBook } from '../stores/postgres/task-book.ts';
import { startHeartbeat, WORKER_TTL_MS } from '../stores/postgres/worker-heartbeats.ts';
import { useClusterKit } from '../testing/cluster-kit.ts';
import { until } from '../testing/processes.ts';
import { startTaskStops, TASK_STOP_POLL_MS } from './task-stops.ts';

const services = useServices();

describe('task stops asked elsewhere', () => {
  const kit = useClusterKit(services);

  it('acts on a flag once and clears it, whether or not the task runs here', async () => {
    const { db } = await kit.freshSchema();
    const heartbeat = await startHeartbeat(db, 'worker-a');
    kit.defer(() => heartbeat.stop());
    const onA = new PgTaskBook(db, 'agent-stops', 'worker-a', WORKER_TTL_MS);
    const onGateway = new PgTaskBook(db, 'agent-stops', 'gateway', WORKER_TTL_MS);
    for (const id of ['here', 'not-here']) {
      onA.started({
        id,
        kind: 'command',
        turn: 0,
        toolCallId: `call-${id}`,
        label: 'sleep 300',
        outputPath: null,
        agentId: null,
        startedAt: Date.now(),
      });
      expect(onGateway.requestStop(id)).toBe(true);
    }
    const asked: string[] = [];
    const errors: unknown[] = [];
    const stops = startTaskStops(
      db,
      'worker-a',
      (agentId, taskId) => {
        asked.push(`${agentId}/${taskId}`);
        return taskId === 'here';
      },
      (error) => errors.push(error),
    );
    kit.defer(() => stops.stop());
    await until(() => asked.length === 2, 'both stops acted on', 10_000);
    // Three more polls: nothing is asked again.
    await new Promise((resolve) => setTimeout(resolve, 3 * TASK_STOP_POLL_MS + 500));
    expect(asked.sort()).toEqual(['agent-stops/here', 'agent-stops/not-here']);
    expect(errors).toEqual([]);
    const { rows } = await db.pool.query<{ id: string; stop_requested: boolean }>(
      `SELECT id, stop_requested FROM ${db.table('tasks')} ORDER BY id`,
    );
    expect(rows).toEqual([
      { id: 'here', stop_requested: false },
      { id: 'not-here', stop_requested: false },
    ]);
  }, 30_000);
});
