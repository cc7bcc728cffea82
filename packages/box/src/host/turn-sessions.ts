/**
 * The sessions a cluster worker keeps between an agent's turn jobs (issue 25). Opening a session
 * reads the agent's whole ledger and transcript; a worker that ran the agent's last job keeps its
 * session instead, and the next job on it reads only what others wrote since (AgentSession.catchUp:
 * the ledger rows after its last seq, the transcript again only when another worker appended).
 *
 * Between jobs a kept session is parked: its stores' fence holds PARKED_EPOCH, which no lease ever
 * has, so any write it tried would be refused whole; and it starts no turn (it counts as one whose
 * turns run elsewhere). A job gives it the job's lease epoch and lets it run turns. A session whose
 * job was stopped (the lease lost) or that leaves work behind (a write failed) is not kept.
 */
import { AgentSession, type SessionConfig } from '../agent/agent-session.ts';
import type { StoreBackend } from '../stores/agent-stores.ts';
import type { AgentFence } from '../stores/postgres/leases.ts';

/** A kept session's epoch between jobs: leases count from 1, so no lease has it and its writes fail. */
export const PARKED_EPOCH = 0;
/** Agents whose sessions a worker keeps; the one run least recently goes first. */
export const KEPT_TURN_SESSIONS = 64;

export interface QueuedTurnsJob {
  /** The lease epoch the job's turns write behind. */
  epoch: number;
  /** The agent's stores, writing behind `fence` (whose epoch this module moves). */
  behind(fence: AgentFence): StoreBackend;
  /** Aborts when the lease is lost: the running turn is stopped, its tools killed. */
  signal?: AbortSignal;
  /** A cut turn is closed with a notice, not resumed (the job's last try). */
  closeCutTurns?: boolean;
  /** Runs before each of the job's turns (SessionConfig.beforeTurn: the uploads other gateways took in). */
  beforeTurn?: SessionConfig['beforeTurn'];
}

/** What a kept session's config says about the job it is in (read at each use). */
interface JobFlags {
  active: boolean;
  closeCutTurns: boolean;
  beforeTurn: SessionConfig['beforeTurn'];
}

interface Kept {
  session: AgentSession;
  fence: AgentFence;
  flags: JobFlags;
}

export class TurnSessions {
  private readonly sessions = new Map<string, Kept>();
  /** The sessions whose job runs now, by agent. */
  private readonly running = new Map<string, AgentSession>();

  /** `config`: the host's session config, read when a session is opened and through it afterwards. */
  constructor(
    private readonly config: () => SessionConfig,
    private readonly limit = KEPT_TURN_SESSIONS,
  ) {}

  /** The agent's kept session, parked until its next job here (tests, diagnostics). */
  kept(agentId: string): AgentSession | undefined {
    return this.sessions.get(agentId)?.session;
  }

  /** The user's Stop: aborts the agent's turn if a job of this worker runs it. */
  cancel(agentId: string): { cancelled: boolean } {
    return this.running.get(agentId)?.cancelTurn() ?? { cancelled: false };
  }

  /** A stored Stop: aborts the agent's turn here if it started at or before ledger seq `seq`. */
  cancelStartedBy(agentId: string, seq: number): { cancelled: boolean } {
    return this.running.get(agentId)?.cancelTurnStartedBy(seq) ?? { cancelled: false };
  }

  /**
   * Runs the agent's pending inputs (and first a turn a dead worker cut) behind `job.epoch`, in the
   * session kept from its last job on this worker, caught up, or in a new one; resolves when none
   * is left or the job's signal stopped it.
   */
  async run(agentId: string, job: QueuedTurnsJob): Promise<void> {
    const kept = (await this.resume(agentId, job)) ?? (await this.open(agentId, job));
    const { session } = kept;
    const stop = () => session.cancelTurn();
    job.signal?.addEventListener('abort', stop);
    this.running.set(agentId, session);
    let clean = false;
    let failure: Error | null = null;
    try {
      for (;;) {
        session.resume();
        await session.idle();
        // Failed outside any turn: the job fails, and the queue tries it again later.
        failure = session.turnLoopError;
        if (failure || job.signal?.aborted || session.busy) break;
        // Inputs accepted meanwhile (through any gateway) run in this job, now: their own jobs come
        // only after this one ends (the queue keeps an agent's jobs in order), and find them done.
        await session.catchUp();
        if (!session.busy) break;
      }
      clean = !job.signal?.aborted && !session.busy;
    } finally {
      this.running.delete(agentId);
      job.signal?.removeEventListener('abort', stop);
      kept.fence.epoch = PARKED_EPOCH;
      kept.flags.active = false;
      kept.flags.beforeTurn = undefined;
    }
    if (!clean) {
      await session.close();
      if (failure) throw failure;
      return;
    }
    this.sessions.set(agentId, kept);
    for (const [id, old] of this.sessions) {
      if (this.sessions.size <= this.limit) break;
      this.sessions.delete(id);
      void old.session.close().catch(() => undefined);
    }
  }

  /** Closes every kept session (the host closes). */
  async close(): Promise<void> {
    const sessions = [...this.sessions.values()];
    this.sessions.clear();
    for (const { session } of sessions) await session.close().catch(() => undefined);
  }

  private async resume(agentId: string, job: QueuedTurnsJob): Promise<Kept | undefined> {
    const kept = this.sessions.get(agentId);
    if (!kept) return undefined;
    this.sessions.delete(agentId);
    kept.fence.epoch = job.epoch;
    kept.flags.active = true;
    kept.flags.closeCutTurns = job.closeCutTurns ?? false;
    kept.flags.beforeTurn = job.beforeTurn;
    try {
      await kept.session.catchUp();
    } catch (error) {
      kept.fence.epoch = PARKED_EPOCH;
      kept.flags.active = false;
      await kept.session.close().catch(() => undefined);
      throw error;
    }
    return kept;
  }

  private async open(agentId: string, job: QueuedTurnsJob): Promise<Kept> {
    const fence: AgentFence = { agentId, epoch: job.epoch };
    const flags: JobFlags = {
      active: true,
      closeCutTurns: job.closeCutTurns ?? false,
      beforeTurn: job.beforeTurn,
    };
    // The host's config underneath (a model swapped later reaches a kept session), the job's flags on top.
    const config = Object.create(this.config(), {
      stores: { value: job.behind(fence) },
      turnsElsewhere: { get: () => !flags.active },
      closeCutTurns: { get: () => flags.closeCutTurns },
      beforeTurn: { get: () => (flags.active ? flags.beforeTurn : undefined) },
    }) as SessionConfig;
    return { session: await AgentSession.open(agentId, config), fence, flags };
  }
}
