/**
 * A box-wide JSON document kept whole and changed by read-modify-write (the MCP servers' OAuth
 * state, an agent's approval grants): a file in the data dir (stores/files/documents.ts, the
 * sealed one in secrets/sealed-file.ts), or a row every worker of a cluster shares
 * (stores/postgres/sealed-documents.ts).
 */
export interface StoredDocument {
  /** Its value now (undefined: there is none yet); another writer's change is seen. */
  read(): Promise<unknown>;
  /**
   * Changes it: `change` gets the current value (its own copy; undefined when there is none) and
   * gives the next value and a result. Changes of one document never interleave, across workers too.
   */
  update<T>(change: (current: unknown) => { value: unknown; result: T }): Promise<T>;
}
