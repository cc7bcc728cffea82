/**
 * Every harness txcript knows, loaded, and looked up by id or alias
 * (catalog.ts lists them; a command that needs one harness loads it alone
 * with `loadHarness`).
 */
import { harnessCatalog, UnknownHarnessError } from './catalog.ts';
import { findByName } from './listing.ts';
import type { Harness } from './types.ts';

export const harnesses: readonly Harness[] = await Promise.all(harnessCatalog.map((h) => h.load()));

export { UnknownHarnessError };

/** The harness whose id or alias is `idOrAlias`, from `among` (default: all). */
export function findHarness(idOrAlias: string, among: readonly Harness[] = harnesses): Harness {
  const found = findByName(idOrAlias, among);
  if (found === undefined)
    throw new UnknownHarnessError(
      idOrAlias,
      among.map((h) => h.id),
    );
  return found;
}
