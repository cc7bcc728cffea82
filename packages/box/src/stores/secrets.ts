/** An agent's secrets: name → value, encrypted at rest (files backend: secrets/store.ts, `secrets.enc`). */
export interface SecretsStore {
  /** All secrets, name → value. */
  all(): Promise<ReadonlyMap<string, string>>;
  /** Saves one secret (a name that is not an environment variable name is refused), durably before it returns. */
  set(name: string, value: string): Promise<void>;
}

/** The box-wide secrets (`${secret:NAME}` in mcp.json): the same, and a name can be removed. */
export interface BoxSecretsStore extends SecretsStore {
  /** Removes one secret; false when there was none by that name. */
  delete(name: string): Promise<boolean>;
}
