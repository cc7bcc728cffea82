/** The Claude Code harness (`claude_code`): `~/.claude/projects/<project>/<session>.jsonl`. */
import { HARNESS_NAMES } from '../listing.ts';
import type { Harness } from '../types.ts';
import { claudeCodeCodec, readClaudeCommon, streamClaudeCommon } from './codec.ts';
import { resumeArgv } from '../resume-command.ts';
import { claudeCodeText, type ClaudeLine } from './records.ts';
import { claudeCodeStore } from './store.ts';

export const claudeCode: Harness<ClaudeLine[]> = {
  id: 'claude_code',
  aliases: HARNESS_NAMES.claude_code,
  text: claudeCodeText,
  codec: claudeCodeCodec,
  store: claudeCodeStore,
  readCommon: readClaudeCommon,
  streamCommon: streamClaudeCommon,
  textInSource: true,
  // One entry line, one message (codec.ts `Conversation.add`): a local command's output too.
  messageInOneLine: true,
};

/** Env var holding a resume command template, e.g. `mytool --open {id}`. */
export const CLAUDE_CODE_RESUME_ENV = 'TXCRIPT_CLAUDE_CODE_RESUME';

/** argv that reopens a session: `claude --resume <id>`, or the template in TXCRIPT_CLAUDE_CODE_RESUME. Run it in the session's cwd. */
export function resumeCommand(id: string, env: NodeJS.ProcessEnv = process.env): string[] {
  return resumeArgv(id, env, CLAUDE_CODE_RESUME_ENV, ['claude', '--resume'], 'claude_code');
}

export { claudeCodeCodec, DEFAULT_CLAUDE_VERSION } from './codec.ts';
export type { WarningContext } from '../types.ts';
export {
  claudeCodeText,
  type ClaudeEntry,
  type ClaudeLine,
  type ClaudeRecord,
  type ClaudeSummary,
} from './records.ts';
export { claudeCodeStore, claudeProjectDirName, claudeProjectsRoot } from './store.ts';
