/**
 * Where a Grok Bot box keeps its data (grok-bot-format.md §1, C16) and the
 * path-safety rules every store operation applies before touching a session.
 */
import { realpath } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { envValue, homeDir } from '../env.ts';
import { UnsafePathError } from '../session-id.ts';

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

/** Resolve the roots from an environment (never the real HOME in tests: pass `env`). */
export function grokBotRoots(env: NodeJS.ProcessEnv = process.env): GrokBotRoots {
  const agentData = join(homeDir(env), 'agent-data');
  return {
    agentData,
    transcripts:
      envValue(env, 'TXCRIPT_GROK_BOT_ROOT') ??
      envValue(env, 'GROK_BOT_TRANSCRIPTS') ??
      join(agentData, 'agent-transcripts'),
    agents: envValue(env, 'TXCRIPT_GROK_BOT_AGENTS') ?? join(agentData, 'agents'),
    gatewayFile: join(agentData, 'gateway.json'),
  };
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
