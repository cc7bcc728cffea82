/**
 * One time limit over a whole outbound exchange (lookups, connects, redirects, body), merged
 * with the caller's abort signal. Name lookups cannot be cancelled, only abandoned: `race`.
 */
import { OutboundError } from './errors.ts';

export class Deadline {
  readonly #controller = new AbortController();
  readonly #timer: NodeJS.Timeout | undefined;
  readonly #outer: AbortSignal | undefined;
  readonly #onOuterAbort = (): void => this.#controller.abort();
  #timedOut = false;

  constructor(
    /** The host the exchange started with, named in the error. */
    private readonly host: string,
    private readonly timeoutMs: number | undefined,
    outer?: AbortSignal,
  ) {
    if (timeoutMs !== undefined && Number.isFinite(timeoutMs)) {
      this.#timer = setTimeout(() => {
        this.#timedOut = true;
        this.#controller.abort();
      }, timeoutMs);
    }
    this.#outer = outer;
    if (outer?.aborted) this.#controller.abort();
    else outer?.addEventListener('abort', this.#onOuterAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Why the exchange stopped, once `signal` has aborted. */
  error(): OutboundError {
    return this.#timedOut
      ? new OutboundError('timeout', this.host, `${this.host} did not answer within ${this.timeoutMs} ms`)
      : new OutboundError('aborted', this.host, `the request to ${this.host} was cancelled`);
  }

  /** `promise`, or this deadline's error once it passes first. */
  race<T>(promise: Promise<T>): Promise<T> {
    if (this.signal.aborted) return Promise.reject(this.error());
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => reject(this.error());
      this.signal.addEventListener('abort', onAbort, { once: true });
      promise.then(resolve, reject).finally(() => this.signal.removeEventListener('abort', onAbort));
    });
  }

  /** Stops the clock (the exchange is over); the caller's signal no longer matters either. */
  clear(): void {
    clearTimeout(this.#timer);
    this.#outer?.removeEventListener('abort', this.#onOuterAbort);
  }
}
