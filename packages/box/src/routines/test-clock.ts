/** A clock tests step by hand (never used outside tests): timers fire as `advanceTo` passes them. */
import type { RoutineClock } from './routines.ts';

export class SteppedClock implements RoutineClock {
  private timers: Array<{ at: number; fire: () => void }> = [];

  constructor(private time: number) {}

  now = (): number => this.time;

  sleep(ms: number, fire: () => void): () => void {
    const timer = { at: this.time + Math.max(ms, 0), fire };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  /** Timers waiting. */
  get waiting(): number {
    return this.timers.length;
  }

  /**
   * Moves to `target`, firing each timer at its time in order; after each, waits (real time) until
   * the scheduler sleeps again, so its fire has been handed over before time moves on.
   */
  async advanceTo(target: number): Promise<void> {
    for (;;) {
      const next = this.timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.time = Math.max(this.time, next.at);
      this.timers = this.timers.filter((t) => t !== next);
      next.fire();
      const until = Date.now() + 10_000;
      while (this.timers.length === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
    }
    this.time = Math.max(this.time, target);
  }
}
