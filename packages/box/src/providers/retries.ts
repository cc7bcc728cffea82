/**
 * Retrying a model call the provider refused for now (429, 408, 409, 5xx, no connection), with
 * each wait told before it starts, so the page can say "retrying in 4 s, attempt 2 of 3". The
 * AI SDK retries by itself too, silently; the box retries here instead (the SDK's `maxRetries` is
 * 0) with the same schedule: 2 s, doubling, or the provider's own Retry-After when it asks for at
 * most a minute.
 */
import { APICallError } from 'ai';

/** A retry about to wait: `attempt` is the attempt that follows the wait, of `attempts` in all. */
export interface ModelRetry {
  attempt: number;
  attempts: number;
  delayMs: number;
  /** Why, in a few words the page can show: `HTTP 503`, `no connection`. Never the provider's body. */
  reason: string;
}

export const FIRST_RETRY_DELAY_MS = 2_000;
/** A provider's Retry-After is followed up to this long; a longer one falls back to the schedule. */
const MAX_ASKED_DELAY_MS = 60_000;

/** Whether the failure is one a later attempt may not meet (the SDK's own judgement of an HTTP failure). */
export function isRetryable(error: unknown): boolean {
  return APICallError.isInstance(error) && error.isRetryable;
}

/** How long to wait before retry `retry` (1-based): the provider's Retry-After, else 2 s doubling. */
export function retryDelayMs(error: unknown, retry: number): number {
  const scheduled = FIRST_RETRY_DELAY_MS * 2 ** (retry - 1);
  if (!APICallError.isInstance(error)) return scheduled;
  const headers = error.responseHeaders ?? {};
  const ms = Number(headers['retry-after-ms']);
  if (Number.isFinite(ms) && ms > 0 && ms <= MAX_ASKED_DELAY_MS) return ms;
  const seconds = Number(headers['retry-after']);
  if (Number.isFinite(seconds) && seconds > 0 && seconds * 1000 <= MAX_ASKED_DELAY_MS) return seconds * 1000;
  return scheduled;
}

/** The few words a retry is shown with. */
export function retryReason(error: unknown): string {
  if (APICallError.isInstance(error) && error.statusCode !== undefined) return `HTTP ${error.statusCode}`;
  return 'no connection';
}

export interface RetryOptions {
  /** Retries after the first attempt (SENDBOX_MODEL_MAX_RETRIES). */
  maxRetries: number;
  signal?: AbortSignal | undefined;
  /** Told before each wait; null once an attempt after a wait answered. */
  onRetry?: ((retry: ModelRetry | null) => void) | undefined;
}

/** Run `attempt` until it answers, fails for good, or the retries are spent; waits end early on `signal`. */
export async function withRetries<T>(attempt: () => Promise<T>, options: RetryOptions): Promise<T> {
  const attempts = options.maxRetries + 1;
  for (let n = 1; ; n++) {
    try {
      const result = await attempt();
      if (n > 1) options.onRetry?.(null);
      return result;
    } catch (error) {
      if (n >= attempts || !isRetryable(error) || options.signal?.aborted === true) {
        if (n > 1) options.onRetry?.(null);
        throw error;
      }
      const delayMs = retryDelayMs(error, n);
      options.onRetry?.({ attempt: n + 1, attempts, delayMs, reason: retryReason(error) });
      await sleep(delayMs, options.signal);
    }
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
