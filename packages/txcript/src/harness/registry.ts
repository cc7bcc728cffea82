/**
 * Every harness txcript knows, looked up by id or alias. Adding a harness is
 * one line in `harnesses`.
 */
import { claudeCode } from './claude-code/index.ts';
import { codex } from './codex/index.ts';
import { grokBot } from './grok-bot/index.ts';
import { simple } from './simple/index.ts';
import { findByName } from './listing.ts';
import type { Harness } from './types.ts';

export const harnesses: readonly Harness[] = [grokBot, claudeCode, codex, simple];

/** An id or alias no harness answers to. */
export class UnknownHarnessError extends Error {
  override readonly name = 'UnknownHarnessError';
  constructor(
    readonly requested: string,
    readonly known: readonly string[],
  ) {
    super(`unknown harness "${requested}"; known harnesses: ${known.join(', ')}`);
  }
}

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
