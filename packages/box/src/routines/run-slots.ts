/**
 * At most `limit` routine fires starting a turn at once (routines.ts): a fire takes a slot before
 * it is handed to its agent and gives it back when its turn has started (its user message is in
 * the ledger), so a burst (200 agents due at :00) starts its turns a few at a time instead of
 * all together. A slot not given back within `maxHoldMs` (a turn that never starts: the agent is
 * busy with a long turn of the user's) is given back anyway, so a stuck agent cannot hold the
 * others up. FIFO: fires start in the order they came.
 */
export class RunSlots {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    readonly limit: number,
    private readonly maxHoldMs = 30_000,
  ) {}

  /** Resolves with this slot's release (calling it again does nothing) once a slot is free. */
  async acquire(): Promise<() => void> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active += 1;
    let held = true;
    const timer = setTimeout(() => release(), this.maxHoldMs);
    timer.unref();
    const release = (): void => {
      if (!held) return;
      held = false;
      clearTimeout(timer);
      const next = this.waiting.shift();
      if (next) next();
      else this.active -= 1;
    };
    return release;
  }

  /** Fires waiting for a slot (diagnostics, the bench). */
  get queued(): number {
    return this.waiting.length;
  }
}
