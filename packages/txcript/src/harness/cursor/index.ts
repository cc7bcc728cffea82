/** The Cursor CLI harness (`cursor`): `~/.cursor/chats/<md5 of the workspace>/<session>/store.db`. */
import { join } from 'node:path';
import { HARNESS_NAMES } from '../listing.ts';
import { resumeArgv } from '../resume-command.ts';
import { assertSafeSessionId } from '../session-id.ts';
import { sessionsHolding } from '../sqlite-text-check.ts';
import type { Harness } from '../types.ts';
import { cursorCodec } from './codec.ts';
import { cursorText, type CursorRecords } from './records.ts';
import { cursorStore } from './store.ts';

export const cursor: Harness<CursorRecords> = {
  id: 'cursor',
  aliases: HARNESS_NAMES.cursor,
  text: cursorText,
  codec: cursorCodec,
  store: cursorStore,
  // A chat folder's store.db holds that chat alone: its JSON blobs are the conversation.
  mayHold: (sessions, needles) =>
    sessionsHolding(sessions, [{ table: 'blobs' }, { table: 'meta' }], needles, (dir) => ({
      file: join(dir, 'store.db'),
    })),
};

/** Env var holding a resume command template, e.g. `mytool --open {id}`. */
export const CURSOR_RESUME_ENV = 'TXCRIPT_CURSOR_RESUME';

/** argv that reopens a session: `agent --resume=<id>` (the CLI takes the id glued to its flag), or the template in TXCRIPT_CURSOR_RESUME. Run it in the session's cwd. */
export function resumeCommand(id: string, env: NodeJS.ProcessEnv = process.env): string[] {
  if (env[CURSOR_RESUME_ENV]?.trim()) return resumeArgv(id, env, CURSOR_RESUME_ENV, [], 'cursor');
  assertSafeSessionId(id, 'cursor');
  return ['agent', `--resume=${id}`];
}

export { agentRecord, cursorCodec } from './codec.ts';
export { cursorDb, cursorDocument, cursorText, type CursorDb, type CursorRecords } from './records.ts';
export { CURSOR_ROOT_ENV, cursorChatsRoots, cursorStore, readCursorDb, workspaceHash } from './store.ts';
export { commonToolToCursor, cursorToolToCommon } from './tools.ts';
