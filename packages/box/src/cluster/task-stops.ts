/**
 * Stops asked for a worker's background tasks through other gateways (issue 25): the UI's stop
 * button on a gateway whose worker does not run the task flags its row (PgTaskBook.requestStop);
 * the worker running it reads its flagged running tasks every second and stops them as its own
 * gateway would (the task then ends as stopped, and its row says so). A flag is cleared once acted
 * on, whether the task ran here or not (a row of this worker's name with no process here is not
 * retried forever); a task that ended or was interrupted is never looked at.
 */
import type { Database } from '../stores/postgres/database.ts';

/** How often a worker looks for stops asked elsewhere. */
export const TASK_STOP_POLL_MS = 1000;

export function startTaskStops(
  db: Database,
  worker: string,
  /** Stops the task if this process runs it (opening nothing); false when it does not run here. */
  stopHere: (agentId: string, taskId: string) => boolean,
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
      for (const row of rows) {
        try {
          stopHere(row.agent_id, row.id);
        } catch (error) {
          onError(error);
        }
        await db.pool.query(
          `UPDATE ${table} SET stop_requested = false WHERE agent_id = $1 AND id = $2 AND worker = $3`,
          [row.agent_id, row.id, worker],
        );
      }
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
