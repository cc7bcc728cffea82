/**
 * The Grok CLI harness (`grok`, xAI's terminal agent; not `grok_bot`):
 * `~/.grok/sessions/<workspace>/<uuid>/` with a model log, a display log and
 * a summary. Its native text (for `convert`) is the model log alone, which
 * holds no images and no failure flags: a session written whole goes
 * through the store.
 */
import { HARNESS_NAMES } from '../listing.ts';
import { resumeArgv } from '../resume-command.ts';
import type { Harness } from '../types.ts';
import { grokCodec } from './codec.ts';
import { grokText, type GrokSession } from './records.ts';
import { grokTextFiles, grokStore } from './store.ts';

export const grok: Harness<GrokSession> = {
  id: 'grok',
  aliases: HARNESS_NAMES.grok,
  text: grokText,
  codec: grokCodec,
  textInSource: true,
  textFiles: grokTextFiles,
  store: grokStore,
};

export const GROK_RESUME_ENV = 'TXCRIPT_GROK_RESUME';

/** argv that reopens a session: `grok --resume <id>`, or the template in TXCRIPT_GROK_RESUME. */
export function resumeCommand(id: string, env: NodeJS.ProcessEnv = process.env): string[] {
  return resumeArgv(id, env, GROK_RESUME_ENV, ['grok', '--resume'], 'grok');
}

export { grokCodec, grokLines } from './codec.ts';
export {
  grokText,
  parseChatHistory,
  parseSummary,
  parseUpdates,
  type GrokLine,
  type GrokSession,
} from './records.ts';
export { CHAT_HISTORY, SUMMARY, UPDATES, grokSessionsDir, grokStore, grokWorkspaceFolder } from './store.ts';
export { commonToolToGrok, grokToolToCommon } from './tools.ts';
