/**
 * The OpenCode harness (`opencode`): one SQLite database for every session;
 * a session's native text is the document `opencode export` prints.
 */
import { HARNESS_NAMES } from '../listing.ts';
import { resumeArgv } from '../resume-command.ts';
import { sessionsHolding } from '../sqlite-text-check.ts';
import type { Harness } from '../types.ts';
import { openCodeCodec } from './codec.ts';
import { openCodeText, type OpenCodeExport } from './records.ts';
import { openCodeStore } from './store.ts';

export const openCode: Harness<OpenCodeExport> = {
  id: 'opencode',
  aliases: HARNESS_NAMES.opencode,
  text: openCodeText,
  codec: openCodeCodec,
  store: openCodeStore,
  mayHold: (sessions, needles) =>
    sessionsHolding(
      sessions,
      [
        { table: 'session', sessionColumn: 'id' },
        { table: 'message', sessionColumn: 'session_id' },
        { table: 'part', sessionColumn: 'session_id' },
      ],
      needles,
    ),
};

export const OPENCODE_RESUME_ENV = 'TXCRIPT_OPENCODE_RESUME';

/** argv that reopens a session: `opencode --session <id>`, or the template in TXCRIPT_OPENCODE_RESUME. */
export function resumeCommand(id: string, env: NodeJS.ProcessEnv = process.env): string[] {
  return resumeArgv(id, env, OPENCODE_RESUME_ENV, ['opencode', '--session'], 'opencode');
}

export { isPlaceholderTitle, openCodeCodec, openCodeId, openCodeSessionId } from './codec.ts';
export { openCodeText, type OpenCodeExport } from './records.ts';
export {
  OPENCODE_EXPORT_DIR_ENV,
  openCodeDbPath,
  openCodeLocator,
  openCodeStore,
  readOpenCodeExport,
} from './store.ts';
export { commonToolToOpenCode, openCodeToolToCommon } from './tools.ts';
