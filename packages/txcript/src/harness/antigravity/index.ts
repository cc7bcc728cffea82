/** The Antigravity CLI harness (`antigravity`, `agy`): `~/.gemini/antigravity-cli/conversations/<id>.db`. */
import { HARNESS_NAMES } from '../listing.ts';
import { resumeArgv } from '../resume-command.ts';
import { sessionsHolding } from '../sqlite-text-check.ts';
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
  // Search's byte check, asked of each conversation's database (sqlite-text-check.ts): every searchable
  // text is a protobuf string of a `steps` row (the brain folder's logs are kept for the round trip,
  // never read into messages), raw UTF-8 there, or JSON inside one (a call's arguments). The codec adds
  // a listing's and an edit's keys to their results (steps.ts toolOutput), and numbers: sizes from
  // varints, a Read's limit from its end line.
  derivedWords: ['name', 'is_dir', 'size_bytes', 'path', 'entries', 'file', 'created', 'edited'],
  derivedNumbers: true,
  mayHold: (sessions, needles) =>
    sessionsHolding(sessions, [{ table: 'steps' }], needles, (locator) => ({ file: locator })),
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
