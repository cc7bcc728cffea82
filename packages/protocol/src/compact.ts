/** Drops keys whose value is undefined, so a built object holds only what was sent (and compares equal to its JSON). */
export function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
