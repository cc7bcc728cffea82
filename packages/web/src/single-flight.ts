/**
 * At most one submission at a time, and none after one succeeded: a double click on a widget
 * option or a repeated Enter must send one `answerWidget` (a second would be a 409 at best).
 */
export interface SingleFlight {
  /** Runs `action` unless one is running or one already succeeded; returns whether it ran. */
  run(action: () => Promise<void>): Promise<boolean>;
  readonly done: boolean;
}

export function createSingleFlight(): SingleFlight {
  let busy = false;
  let done = false;
  return {
    get done() {
      return done;
    },
    async run(action) {
      if (busy || done) return false;
      busy = true;
      try {
        await action();
        done = true;
        return true;
      } finally {
        busy = false;
      }
    },
  };
}
