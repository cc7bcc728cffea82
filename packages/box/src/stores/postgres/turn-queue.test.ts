/**
 * The turn queue's settings on a real PostgreSQL (pg-boss 12 in a schema of the test's own): what a
 * long turn and a dead worker each meet.
 */
import { describe, expect, it } from 'vitest';
import { useServices } from './backend.ts';
import { DEAD_TURN_QUEUE, startTurnQueue, TURN_JOB_MAX_SECONDS, TURN_QUEUE } from './turn-queue.ts';
import { useClusterKit } from '../../testing/cluster-kit.ts';

const services = useServices();

describe('the turn queue', () => {
  const kit = useClusterKit(services);

  it('lets a turn job run a day (a dead worker is found by its heartbeat), on a new queue and on one made before', async () => {
    const fresh = await kit.freshSchema();
    const boss = await startTurnQueue(services().databaseUrl, fresh.schema);
    const queue = await boss.getQueue(TURN_QUEUE);
    expect(queue).toMatchObject({
      policy: 'key_strict_fifo',
      heartbeatSeconds: 10,
      expireInSeconds: TURN_JOB_MAX_SECONDS,
      deadLetter: DEAD_TURN_QUEUE,
    });
    // The dead letter queue's try runs the agent's pending turns: the same bound and heartbeat.
    const dead = { heartbeatSeconds: 10, expireInSeconds: TURN_JOB_MAX_SECONDS };
    expect(await boss.getQueue(DEAD_TURN_QUEUE)).toMatchObject(dead);
    // Queues made by an earlier version, with pg-boss's defaults (15 minutes, no heartbeat), get them.
    await boss.updateQueue(TURN_QUEUE, { expireInSeconds: 900 });
    await boss.updateQueue(DEAD_TURN_QUEUE, { expireInSeconds: 900, heartbeatSeconds: null });
    await boss.stop({ graceful: false, close: true });
    const again = await startTurnQueue(services().databaseUrl, fresh.schema);
    expect((await again.getQueue(TURN_QUEUE))?.expireInSeconds).toBe(24 * 60 * 60);
    expect(await again.getQueue(DEAD_TURN_QUEUE)).toMatchObject(dead);
    await again.stop({ graceful: false, close: true });
  });
});
