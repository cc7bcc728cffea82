/**
 * The cluster's turn queue on pg-boss 12 (issue 25 §2): one job per accepted input, in a
 * `key_strict_fifo` queue keyed by agent id, so one worker at a time runs an agent's turns, in the
 * order they were accepted. The job is inserted in the transaction that accepts the input
 * (accept-batch.ts).
 */
import { PgBoss } from 'pg-boss';

export const TURN_QUEUE = 'sendbox-turns';

export interface TurnJob {
  agentId: string;
  nonce: string;
}

/** Starts pg-boss in its own schema beside the box's (`<schema>_jobs`) and makes the turn queue. */
export async function startTurnQueue(url: string, schema: string): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString: url,
    schema: `${schema}_jobs`,
    // Failover in seconds, not the default minute (issue 25: 57 s with the defaults).
    superviseIntervalSeconds: 1,
    monitorIntervalSeconds: 1,
  });
  boss.on('error', () => undefined);
  await boss.start();
  await boss.createQueue(TURN_QUEUE, { policy: 'key_strict_fifo', heartbeatSeconds: 10 });
  return boss;
}
