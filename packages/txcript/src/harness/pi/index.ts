/** The pi harness (`pi`): `~/.pi/agent/sessions/--<cwd>--/<start>_<uuid>.jsonl`, an entry tree per file. */
import { renderJsonlPieces } from '../jsonl.ts';
import { HARNESS_NAMES } from '../listing.ts';
import { resumeArgv } from '../resume-command.ts';
import type { Harness } from '../types.ts';
import { piCodec, piLines } from './codec.ts';
import { piText, type PiLine } from './records.ts';
import { piFamilyStore, type PiBrand } from './store.ts';

/** A harness that writes pi's session files under its own brand (pi itself, Campfire). */
export function piFamilyHarness(brand: PiBrand, aliases: readonly string[]): Harness<PiLine[]> {
  return {
    id: brand.harness,
    aliases,
    text: piText,
    codec: piCodec,
    store: (env) => piFamilyStore(brand, env),
    renderCommon: (transcript) => renderJsonlPieces(piLines(transcript)),
    // Every text is an entry's JSON string, each message made from one entry line (codec.ts
    // `toCommon`; a `!command` makes two, from its line). What the codec makes up: an image's
    // Common source keys in a tool result, and a bash timeout in milliseconds.
    textInSource: true,
    messageInOneLine: true,
    derivedWords: ['source', 'media_type', 'base64'],
    derivedNumbers: true,
  };
}

export const pi: Harness<PiLine[]> = piFamilyHarness(
  { harness: 'pi', configDir: '.pi', envPrefix: 'PI' },
  HARNESS_NAMES.pi,
);

/** Env var holding a resume command template, e.g. `mytool --open {id}`. */
export const PI_RESUME_ENV = 'TXCRIPT_PI_RESUME';

/** argv that reopens a session: `pi --session <id>` (pi takes an id or a file), or the template in TXCRIPT_PI_RESUME. */
export function resumeCommand(id: string, env: NodeJS.ProcessEnv = process.env): string[] {
  return resumeArgv(id, env, PI_RESUME_ENV, ['pi', '--session'], 'pi');
}

export { piCodec, piLines, providerOf } from './codec.ts';
export { piText, type PiLine, type PiRecord } from './records.ts';
export {
  PI_BRAND,
  piFamilyStore,
  piFileName,
  piProjectFolder,
  piSessionsDir,
  piStore,
  type PiBrand,
} from './store.ts';
export { commonToolToPi, piToolToCommon } from './tools.ts';
