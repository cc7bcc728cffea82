/**
 * The model call being retried: why, the seconds until the next attempt (ticking) and which
 * attempt of how many, e.g. "HTTP 503: retrying in 4 s, attempt 2 of 3".
 */
import { useEffect, useState } from 'react';
import type { ModelRetryView } from '../api/types.ts';

/** A retry as the page holds it: when the next attempt starts, by this page's clock. */
export type HeldRetry = ModelRetryView & { until: number };

export function retryText(retry: ModelRetryView, remainingMs: number): string {
  const seconds = Math.ceil(remainingMs / 1000);
  const when = seconds > 0 ? `retrying in ${seconds}\u00a0s` : 'retrying now';
  return `${when}, attempt ${retry.attempt} of ${retry.attempts}`;
}

export function ModelRetryRow({ retry }: { retry: HeldRetry }) {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, []);
  return (
    <article
      className="notice model-retry"
      data-testid="model-retry"
      role="status"
      aria-label="The model is busy; the box retries"
    >
      <span className="status-dot status-running" aria-hidden="true" />
      <span>
        The model did not answer ({retry.reason}): {retryText(retry, retry.until - now)}
      </span>
    </article>
  );
}
