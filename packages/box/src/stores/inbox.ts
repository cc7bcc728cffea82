/**
 * The durable inbox of one agent: the inputs it accepted (prompts, answers, retries), each once per
 * nonce, and their state. An input is accepted once `accept` resolves; only then may the gateway
 * answer 2xx. The files backend keeps it in the agent's store.db (stores/files/inbox.ts).
 */

/** What the user sent, as the turn that answers it needs it. */
export type InboxInput =
  /** `supersedes`: the user message id it replaces (regenerate, edit and resend; protocol revisions.ts). */
  | { kind: 'prompt'; prompt: string; supersedes?: string }
  | { kind: 'widget-answer'; messageId: string; text: string; value: string }
  | { kind: 'secret-answer'; messageId: string; name: string; label: string }
  /** Retry after a failed model call: a new turn on the conversation as it stands. */
  | { kind: 'retry' }
  /**
   * A routine's fire (routines/): its nonce is the routine id plus `instant`. `missed` counts the
   * instants it stands for (more than 1 after downtime), the first of them at `missedSince`.
   */
  | {
      kind: 'routine';
      routineId: string;
      name: string;
      prompt: string;
      instant: number;
      silent: boolean;
      missed: number;
      missedSince: number | null;
    }
  /** Background work ended while the agent was idle (tasks/task-wakes.ts): the host's words, scrubbed. */
  | { kind: 'task-wake'; text: string }
  /**
   * An approval card's answer (approvals/gate.ts), every one; its nonce is the card's. The turn
   * waiting on the card takes it; otherwise (the box restarted, the user sent a prompt first) a
   * turn of its own tells the model what the user decided.
   */
  | { kind: 'tool-approval'; entryId: string; subject: string; decision: 'allow' | 'allow-always' | 'deny' };

export type InputState = 'pending' | 'started' | 'failed';

export interface InboxRow {
  seq: number;
  nonce: string;
  input: InboxInput;
  state: InputState;
  turn: number | null;
  acceptedAt: number;
  detail: string | null;
}

/** A pending input as clients see it (openAgent, listAgents, the event stream). */
export interface PendingInput {
  nonce: string;
  kind: InboxInput['kind'];
  /** What the user typed or picked (a secret is never shown: its label is). */
  text: string;
  acceptedAt: number;
}

export interface AcceptOptions {
  /**
   * `committed`: the input is pending (its turn may start) once its row commits, before it is
   * durable; `durable(nonce)` says when it is. Only for an input its sender repeats with the same
   * nonce until it is durable (a routine's fire: its book moves on after `durable`), so a power
   * cut loses nothing the sender does not give again. Default `durable`.
   */
  pending?: 'committed' | 'durable';
}

/** What an agent does with its inbox. */
export interface InboxStore {
  /** True when an input with this nonce was ever accepted (across restarts). */
  has(nonce: string): boolean;
  /** Pending inputs in the order they were accepted. */
  pending(): readonly InboxRow[];
  /**
   * Commits an input, resolving once it is durable (inputs that arrive together may share one
   * sync); false when its nonce was accepted before.
   */
  accept(nonce: string, input: InboxInput, acceptedAt: number, options?: AcceptOptions): Promise<boolean>;
  /** Resolves once the input with this nonce is durable (a repeat is answered no sooner). */
  durable(nonce: string): Promise<void>;
  /**
   * Marks an input started in turn `turn` (after its user message committed in the ledger). It
   * leaves `pending` at once; the promise resolves once the row says so (a failure there is not
   * thrown: the ledger is the commit point, and `reconcile` settles the row on the next open).
   */
  markStarted(nonce: string, turn: number): Promise<void>;
  markFailed(nonce: string, detail: string): Promise<void>;
  /**
   * Takes back an input that has not started (the user removed a queued prompt): its row is
   * failed with `detail` before this resolves, a write failure is thrown (StoreWriteError) and the
   * input stays pending. False when it is not pending (started, settled, or never accepted).
   */
  withdraw(nonce: string, detail: string): Promise<boolean>;
  /** Reads the rows again (other writers: another connection, another worker of the cluster). */
  load(): void | Promise<void>;
  /** Settles pending inputs whose user message the ledger holds: `startedTurn` gives a nonce's turn, or undefined. */
  reconcile(startedTurn: (nonce: string) => number | undefined): Promise<void>;
  close(): void;
}
