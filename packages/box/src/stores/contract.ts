/**
 * What a backend gives the store contract suites (stores/*.contract.ts): a fresh, empty home for one
 * agent's stores per test, and a way to open a store there again (as a restart or another writer
 * would). The files backend's suites are stores/files/*.test.ts.
 */
import { afterEach, beforeEach } from 'vitest';

export interface BackendHarness<S> {
  /** Opens the store in the current test's home (a second call: another handle on the same data). */
  open(): Promise<S> | S;
  /** Closes what `open` opened (the suite calls it on every handle it opened). */
  close(store: S): Promise<void> | void;
}

/** Per test: a new home (`setUp`) and its removal (`tearDown`), around the harness that opens stores there. */
export interface Backend<S> {
  setUp(): Promise<BackendHarness<S>>;
  tearDown(): Promise<void>;
}

/**
 * Inside a contract suite's `describe`: a new home per test, and `open()` for a handle on it; every
 * handle is closed and the home removed after the test.
 */
export function useBackend<S>(make: Backend<S>): () => Promise<S> {
  let harness: BackendHarness<S>;
  const opened: S[] = [];
  beforeEach(async () => {
    harness = await make.setUp();
  });
  afterEach(async () => {
    for (const store of opened.splice(0)) await harness.close(store);
    await make.tearDown();
  });
  return async () => {
    const store = await harness.open();
    opened.push(store);
    return store;
  };
}
