/** The Antigravity CLI harness (`antigravity`, `agy`): `~/.gemini/antigravity-cli/conversations/<id>.db`. */
import { HARNESS_NAMES } from '../listing.ts';
import { resumeArgv } from '../resume-command.ts';
import type { Harness } from '../types.ts';
import { antigravityCodec } from './codec.ts';
import { antigravityText, type AntigravityRecords } from './records.ts';
import { antigravityStore } from './store.ts';

export const antigravity: Harness<AntigravityRecords> = {
  id: 'antigravity',
  aliases: HARNESS_NAMES.antigravity,
  text: antigravityText,
  codec: antigravityCodec,
  store: antigravityStore,
};

/** Env var holding a resume command template, e.g. `mytool --open {id}`. */
export const ANTIGRAVITY_RESUME_ENV = 'TXCRIPT_ANTIGRAVITY_RESUME';

/** argv that reopens a conversation: `agy --conversation <id>`, or the template in TXCRIPT_ANTIGRAVITY_RESUME. Run it in the session's cwd. */
export function resumeCommand(id: string, env: NodeJS.ProcessEnv = process.env): string[] {
  return resumeArgv(id, env, ANTIGRAVITY_RESUME_ENV, ['agy', '--conversation'], 'antigravity');
}

export { antigravityCodec, conversationOf } from './codec.ts';
export {
  antigravityDb,
  antigravityDocument,
  antigravityText,
  type AntigravityDb,
  type AntigravityRecords,
  type StepRow,
} from './records.ts';
export { PAYLOAD_FIELD, STATUS, STEP } from './steps.ts';
export {
  ANTIGRAVITY_ROOT_ENV,
  antigravityRoot,
  antigravityStore,
  readAntigravityDb,
  writeAntigravityConversation,
} from './store.ts';
export { antigravityToolToCommon, commonToolToAntigravity } from './tools.ts';
export { trajectoryRows } from './trajectory.ts';
