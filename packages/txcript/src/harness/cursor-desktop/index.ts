/** The Cursor editor's agent sessions (`cursor_desktop`): rows of its global `state.vscdb`. */
import { HARNESS_NAMES } from '../listing.ts';
import { splitCommandTemplate } from '../resume-command.ts';
import { assertSafeSessionId } from '../session-id.ts';
import { sessionsHolding } from '../sqlite-text-check.ts';
import type { Harness } from '../types.ts';
import { desktopCodec } from './codec.ts';
import { desktopText, type DesktopRecords } from './records.ts';
import { cursorDesktopStore } from './store.ts';

export const cursorDesktop: Harness<DesktopRecords> = {
  id: 'cursor_desktop',
  aliases: HARNESS_NAMES.cursor_desktop,
  text: desktopText,
  codec: desktopCodec,
  store: cursorDesktopStore,
  // A session's rows: its header, and every key-value row whose key names it (store.ts readDesktopSession).
  mayHold: (sessions, needles) =>
    sessionsHolding(
      sessions,
      [
        { table: 'composerHeaders', sessionColumn: 'composerId' },
        {
          table: 'cursorDiskKV',
          keyedBy: {
            column: 'key',
            sessions: (key, ids) => (key.startsWith('agentKv:') ? [] : ids.filter((id) => key.includes(id))),
          },
        },
      ],
      needles,
    ),
};

/** Env var holding a resume command template, e.g. `cursor --new-window {id}`. */
export const CURSOR_DESKTOP_RESUME_ENV = 'TXCRIPT_CURSOR_DESKTOP_RESUME';

/**
 * argv that opens the editor on the session's folder (run there): the editor
 * takes no session id; the session is in its Agents sidebar. Or the template
 * in TXCRIPT_CURSOR_DESKTOP_RESUME, `{id}` replaced.
 */
export function resumeCommand(id: string, env: NodeJS.ProcessEnv = process.env): string[] {
  assertSafeSessionId(id, 'cursor_desktop');
  const template = env[CURSOR_DESKTOP_RESUME_ENV];
  if (template === undefined || template.trim() === '') return ['cursor', '.'];
  return splitCommandTemplate(template, CURSOR_DESKTOP_RESUME_ENV).map((w) => w.split('{id}').join(id));
}

export { commonToolToDesktop, desktopCodec, desktopToolToCommon } from './codec.ts';
export {
  desktopDocument,
  desktopSession,
  desktopText,
  type DesktopRecords,
  type DesktopSession,
} from './records.ts';
export {
  CURSOR_DESKTOP_USER_DIR_ENV,
  cursorDesktopStore,
  cursorDesktopUserDir,
  readDesktopSession,
  stateDbPath,
  writeDesktopSession,
} from './store.ts';
