/**
 * Continue a conversation in another harness: give it a FRESH session id,
 * then write it where that harness keeps sessions (or, with `out`, into a
 * folder laid out like that harness's store root). The source is never
 * touched: the transcript is a value read earlier.
 *
 * - `grok_bot`: a live mint through the box gateway (grok-bot-mint.ts), or
 *   with `out` a JSONL-only export `<out>/<id>/<id>.jsonl` (the
 *   agent-transcripts layout; point `TXCRIPT_GROK_BOT_ROOT` at `<out>`).
 * - `claude_code`: `<out or $CLAUDE_CONFIG_DIR>/projects/<project>/<id>.jsonl`.
 * - `codex`: `<out or $CODEX_HOME>/sessions/YYYY/MM/DD/rollout-…-<id>.jsonl`.
 * - `pi`, `campfire`: `<out or $PI_CODING_AGENT_DIR>/sessions/--<cwd>--/<start>_<id>.jsonl`
 *   (`CAMPFIRE_CODING_AGENT_DIR` for campfire).
 * - `cursor`: `<out or $CURSOR_CONFIG_DIR or ~/.cursor>/chats/<md5(cwd)>/<id>/store.db`.
 * - `cursor_desktop`: rows in `<out or $CURSOR_DESKTOP_USER_DIR>/globalStorage/state.vscdb`.
 * - `antigravity`: `<out or $TXCRIPT_ANTIGRAVITY_ROOT or ~/.gemini/antigravity-cli>/conversations/<id>.db`
 *   and `brain/<id>/`.
 * - `cowork`: `<account tree>/local_<id>.json` and its folder, under the app's
 *   sessions root, or `<out>/<nil uuid>/<nil uuid>/`.
 *
 * Launching the resume command is the caller's decision (`resumeCommandFor`).
 */
import { randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { JsonObject, Transcript } from '../model/common.ts';
import { resumeCommand as claudeResume } from '../harness/claude-code/index.ts';
import { resumeCommand as codexResume } from '../harness/codex/index.ts';
import { resumeCommand as piResume } from '../harness/pi/index.ts';
import { resumeCommand as campfireResume } from '../harness/campfire/index.ts';
import { resumeCommand as openCodeResume } from '../harness/opencode/index.ts';
import { resumeCommand as grokResume } from '../harness/grok/index.ts';
import { resumeCommand as cursorResume } from '../harness/cursor/index.ts';
import { resumeCommand as cursorDesktopResume } from '../harness/cursor-desktop/index.ts';
import { resumeCommand as coworkResume } from '../harness/cowork/index.ts';
import { resumeCommand as antigravityResume } from '../harness/antigravity/index.ts';
import type { Harness } from '../harness/types.ts';
import { withBoxTools } from './box-tools.ts';
import { type MintOptions, type MintResult, mintGrokBotAgent } from './grok-bot-mint.ts';
import { shellWord } from './launch.ts';
import { metadataString } from './metadata.ts';

const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** What `continue` knows about each harness it can write into. */
interface TargetSpec {
  /** Environment that makes the harness's store write under `dir`, whatever the user's env says. */
  outEnv(dir: string): NodeJS.ProcessEnv;
  /** The variable a user points at an `out` folder to use it. */
  outVariable: string;
  /** What to run to use an export, when pointing a variable at it is not how (default `VAR=dir`). */
  outUse?: (dir: string, file: string) => string;
  /** argv that reopens a saved session; absent when the harness is not launched (grok_bot mints instead). */
  resume?: (id: string, env: NodeJS.ProcessEnv) => string[];
}

const TARGETS: Readonly<Record<string, TargetSpec>> = {
  grok_bot: {
    outEnv: (dir) => ({ TXCRIPT_GROK_BOT_ROOT: dir }),
    outVariable: 'TXCRIPT_GROK_BOT_ROOT',
  },
  claude_code: {
    // An empty value counts as unset, so the explicit root cannot win over the folder.
    outEnv: (dir) => ({ CLAUDE_CONFIG_DIR: dir, TXCRIPT_CLAUDE_CODE_ROOT: '' }),
    outVariable: 'CLAUDE_CONFIG_DIR',
    resume: claudeResume,
  },
  codex: {
    outEnv: (dir) => ({ CODEX_HOME: dir, TXCRIPT_CODEX_ROOT: '' }),
    outVariable: 'CODEX_HOME',
    resume: codexResume,
  },
  pi: {
    outEnv: (dir) => ({ PI_CODING_AGENT_DIR: dir, PI_CODING_AGENT_SESSION_DIR: '' }),
    outVariable: 'PI_CODING_AGENT_DIR',
    resume: piResume,
  },
  campfire: {
    outEnv: (dir) => ({ CAMPFIRE_CODING_AGENT_DIR: dir, CAMPFIRE_CODING_AGENT_SESSION_DIR: '' }),
    outVariable: 'CAMPFIRE_CODING_AGENT_DIR',
    resume: campfireResume,
  },
  grok: {
    outEnv: (dir) => ({ GROK_HOME: dir }),
    outVariable: 'GROK_HOME',
    resume: grokResume,
  },
  opencode: {
    // OpenCode writes its own database (`opencode import`); an export is the document to import by hand.
    outEnv: (dir) => ({ TXCRIPT_OPENCODE_EXPORT_DIR: dir }),
    outVariable: 'TXCRIPT_OPENCODE_EXPORT_DIR',
    outUse: (_dir, file) => `opencode import ${shellWord(file)}`,
    resume: openCodeResume,
  },
  cursor: {
    outEnv: (dir) => ({ CURSOR_CONFIG_DIR: dir, TXCRIPT_CURSOR_ROOT: '' }),
    outVariable: 'CURSOR_CONFIG_DIR',
    resume: cursorResume,
  },
  cursor_desktop: {
    outEnv: (dir) => ({ CURSOR_DESKTOP_USER_DIR: dir }),
    outVariable: 'CURSOR_DESKTOP_USER_DIR',
    resume: cursorDesktopResume,
  },
  antigravity: {
    outEnv: (dir) => ({ TXCRIPT_ANTIGRAVITY_ROOT: dir }),
    outVariable: 'TXCRIPT_ANTIGRAVITY_ROOT',
    // The CLI reads ~/.gemini/antigravity-cli alone: an export is copied there to be resumed.
    outUse: (dir) => `cp -r ${shellWord(dir)}/. ~/.gemini/antigravity-cli/`,
    resume: antigravityResume,
  },
  cowork: {
    // An export has no account of the app's: it goes under a placeholder account tree.
    outEnv: (dir) => ({ COWORK_SESSIONS_DIR: dir, TXCRIPT_COWORK_ACCOUNT: `${NIL_UUID}/${NIL_UUID}` }),
    outVariable: 'COWORK_SESSIONS_DIR',
    resume: coworkResume,
  },
};

/** Harness ids `continue` can write into, in a stable order (for messages). */
export const CONTINUE_TARGET_IDS: readonly string[] = Object.keys(TARGETS);

/** The target cannot take a continued session (Simple, or a harness without a store). */
export class ContinueTargetError extends Error {
  override readonly name = 'ContinueTargetError';
}

export interface ContinueOptions {
  env?: NodeJS.ProcessEnv;
  /** Merged `--metadata`: `name` / `description` (grok_bot agent); `name` is the title elsewhere. */
  metadata?: JsonObject;
  /** Write into this folder, laid out as the target's store root, instead of the live store. */
  out?: string;
  /** The folder the user is in: the session's cwd when it has none (or one that does not exist here). */
  cwd?: string;
  /** Whether the caller will launch the resume command (decides what happens to a cwd missing here). */
  willLaunch?: boolean;
  /** Fresh session ids (tests pin them). */
  newId?: () => string;
  /** Passed to the grok_bot mint. */
  mint?: Omit<MintOptions, 'env' | 'metadata'>;
}

export type ContinueResult =
  | { kind: 'minted'; harness: string; id: string; mint: MintResult }
  | {
      kind: 'saved';
      harness: string;
      id: string;
      /** The file written. */
      locator: string;
      /** The folder the session belongs to (its cwd); the resume command runs there. */
      cwd: string;
      /** The session's own cwd when it does not exist here and `cwd` replaced it. */
      movedFrom?: string;
      /** Set for an `out` export: the folder, and how to use it (`VAR=dir`, or a command). */
      out?: { dir: string; variable: string; use: string };
    };

/** The spec of a harness `continue` can write into, or a ContinueTargetError saying why not. */
function targetSpec(harness: Harness): TargetSpec {
  if (harness.id === 'simple') {
    throw new ContinueTargetError(
      'a Simple document has no managed location to continue in; write one with "txcript export <session> --out FILE"',
    );
  }
  const spec = TARGETS[harness.id];
  if (spec === undefined || harness.store === undefined) {
    throw new ContinueTargetError(
      `continuing into ${harness.id} is not supported; continue into one of: ${CONTINUE_TARGET_IDS.join(', ')}`,
    );
  }
  return spec;
}

/** Throws ContinueTargetError when `harness` cannot be continued into. */
export function assertContinueTarget(harness: Harness): void {
  targetSpec(harness);
}

/** The argv that resumes a session saved into `harness`, or undefined when it has none. */
export function resumeCommandFor(harness: Harness, id: string, env: NodeJS.ProcessEnv): string[] | undefined {
  return TARGETS[harness.id]?.resume?.(id, env);
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The session as the target gets it: a fresh id, a cwd, and the `name`
 * metadata as its title. Nothing else changes here; each target's codec
 * makes its own repairs (orphan tool results for claude_code and codex).
 */
async function prepare(
  transcript: Transcript,
  id: string,
  options: ContinueOptions,
): Promise<{ transcript: Transcript; cwd: string; movedFrom?: string }> {
  const here = resolve(options.cwd ?? process.cwd());
  const own = transcript.meta.cwd;
  let cwd = here;
  let movedFrom: string | undefined;
  if (own !== undefined && own !== '') {
    // An export may be for another machine: it keeps its folder. A launch runs here, so the
    // session must belong here too (Claude Code files a session under its folder).
    if (options.willLaunch !== true || (await isDirectory(own))) cwd = own;
    else movedFrom = own;
  }
  const title = metadataString(options.metadata ?? {}, 'name') ?? transcript.meta.title;
  return {
    transcript: {
      meta: { ...transcript.meta, id, cwd, ...(title !== undefined ? { title } : {}) },
      messages: transcript.messages,
    },
    cwd,
    ...(movedFrom !== undefined ? { movedFrom } : {}),
  };
}

/** Continue `transcript` in `harness` as a new session (see the module comment). */
export async function continueSession(
  transcript: Transcript,
  harness: Harness,
  options: ContinueOptions = {},
): Promise<ContinueResult> {
  const spec = targetSpec(harness);
  const env = options.env ?? process.env;
  if (harness.id === 'grok_bot' && options.out === undefined) {
    const mint = await mintGrokBotAgent(transcript, {
      ...options.mint,
      env,
      ...(options.metadata !== undefined ? { metadata: options.metadata } : {}),
    });
    return { kind: 'minted', harness: harness.id, id: mint.id, mint };
  }
  const id = (options.newId ?? randomUUID)();
  // A Grok Bot export (--out) is read by the box: its tool calls under the box's names.
  const prepared = await prepare(
    harness.id === 'grok_bot' ? withBoxTools(transcript) : transcript,
    id,
    options,
  );
  const out = options.out === undefined ? undefined : resolve(options.out);
  const storeEnv = out === undefined ? env : { ...env, ...spec.outEnv(out) };
  const store = harness.store!(storeEnv);
  if (store.save === undefined) {
    throw new ContinueTargetError(`the ${harness.id} store cannot save sessions`);
  }
  const saved = await store.save(prepared.transcript);
  return {
    kind: 'saved',
    harness: harness.id,
    id: saved.id,
    locator: saved.locator,
    cwd: prepared.cwd,
    ...(prepared.movedFrom !== undefined ? { movedFrom: prepared.movedFrom } : {}),
    ...(out !== undefined
      ? {
          out: {
            dir: out,
            variable: spec.outVariable,
            use: spec.outUse?.(out, saved.locator) ?? `${spec.outVariable}=${shellWord(out)}`,
          },
        }
      : {}),
  };
}
