/**
 * Every harness txcript knows, looked up by id or alias. Adding a harness is
 * one line in `harnesses`.
 */
import { claudeCode } from './claude-code/index.ts';
import { codex } from './codex/index.ts';
import { grokBot } from './grok-bot/index.ts';
import { simple } from './simple/index.ts';
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

/** Lower-case, with `-` and `_` the same, so `Grok-Bot` finds `grok_bot`. */
function normalise(name: string): string {
  return name.trim().toLowerCase().replaceAll('-', '_');
}

/** The harness whose id or alias is `idOrAlias`, from `among` (default: all). */
export function findHarness(idOrAlias: string, among: readonly Harness[] = harnesses): Harness {
  const wanted = normalise(idOrAlias);
  const found = among.find((h) => [h.id, ...h.aliases].some((name) => normalise(name) === wanted));
  if (found === undefined)
    throw new UnknownHarnessError(
      idOrAlias,
      among.map((h) => h.id),
    );
  return found;
}
