/** An agent's secrets: name → value, encrypted at rest (files backend: secrets/store.ts, `secrets.enc`). */
export interface SecretsStore {
  /** All secrets, name → value. */
  all(): Promise<ReadonlyMap<string, string>>;
  /** Saves one secret (a name that is not an environment variable name is refused), durably before it returns. */
  set(name: string, value: string): Promise<void>;
}
