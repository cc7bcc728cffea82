/** The Codex harness (`codex`): `~/.codex/sessions/YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl`. */
import { resumeArgv } from '../resume-command.ts';
import { HARNESS_NAMES } from '../listing.ts';
import type { Harness } from '../types.ts';
import { codexCodec, codexLines, readCodexCommon } from './codec.ts';
import { renderJsonlPieces } from '../jsonl.ts';
import { codexText, type CodexLine } from './records.ts';
import { codexStore } from './store.ts';

export const codex: Harness<CodexLine[]> = {
  id: 'codex',
  aliases: HARNESS_NAMES.codex,
  text: codexText,
  codec: codexCodec,
  store: codexStore,
  readCommon: readCodexCommon,
  renderCommon: (transcript) => renderJsonlPieces(codexLines(transcript)),
  // Checked (docs/formats/codex.md, "Search"): every text the codec reads is a JSON string or number of the rollout.
  textInSource: true,
  // Each response item (or shown event) is one message (codec.ts `RolloutConversation.add`).
  messageInOneLine: true,
  // The name a call without one is given.
  derivedWords: ['custom_tool'],
};

/** Env var holding a resume command template, e.g. `mytool --open {id}`. */
export const CODEX_RESUME_ENV = 'TXCRIPT_CODEX_RESUME';

/** argv that reopens a session: `codex resume <id>`, or the template in TXCRIPT_CODEX_RESUME. Run it in the session's cwd. */
export function resumeCommand(id: string, env: NodeJS.ProcessEnv = process.env): string[] {
  return resumeArgv(id, env, CODEX_RESUME_ENV, ['codex', 'resume'], 'codex');
}

export { codexCodec, DEFAULT_CODEX_VERSION } from './codec.ts';
export { codexText, type CodexLine, type CodexRecord, type RolloutLine } from './records.ts';
export { codexRoots, codexStore, rolloutFileName, type CodexRoots } from './store.ts';
