/** What an agent tells the host's subscribers (the gateway's event stream). */
import type { PendingInput } from '../stores/inbox.ts';
import type { SequencedEntry } from '../stores/ledger.ts';
import type { BackgroundEvent } from '../subagents/agent-background.ts';
import type { RoutinesEvent } from '../routines/routines.ts';
import type { TurnState } from './turn-state.ts';
import type { ModelRetry } from '../providers/types.ts';

export type HostEvent =
  | { type: 'entry'; agentId: string; entry: SequencedEntry }
  | { type: 'state'; agentId: string; state: TurnState }
  | { type: 'roster'; agentId: string; change: 'created' | 'deleted' | 'updated' }
  /** The agent's pending inputs changed (one was accepted, or its turn started): the whole list. */
  | { type: 'inbox'; agentId: string; pending: PendingInput[] }
  /**
   * A `send_message` text as the model writes it (`text` so far), not yet checked nor stored;
   * `text: null` when the call is over (delivered: its entry came first; refused: it vanishes).
   */
  | { type: 'draft'; agentId: string; toolCallId: string; text: string | null }
  /**
   * A tool call running (`running: true`, again as its output grows) or just over (`false`; its
   * ledger entry follows): the page's live row. `tail`: the end of its output so far, scrubbed.
   */
  | {
      type: 'tool';
      agentId: string;
      toolCallId: string;
      name: string;
      /** The model's description of the call, else its command or path, one line. */
      title: string;
      startedAt: number;
      tail: string;
      running: boolean;
    }
  /**
   * The model call failed for now and is retried after `retry.delayMs` (attempt `retry.attempt` of
   * `retry.attempts`); `retry: null` once the retried call answered or failed for good.
   */
  | { type: 'retry'; agentId: string; retry: ModelRetry | null }
  /** A background task started, changed (its tail, a child's steps) or ended; a step of a running child. */
  | BackgroundEvent
  /** The agent's routines changed (an edit, a fire, a run that started or ended): read listRoutines again. */
  | RoutinesEvent;

/**
 * What stands between the host's own events and its subscribers. The default hands each event on
 * as it comes; a cluster's relay (cluster/events.ts) also tells the other workers and adds theirs,
 * each agent's entries once and in seq order.
 */
export interface EventRelay {
  /** An event of this process, in the order it happened. */
  local(event: HostEvent): void;
}

/** Makes the relay, given the host's fan-out to its subscribers. */
export type EventRelayFactory = (deliver: (event: HostEvent) => void) => EventRelay;
