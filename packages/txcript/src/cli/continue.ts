/**
 * `txcript continue <id|file|->[#range] [--with H] [--from H] [--out DIR]
 * [--no-resume] [--metadata k=v | JSON]...`: carry a session into a harness
 * as a NEW session, then (claude_code, codex) open it there.
 *
 * The source is a session id (resolved across stores as `view` does), a file
 * read with `--from`'s text codec (default simple), or `-` for stdin. The
 * work itself is `continueSession` (src/continue/); this module reads the
 * source, reports what was done and launches the resume command.
 */
import { stat } from 'node:fs/promises';
import type { Harness } from '../harness/types.ts';
import type { Transcript } from '../model/common.ts';
import {
  CONTINUE_TARGET_IDS,
  assertContinueTarget,
  ContinueTargetError,
  continueSession,
  resumeCommandFor,
  type ContinueResult,
} from '../continue/continue-session.ts';
import { MintError } from '../continue/grok-bot-mint.ts';
import { launch, shellLine, shellWord } from '../continue/launch.ts';
import { MetadataError, parseMetadata } from '../continue/metadata.ts';
import type { JsonObject } from '../model/common.ts';
import type { CliContext } from './context.ts';
import { errorMessage as message } from '../error-text.ts';
import { documentLabel, readDocumentAsCommon } from './document.ts';
import { CliError, EXIT_OK, EXIT_RUNTIME, usageError } from './errors.ts';
import { type RangeSpec, selectRange, splitTarget } from './range.ts';
import { openSession } from './show.ts';

export interface ContinueCommandOptions {
  with?: string;
  from?: string;
  out?: string;
  /** False with `--no-resume`. */
  resume: boolean;
  metadata: string[];
}

/** How a continued agent's description names the harness its session began in. */
const HARNESS_TITLES: Readonly<Record<string, string>> = {
  claude_code: 'Claude Code',
  codex: 'Codex',
  grok_bot: 'another Grok Bot agent',
  grok: 'the Grok CLI',
  opencode: 'OpenCode',
  pi: 'pi',
  campfire: 'Campfire',
  amp: 'Amp',
};

interface Source {
  transcript: Transcript;
  /** The harness the session came from, when it names one (not a Simple document). */
  harness?: Harness;
  /** For messages: the file, `<stdin>`, or `<harness> session <id>`. */
  label: string;
  /** Read from stdin: the terminal is not there for a resumed program. */
  fromStdin: boolean;
  /** A whole Grok Bot session: its agent id, so a mint copies its ledger and files (grok-bot-copy.ts). */
  grokBotAgent?: string;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** `-`, a path, or a session id, each with an optional `#range`. Session ids never contain a separator. */
async function classify(
  arg: string,
): Promise<{ kind: 'stdin' | 'file'; path: string; range?: RangeSpec } | { kind: 'session' }> {
  if (arg === '-') return { kind: 'stdin', path: '-' };
  if (await isFile(arg)) return { kind: 'file', path: arg };
  const { id, range } = splitTarget(arg);
  const ranged = range !== undefined ? { range } : {};
  if (id === '-') return { kind: 'stdin', path: '-', ...ranged };
  if (id !== arg && (await isFile(id))) return { kind: 'file', path: id, ...ranged };
  if (id.includes('/') || id.includes('\\')) return { kind: 'file', path: id, ...ranged };
  return { kind: 'session' };
}

/** A document in `--from`'s native text (default Simple), from a file or stdin. */
async function readDocument(
  ctx: CliContext,
  path: string,
  range: RangeSpec | undefined,
  from: string | undefined,
): Promise<Source> {
  const codecHarness = await ctx.findHarness(from ?? 'simple');
  const transcript = await readDocumentAsCommon(ctx, path, codecHarness, {
    what: 'the session to continue',
    todo: 'give a readable file, a session id ("txcript list" shows them), or - for stdin',
  });
  const selection = selectRange(range, transcript.messages);
  return {
    transcript: {
      meta: transcript.meta,
      messages: transcript.messages.slice(selection.start, selection.end),
    },
    ...(codecHarness.id !== 'simple' ? { harness: codecHarness } : {}),
    label: documentLabel(path),
    fromStdin: path === '-',
  };
}

async function readSource(ctx: CliContext, arg: string, from: string | undefined): Promise<Source> {
  const kind = await classify(arg);
  if (kind.kind !== 'session') return readDocument(ctx, kind.path, kind.range, from);
  const { found, transcript, selection } = await openSession(ctx, arg, from);
  return {
    transcript: {
      meta: transcript.meta,
      messages: transcript.messages.slice(selection.start, selection.end),
    },
    harness: found.harness,
    label: `${found.harness.id} session ${found.summary.id}`,
    fromStdin: false,
    ...(found.harness.id === 'grok_bot' &&
    selection.start === 0 &&
    selection.end === transcript.messages.length
      ? { grokBotAgent: found.summary.id }
      : {}),
  };
}

/** `--with`, or the source's own harness; a usage error when neither names a target. */
async function targetHarness(
  ctx: CliContext,
  withName: string | undefined,
  source: Source,
): Promise<Harness> {
  const harness = withName !== undefined ? await ctx.findHarness(withName) : source.harness;
  if (harness === undefined) {
    throw usageError({
      what: `where should ${source.label} continue?`,
      todo: `add --with and one of: ${CONTINUE_TARGET_IDS.join(', ')}`,
    });
  }
  checkTarget(harness, withName ?? harness.id);
  return harness;
}

function checkTarget(harness: Harness, asked: string): void {
  try {
    assertContinueTarget(harness);
  } catch (err) {
    if (err instanceof ContinueTargetError) throw usageError({ what: err.message, where: `--with ${asked}` });
    throw err;
  }
}

function metadataOf(args: readonly string[]): JsonObject {
  try {
    return parseMetadata(args);
  } catch (err) {
    if (err instanceof MetadataError) {
      throw usageError({
        what: err.message,
        todo: 'write --metadata key=value or --metadata \'{"key":"value"}\'',
      });
    }
    throw err;
  }
}

function report(ctx: CliContext, result: ContinueResult, source: Source, messages: number): void {
  const out = (line: string) => ctx.io.stdout.write(`${line}\n`);
  const { bold } = ctx.out;
  if (result.kind === 'minted') {
    const m = result.mint;
    out(`${bold('continued')} ${source.label} (${messages} messages) into grok_bot as a new agent`);
    out(`  agent:   ${m.id}  "${m.name}"`);
    out(`  entries: ${m.entries} ledger entries in ${m.storePath}`);
    out(`  jsonl:   ${m.jsonlPath}`);
    return;
  }
  out(`${bold('continued')} ${source.label} (${messages} messages) into ${result.harness} as a new session`);
  out(`  session: ${result.id}`);
  out(`  file:    ${result.locator}`);
  if (result.out !== undefined) {
    out(`  use it:  ${result.out.use}`);
  }
}

/** What to suggest when writing the new session failed (a mint error already says it). */
function failureAdvice(err: unknown, harness: Harness, out: string | undefined): { todo?: string } {
  if (out !== undefined) return { todo: 'check that --out names a folder you can write' };
  if (err instanceof MintError) return {};
  if (harness.id === 'grok_bot') {
    return { todo: 'is the box running ("sendbox serve")? or use --out DIR for a JSONL-only export' };
  }
  return { todo: `check that the ${harness.id} store is writable, or use --out DIR` };
}

/** Runs the command; resolves to the exit code (the resume command's own, when one ran). */
export async function continueCommand(
  ctx: CliContext,
  sourceArg: string,
  options: ContinueCommandOptions,
): Promise<number> {
  // The command line first: a usage error never waits for a scan or a read.
  const asked = options.with !== undefined ? await ctx.findHarness(options.with) : undefined;
  if (asked !== undefined) checkTarget(asked, options.with!);
  const metadata = metadataOf(options.metadata);

  const source = await readSource(ctx, sourceArg, options.from);
  const harness = asked ?? (await targetHarness(ctx, undefined, source));
  const willLaunch = options.resume && options.out === undefined && harness.id !== 'grok_bot';

  let result: ContinueResult;
  try {
    result = await continueSession(source.transcript, harness, {
      env: ctx.io.env,
      metadata,
      willLaunch,
      ...(options.out !== undefined ? { out: options.out } : {}),
      mint: {
        onWarning: (m) => ctx.warn({ source: 'grok_bot', message: m }),
        ...(source.harness !== undefined
          ? { origin: HARNESS_TITLES[source.harness.id] ?? source.harness.id }
          : {}),
        ...(source.grokBotAgent !== undefined ? { fromAgent: source.grokBotAgent } : {}),
      },
    });
  } catch (err) {
    throw new CliError({
      what: `could not continue ${source.label} in ${harness.id}: ${message(err)}`,
      ...(options.out !== undefined ? { where: `--out ${options.out}` } : {}),
      ...failureAdvice(err, harness, options.out),
    });
  }
  report(ctx, result, source, source.transcript.messages.length);
  if (result.kind !== 'saved' || !willLaunch) return EXIT_OK;

  const argv = resumeCommandFor(harness, result.id, ctx.io.env);
  if (argv === undefined) return EXIT_OK;
  if (result.movedFrom !== undefined) {
    ctx.warn({
      source: result.locator,
      message: `the session's folder ${result.movedFrom} does not exist here; it continues in ${result.cwd}`,
    });
  }
  const byHand = `cd ${shellWord(result.cwd)} && ${shellLine(argv)}`;
  if (source.fromStdin) {
    // The session came through stdin, which is used up: an interactive program would read EOF.
    ctx.io.stderr.write(`txcript: not launching (the session came from stdin); to open it, run: ${byHand}\n`);
    return EXIT_OK;
  }
  ctx.io.stderr.write(`txcript: launching ${shellLine(argv)} (in ${result.cwd})\n`);
  let outcome;
  try {
    outcome = await launch(argv, result.cwd, { env: ctx.io.env });
  } catch (err) {
    throw new CliError({
      what: `could not start ${shellWord(argv[0] ?? '')}: ${message(err)}`,
      where: `session ${result.id} saved to ${result.locator}`,
      todo: `run it by hand: ${byHand}`,
    });
  }
  if (outcome.kind === 'not-found') {
    throw new CliError({
      what: `${shellWord(outcome.program)} is not installed or not on PATH, so the session was not opened`,
      where: `session ${result.id} saved to ${result.locator}`,
      todo: `install it, then run: ${byHand}`,
      exitCode: EXIT_RUNTIME,
    });
  }
  return outcome.code;
}
