/**
 * Inputs are accepted before turns start (issue 24, fast accepts): while the box is committing
 * inputs, an agent whose next turn is due waits before starting it, so a burst of prompts (50
 * agents × 10 at once) is acknowledged first and the turns it queued run after it. On one event
 * loop every turn start (its ledger and JSONL writes, the model view) delays the accepts still
 * being read, and a user waits on an acknowledgement, not on a turn.
 *
 * A turn waits only while accepts are under way, and at most `maxHoldMs`, so a steady stream of
 * inputs never starves the turns. Quiet means no accept under way once the event loop has read
 * what the sockets hold (one `setImmediate` later): the next requests of a burst come in meanwhile.
 * With nothing being accepted, a turn starts at once: an unloaded prompt's turn loses no time.
 */
export class AcceptsFirst {
  private running = 0;
  private readonly waiting = new Set<() => void>();
  private checking = false;

  constructor(private readonly maxHoldMs = 1_000) {}

  /** Accepts under way (tests, diagnostics). */
  get underWay(): number {
    return this.running;
  }

  /** Runs an accept (an inbox commit and the sync that covers it), counted while it runs. */
  async accepting<T>(accept: () => Promise<T>): Promise<T> {
    this.running += 1;
    try {
      return await accept();
    } finally {
      this.running -= 1;
      if (this.running === 0) this.checkQuiet();
    }
  }

  /**
   * Null when no accept is under way (start now); otherwise resolves once none is, or after
   * `maxHoldMs`, whichever comes first.
   */
  quiet(): Promise<void> | null {
    if (this.running === 0 && this.waiting.size === 0) return null;
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiting.delete(done);
        resolve();
      };
      const timer = setTimeout(done, this.maxHoldMs);
      timer.unref();
      this.waiting.add(done);
      if (this.running === 0) this.checkQuiet();
    });
  }

  /** Lets the waiting turns go if no accept started by the time the sockets were read. */
  private checkQuiet(): void {
    if (this.checking || this.waiting.size === 0) return;
    this.checking = true;
    setImmediate(() => {
      this.checking = false;
      if (this.running > 0) return;
      for (const done of [...this.waiting]) done();
    });
  }
}
