/**
 * Where a Grok Bot box keeps its data (grok-bot-format.md §1, C16) and the
 * path-safety rules every store operation applies before touching a session.
 */
import { realpath } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, sep } from 'node:path';

export interface GrokBotRoots {
  /** `$HOME/agent-data`. */
  agentData: string;
  /** The `agent-transcripts` folder: `TXCRIPT_GROK_BOT_ROOT`, `GROK_BOT_TRANSCRIPTS`, or `<agentData>/agent-transcripts`. */
  transcripts: string;
  /** The `agents` folder: `TXCRIPT_GROK_BOT_AGENTS` or `<agentData>/agents`. */
  agents: string;
  /** `<agentData>/gateway.json`. */
  gatewayFile: string;
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}

/** Resolve the roots from an environment (never the real HOME in tests: pass `env`). */
export function grokBotRoots(env: NodeJS.ProcessEnv = process.env): GrokBotRoots {
  const home = nonEmpty(env.HOME) ?? homedir();
  const agentData = join(home, 'agent-data');
  return {
    agentData,
    transcripts:
      nonEmpty(env.TXCRIPT_GROK_BOT_ROOT) ??
      nonEmpty(env.GROK_BOT_TRANSCRIPTS) ??
      join(agentData, 'agent-transcripts'),
    agents: nonEmpty(env.TXCRIPT_GROK_BOT_AGENTS) ?? join(agentData, 'agents'),
    gatewayFile: join(agentData, 'gateway.json'),
  };
}

/** A session id names one folder under a root: no separators, no `..`, no NUL, not empty. */
export function isSafeSessionId(id: string): boolean {
  return (
    id !== '' &&
    id !== '.' &&
    !id.includes('/') &&
    !id.includes('\\') &&
    !id.includes('..') &&
    !id.includes('\0')
  );
}

/** A refused path or id. */
export class UnsafePathError extends Error {
  override readonly name = 'UnsafePathError';
}

export function assertSafeSessionId(id: string): void {
  if (!isSafeSessionId(id)) {
    throw new UnsafePathError(
      `refusing session id ${JSON.stringify(id)}: an id may not be empty or contain "/", "\\", ".." or NUL`,
    );
  }
}

/**
 * Resolve `path` (a session folder under `root`) through symlinks and refuse it
 * when it ends up outside the root (a symlinked session escaping the box).
 * Returns the real path; ENOENT and other fs errors propagate.
 */
export async function realPathInside(root: string, path: string): Promise<string> {
  const [realRoot, real] = await Promise.all([realpath(root), realpath(path)]);
  if (real !== realRoot && !real.startsWith(realRoot.endsWith(sep) ? realRoot : realRoot + sep)) {
    throw new UnsafePathError(`refusing ${path}: it resolves to ${real}, outside ${realRoot}`);
  }
  return real;
}
