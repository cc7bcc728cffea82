/**
 * The turn state machine: idle → working → (awaiting-user → working)* → idle.
 * A widget or secret-request send moves a working turn to awaiting-user; from
 * then on the send gate refuses every further send of that turn (seed 000,
 * "the state gate"). The user's answer, or a new prompt, starts the next turn.
 * An approval card's wait is awaiting-user too, inside its call (approvals/gate.ts).
 */
export type TurnState = 'idle' | 'working' | 'awaiting-user';

const ALLOWED: Record<TurnState, readonly TurnState[]> = {
  idle: ['working'],
  working: ['idle', 'awaiting-user'],
  'awaiting-user': ['working', 'idle'],
};

export class TurnStateMachine {
  private current: TurnState;

  constructor(
    initial: TurnState = 'idle',
    private readonly onChange: (state: TurnState) => void = () => {},
  ) {
    this.current = initial;
  }

  get state(): TurnState {
    return this.current;
  }

  /** True while the turn is waiting on the user: sends are refused. */
  get sendsBlocked(): boolean {
    return this.current === 'awaiting-user';
  }

  to(next: TurnState): void {
    if (next === this.current) return;
    if (!ALLOWED[this.current].includes(next)) {
      throw new Error(`turn state: ${this.current} → ${next} is not a valid transition`);
    }
    this.current = next;
    this.onChange(next);
  }

  /** Sets the state read back from the files when an agent is loaded (no transition rules apply). */
  restore(state: TurnState): void {
    if (state === this.current) return;
    this.current = state;
    this.onChange(state);
  }

  /** A prompt or an answer starts a turn, from idle or from awaiting-user. */
  startTurn(): void {
    this.to('working');
  }

  /** A widget or secret-request was delivered: the turn now waits on the user. */
  awaitUser(): void {
    this.to('awaiting-user');
  }

  /** The model stopped: idle, unless the turn is waiting on the user. */
  endTurn(): void {
    if (this.current === 'working') this.to('idle');
  }
}
