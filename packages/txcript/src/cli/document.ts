/**
 * A native document named on the command line (a file, or `-` for stdin),
 * read and converted to Common through one harness's text codec and codec.
 * `convert` and `continue` both start here, so a bad input reads the same
 * way in both: what was wrong, where (file:line:column when the format can
 * say), and what to do.
 */
import { TooLargeToLoadError } from '../fs/memory-budget.ts';
import { open } from 'node:fs/promises';
import { readSessionText, type SessionText } from '../harness/session-text.ts';
import { guessTextFormat, SAMPLE_BYTES, sampleOf } from '../harness/text-format.ts';
import { formatUtc, sessionIdForFile, SimpleFormatError } from '../harness/simple/index.ts';
import type { Harness, Warning } from '../harness/types.ts';
import type { Transcript } from '../model/common.ts';
import type { CliContext } from './context.ts';
import { errorMessage } from '../error-text.ts';
import { CliError } from './errors.ts';

/** How a command names its input in the read error (`the input`, `the session to continue`). */
export interface DocumentRole {
  what: string;
  /** What to do when the input cannot be read. */
  todo: string;
}

/** `<stdin>` for `-`, else the path: how warnings and errors name the input. */
export function documentLabel(path: string): string {
  return path === '-' ? '<stdin>' : path;
}

/** An error of the file system (it names a system call), as opposed to one about the text. */
function isSystemError(err: unknown): boolean {
  return err instanceof Error && typeof (err as NodeJS.ErrnoException).syscall === 'string';
}

/**
 * Read `path` (`-`: stdin) and convert it with `harness` (line by line when
 * it can, harness/session-text.ts); warnings go to the context. A document
 * with no time of its own is stamped with the time it is read.
 */
export async function readDocumentAsCommon(
  ctx: CliContext,
  path: string,
  harness: Harness,
  role: DocumentRole,
): Promise<Transcript> {
  const name = documentLabel(path);
  const readError = (err: unknown): CliError =>
    new CliError({
      what: `could not read ${role.what}: ${errorMessage(err)}`,
      where: name,
      todo: role.todo,
    });
  let input: SessionText;
  try {
    input = path === '-' ? { text: await ctx.io.readStdin() } : { file: path };
  } catch (err) {
    throw readError(err);
  }
  try {
    const { transcript, warnings } = await readSessionText(harness, input, name, {
      sessionId: sessionIdForFile(path),
      timestamp: formatUtc(ctx.io.now()),
    });
    if (transcript.messages.length === 0) await refuseIfWrongFormat(ctx, input, name, harness);
    warnings.forEach((w: Warning) => ctx.warn(w));
    return transcript;
  } catch (err) {
    if (err instanceof CliError) throw err;
    if (err instanceof TooLargeToLoadError)
      throw new CliError({ what: err.problem, where: name, todo: err.remedy });
    if (isSystemError(err)) throw readError(err);
    const likely = await likelyFormat(ctx, input, harness);
    if (likely !== undefined)
      throw new CliError({
        what: `not ${harness.id} text; it looks like ${likely.id} text`,
        where: name,
        todo: `use --from ${likely.id}`,
      });
    if (err instanceof SimpleFormatError) {
      const at = err.line === undefined ? err.source : `${err.source}:${err.line}:${err.column ?? 1}`;
      throw new CliError({
        what: err.problem,
        where: at,
        todo: `fix the document, or check --from ${harness.id}`,
      });
    }
    throw new CliError({
      what: `could not read ${harness.id} text: ${errorMessage(err)}`,
      where: name,
      todo: `check that the input is ${harness.id} text (--from)`,
    });
  }
}

/** The first SAMPLE_BYTES of the input, as text. */
async function sampleOfInput(input: SessionText): Promise<string> {
  if ('text' in input) return sampleOf(input.text);
  const handle = await open(input.file, 'r');
  try {
    const buffer = Buffer.alloc(SAMPLE_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, SAMPLE_BYTES, 0);
    // Decoded whole: a character cut at the end becomes U+FFFD on the line sampleOf drops.
    return sampleOf(buffer.subarray(0, bytesRead).toString('utf8'));
  } finally {
    await handle.close();
  }
}

/** The harness other than `harness` whose text the input looks like, when one reads messages from it. */
async function likelyFormat(
  ctx: CliContext,
  input: SessionText,
  harness: Harness,
): Promise<Harness | undefined> {
  try {
    const sample = await sampleOfInput(input);
    return sample.trim() === '' ? undefined : guessTextFormat(sample, await ctx.harnesses(), harness);
  } catch {
    return undefined; // Unreadable now: the caller's own error stands.
  }
}

/**
 * A document with text in it that `harness` reads no message from was most likely named with the
 * wrong --from: refused with one line saying what it looks like (its warnings, which only repeat
 * that, are not shown). A blank document passes as an empty session.
 */
async function refuseIfWrongFormat(
  ctx: CliContext,
  input: SessionText,
  name: string,
  harness: Harness,
): Promise<void> {
  const sample = await sampleOfInput(input);
  if (sample.trim() === '') return;
  const likely = guessTextFormat(sample, await ctx.harnesses(), harness);
  throw new CliError(
    likely === undefined
      ? {
          what: `no ${harness.id} messages in the input, and no other harness reads any from it`,
          where: name,
          todo: `check that it is a session file and that --from names its harness`,
        }
      : {
          what: `no ${harness.id} messages in the input; it looks like ${likely.id} text`,
          where: name,
          todo: `use --from ${likely.id}`,
        },
  );
}
