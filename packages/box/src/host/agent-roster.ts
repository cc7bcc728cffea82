/**
 * The host's side of the roster (stores/files/roster.ts): every change an agent reports (an
 * entry, its state, its pending inputs, read or renamed) marks its row, and the rows marked are
 * written together, in one transaction, from the live session, at most every `FLUSH_EVERY_MS`:
 * a burst of inputs (each one a change) rewrote every agent's row between any two requests. A row
 * written late costs nothing: a live agent's row is read from its session, and a row whose files
 * changed since is never used. `listAgents`
 * takes a closed agent's row from here while its files still carry the row's stamp.
 */
import { z } from 'zod';
import { agentPaths, rosterDb } from '../stores/files/layout.ts';
import { agentStamp, RosterIndex } from '../stores/files/roster.ts';
import type { RosterRow } from './types.ts';

const rosterRowSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  harness: z.string(),
  updatedAt: z.number(),
  lastActivityAt: z.number(),
  lastEntry: z.object({ kind: z.string(), text: z.string() }).nullable(),
  unreadCount: z.number(),
  hasUnread: z.boolean(),
  awaitingUserResponse: z.boolean(),
  // Rows written before the field existed, or while no turn ran: no card waits.
  awaitingApproval: z.boolean().default(false),
  pendingInputs: z.number(),
  state: z.enum(['idle', 'working', 'awaiting-user']),
  readOnly: z.boolean(),
}) satisfies z.ZodType<RosterRow>;

/** How long marked rows wait to be written together. */
const FLUSH_EVERY_MS = 100;

export class AgentRoster {
  private readonly index: RosterIndex<RosterRow>;
  private readonly marked = new Set<string>();
  private flushing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  /**
   * `rowOf` gives the row of a live agent (undefined when it is not open); its `readOnly` says
   * what the agent's profile says, not whether a model is set (that is decided when listing).
   */
  constructor(
    private readonly dataDir: string,
    private readonly rowOf: (id: string) => Promise<RosterRow | undefined>,
    private readonly flushEveryMs = FLUSH_EVERY_MS,
  ) {
    this.index = new RosterIndex(rosterDb(dataDir), (value) => rosterRowSchema.safeParse(value).data);
  }

  /** The row last written for a closed agent, while its files are as they were then; null: no agent. */
  cached(id: string): RosterRow | undefined | null {
    const stamp = agentStamp(agentPaths(this.dataDir, id));
    if (stamp === null) return null;
    const row = this.index.get(id, stamp);
    // A turn cannot be running in an agent that is not open: that row was written before a crash.
    return row?.state === 'working' ? undefined : row;
  }

  /** Writes a row read just now from the agent's files. */
  record(id: string, row: RosterRow): void {
    const stamp = agentStamp(agentPaths(this.dataDir, id));
    if (stamp !== null) this.index.put(id, stamp, row);
  }

  changed(id: string): void {
    // A turn stopped by the closing host still reports its end: close() records those rows itself.
    if (this.closed) return;
    this.marked.add(id);
    if (this.flushing !== null || this.timer !== null) return;
    this.timer = setTimeout(() => this.flushNow(), this.flushEveryMs);
    this.timer.unref();
  }

  removed(id: string): void {
    this.marked.delete(id);
    this.index.remove(id);
  }

  /** Resolves once the rows marked so far are written. */
  async settled(): Promise<void> {
    if (this.timer !== null) this.flushNow();
    await this.flushing;
  }

  private flushNow(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.flushing ??= this.flush();
  }

  close(): void {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.index.close();
  }

  private async flush(): Promise<void> {
    while (this.marked.size > 0 && !this.closed) {
      const ids = [...this.marked];
      this.marked.clear();
      const rows: Array<[string, RosterRow]> = [];
      for (const id of ids) {
        const row = await this.rowOf(id).catch(() => undefined);
        if (row) rows.push([id, row]);
      }
      if (this.closed) break;
      this.index.together(() => {
        for (const [id, row] of rows) this.record(id, row);
      });
    }
    this.flushing = null;
  }
}
