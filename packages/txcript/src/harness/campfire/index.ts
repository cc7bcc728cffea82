/**
 * The Campfire harness (`campfire`): Campfire embeds pi's coding agent and
 * renames it through pi's branding indirection, so its sessions are pi's
 * files under `~/.campfire/agent/sessions` and `CAMPFIRE_CODING_AGENT_*`.
 * Everything else is pi's (../pi/).
 */
import { HARNESS_NAMES } from '../listing.ts';
import { piFamilyHarness, type PiLine } from '../pi/index.ts';
import { resumeArgv } from '../resume-command.ts';
import type { Harness } from '../types.ts';
import { CAMPFIRE_BRAND } from './store.ts';

export const campfire: Harness<PiLine[]> = piFamilyHarness(CAMPFIRE_BRAND, HARNESS_NAMES.campfire);

export { CAMPFIRE_BRAND, campfireStore } from './store.ts';

/** Env var holding a resume command template, e.g. `mytool --open {id}`. */
export const CAMPFIRE_RESUME_ENV = 'TXCRIPT_CAMPFIRE_RESUME';

/** argv that reopens a session: `campfire --session <id>` (pi's flag under Campfire's name), or TXCRIPT_CAMPFIRE_RESUME. */
export function resumeCommand(id: string, env: NodeJS.ProcessEnv = process.env): string[] {
  return resumeArgv(id, env, CAMPFIRE_RESUME_ENV, ['campfire', '--session'], 'campfire');
}
