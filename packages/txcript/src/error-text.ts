/** What a caught value says, for messages that name a failure. */
export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The `code` of a Node.js system error (`ENOENT`, `EACCES`, ...) or of any error carrying one. */
export function errnoCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e && typeof e.code === 'string'
    ? e.code
    : undefined;
}
