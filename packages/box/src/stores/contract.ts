/**
 * What a backend gives the store contract suites (stores/*.contract.ts): a fresh, empty home for one
 * agent's stores per test, and a way to open a store there again (as a restart or another writer
 * would). The files backend's suites are stores/files/*.test.ts.
 */
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
