/**
 * The cluster's turn queue on pg-boss 12 (issue 25 §2): one job per accepted input, in a
 * `key_strict_fifo` queue keyed by agent id, so one worker at a time runs an agent's turns, in the
 * order they were accepted. The job is sent in the transaction that accepts the input.
 */
import { PgBoss } from 'pg-boss';
import type { PoolClient } from 'pg';

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

/** Sends an input's turn job through `client`, inside the caller's transaction. */
export async function sendTurn(boss: PgBoss, client: PoolClient, job: TurnJob): Promise<void> {
  const id = await boss.send(
    TURN_QUEUE,
    { ...job },
    {
      singletonKey: job.agentId,
      db: { executeSql: (text, values) => client.query(text, values) },
    },
  );
  if (id === null) throw new Error(`the turn queue refused the job of input ${job.nonce}`);
}
