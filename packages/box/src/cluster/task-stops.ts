/**
 * Stops asked for a worker's background tasks through other gateways (issue 25): the UI's stop
 * button on a gateway whose worker does not run the task flags its row (PgTaskBook.requestStop);
 * the worker running it reads its flagged running tasks every second and stops them as its own
 * gateway would (the task then ends as stopped, and its row says so).
 */
import type { Database } from '../stores/postgres/database.ts';

/** How often a worker looks for stops asked elsewhere. */
export const TASK_STOP_POLL_MS = 1000;

export function startTaskStops(
  db: Database,
  worker: string,
  stop: (agentId: string, taskId: string) => Promise<unknown>,
  onError: (error: unknown) => void,
): { stop(): void } {
  const table = db.table('tasks');
  let running = false;
  const look = async () => {
    if (running) return;
    running = true;
    try {
      const { rows } = await db.pool.query<{ agent_id: string; id: string }>(
        `SELECT agent_id, id FROM ${table} WHERE worker = $1 AND state = 'running' AND stop_requested`,
        [worker],
      );
      for (const row of rows) await stop(row.agent_id, row.id).catch(onError);
    } catch (error) {
      onError(error);
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void look(), TASK_STOP_POLL_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
