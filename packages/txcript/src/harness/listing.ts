/**
 * The harnesses that keep sessions, for commands that only list them: each
 * with its names and a loader of its store alone. A listing then loads the
 * store modules it scans and nothing else (no codecs, no zod, which the full
 * registry brings); everything that reads or writes a session goes through
 * the registry. The names here are the harnesses' own (their index.ts use them).
 */
import type { Store } from './types.ts';

export const HARNESS_NAMES = {
  grok_bot: ['grok-bot', 'grokbot', 'grok_desktop', 'grok-desktop'],
  claude_code: ['claude', 'claude-code', 'cc'],
  codex: ['codex-cli', 'openai-codex'],
  pi: ['pi-agent', 'pi-coding-agent'],
  grok: ['grok-cli', 'grok-build'],
  campfire: [],
  amp: ['amp-cli', 'sourcegraph-amp'],
  opencode: ['open-code', 'sst-opencode'],
  cursor: ['cursor-agent', 'cursor-cli'],
  cursor_desktop: ['cursor-desktop', 'cursor-ide'],
  antigravity: ['agy', 'antigravity-cli'],
  hermes: ['hermes-agent'],
  cowork: ['claude-cowork'],
} as const;

export interface SessionSource {
  id: string;
  aliases: readonly string[];
  openStore(env: NodeJS.ProcessEnv): Promise<Store>;
}

export const sessionSources: readonly SessionSource[] = [
  {
    id: 'grok_bot',
    aliases: HARNESS_NAMES.grok_bot,
    openStore: async (env) => (await import('./grok-bot/store.ts')).createGrokBotStore(env),
  },
  {
    id: 'claude_code',
    aliases: HARNESS_NAMES.claude_code,
    openStore: async (env) => (await import('./claude-code/store.ts')).claudeCodeStore(env),
  },
  {
    id: 'codex',
    aliases: HARNESS_NAMES.codex,
    openStore: async (env) => (await import('./codex/store.ts')).codexStore(env),
  },
  {
    id: 'pi',
    aliases: HARNESS_NAMES.pi,
    openStore: async (env) => (await import('./pi/store.ts')).piStore(env),
  },
  {
    id: 'campfire',
    aliases: HARNESS_NAMES.campfire,
    openStore: async (env) => (await import('./campfire/store.ts')).campfireStore(env),
  },
  {
    id: 'grok',
    aliases: HARNESS_NAMES.grok,
    openStore: async (env) => (await import('./grok/store.ts')).grokStore(env),
  },
  {
    id: 'opencode',
    aliases: HARNESS_NAMES.opencode,
    openStore: async (env) => (await import('./opencode/store.ts')).openCodeStore(env),
  },
  {
    id: 'amp',
    aliases: HARNESS_NAMES.amp,
    openStore: async (env) => (await import('./amp/store.ts')).ampStore(env),
  },
  {
    id: 'cursor',
    aliases: HARNESS_NAMES.cursor,
    openStore: async (env) => (await import('./cursor/store.ts')).cursorStore(env),
  },
  {
    id: 'cursor_desktop',
    aliases: HARNESS_NAMES.cursor_desktop,
    openStore: async (env) => (await import('./cursor-desktop/store.ts')).cursorDesktopStore(env),
  },
  {
    id: 'antigravity',
    aliases: HARNESS_NAMES.antigravity,
    openStore: async (env) => (await import('./antigravity/store.ts')).antigravityStore(env),
  },
  {
    id: 'hermes',
    aliases: HARNESS_NAMES.hermes,
    openStore: async (env) => (await import('./hermes/store.ts')).hermesStore(env),
  },
  {
    id: 'cowork',
    aliases: HARNESS_NAMES.cowork,
    openStore: async (env) => (await import('./cowork/store.ts')).coworkStore(env),
  },
];

/** Lower-case, with `-` and `_` the same, so `Grok-Bot` finds `grok_bot`. */
export function normaliseHarnessName(name: string): string {
  return name.trim().toLowerCase().replaceAll('-', '_');
}

/** The one of `among` whose id or alias is `name`, or undefined. */
export function findByName<T extends { id: string; aliases: readonly string[] }>(
  name: string,
  among: readonly T[],
): T | undefined {
  const wanted = normaliseHarnessName(name);
  return among.find((h) => [h.id, ...h.aliases].some((n) => normaliseHarnessName(n) === wanted));
}
