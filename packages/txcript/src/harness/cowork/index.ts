/** Cowork (`cowork`): the Claude desktop app's local agent sessions, Claude Code transcripts under the app's records. */
import { HARNESS_NAMES } from '../listing.ts';
import { splitCommandTemplate } from '../resume-command.ts';
import { assertSafeSessionId } from '../session-id.ts';
import type { Harness } from '../types.ts';
import { coworkCodec } from './codec.ts';
import { coworkText, type CoworkRecords } from './records.ts';
import { coworkTextFiles, coworkStore } from './store.ts';

export const cowork: Harness<CoworkRecords> = {
  id: 'cowork',
  aliases: HARNESS_NAMES.cowork,
  text: coworkText,
  codec: coworkCodec,
  textInSource: true,
  textFiles: coworkTextFiles,
  store: coworkStore,
};

export const COWORK_RESUME_ENV = 'TXCRIPT_COWORK_RESUME';

/**
 * argv that opens the Claude desktop app, which lists the session under
 * Cowork after it restarts (it takes no session id), or the template in
 * TXCRIPT_COWORK_RESUME, `{id}` replaced.
 */
export function resumeCommand(
  id: string,
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string[] {
  assertSafeSessionId(id, 'cowork');
  const template = env[COWORK_RESUME_ENV];
  if (template !== undefined && template.trim() !== '')
    return splitCommandTemplate(template, COWORK_RESUME_ENV).map((w) => w.split('{id}').join(id));
  return platform === 'darwin' ? ['open', '-a', 'Claude'] : ['Claude'];
}

export { cliSessionIdFor, coworkCodec, coworkSessionId } from './codec.ts';
export { coworkSession, coworkText, type CoworkRecords } from './records.ts';
export { COWORK_ACCOUNT_ENV, COWORK_SESSIONS_ENV, coworkRoot, coworkStore } from './store.ts';
