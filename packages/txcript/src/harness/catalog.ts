/**
 * Every harness txcript knows, by name, each loaded only when asked for: a
 * command that converts from one harness to another loads those two codecs,
 * not every one (Grok Bot's brings SQLite). Adding a harness is one entry in
 * `harnessCatalog`; registry.ts loads them all, for callers that want every one.
 */
import { findByName, HARNESS_NAMES } from './listing.ts';
import type { Harness } from './types.ts';

export interface HarnessEntry {
  id: string;
  aliases: readonly string[];
  load(): Promise<Harness>;
}

export const harnessCatalog: readonly HarnessEntry[] = [
  {
    id: 'grok_bot',
    aliases: HARNESS_NAMES.grok_bot,
    load: async () => (await import('./grok-bot/index.ts')).grokBot,
  },
  {
    id: 'claude_code',
    aliases: HARNESS_NAMES.claude_code,
    load: async () => (await import('./claude-code/index.ts')).claudeCode,
  },
  {
    id: 'codex',
    aliases: HARNESS_NAMES.codex,
    load: async () => (await import('./codex/index.ts')).codex,
  },
  { id: 'pi', aliases: HARNESS_NAMES.pi, load: async () => (await import('./pi/index.ts')).pi },
  {
    id: 'campfire',
    aliases: HARNESS_NAMES.campfire,
    load: async () => (await import('./campfire/index.ts')).campfire,
  },
  {
    id: 'opencode',
    aliases: HARNESS_NAMES.opencode,
    load: async () => (await import('./opencode/index.ts')).openCode,
  },
  { id: 'grok', aliases: HARNESS_NAMES.grok, load: async () => (await import('./grok/index.ts')).grok },
  { id: 'amp', aliases: HARNESS_NAMES.amp, load: async () => (await import('./amp/index.ts')).amp },
  {
    id: 'cursor',
    aliases: HARNESS_NAMES.cursor,
    load: async () => (await import('./cursor/index.ts')).cursor,
  },
  {
    id: 'cursor_desktop',
    aliases: HARNESS_NAMES.cursor_desktop,
    load: async () => (await import('./cursor-desktop/index.ts')).cursorDesktop,
  },
  {
    id: 'antigravity',
    aliases: HARNESS_NAMES.antigravity,
    load: async () => (await import('./antigravity/index.ts')).antigravity,
  },
  {
    id: 'hermes',
    aliases: HARNESS_NAMES.hermes,
    load: async () => (await import('./hermes/index.ts')).hermes,
  },
  {
    id: 'cowork',
    aliases: HARNESS_NAMES.cowork,
    load: async () => (await import('./cowork/index.ts')).cowork,
  },
  { id: 'simple', aliases: [], load: async () => (await import('./simple/index.ts')).simple },
];

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

/** The harness whose id or alias is `idOrAlias`, loaded alone. Throws UnknownHarnessError. */
export async function loadHarness(idOrAlias: string): Promise<Harness> {
  const entry = findByName(idOrAlias, harnessCatalog);
  if (entry === undefined)
    throw new UnknownHarnessError(
      idOrAlias,
      harnessCatalog.map((h) => h.id),
    );
  return entry.load();
}
