/**
 * A native document named on the command line (a file, or `-` for stdin),
 * read and converted to Common through one harness's text codec and codec.
 * `convert` and `continue` both start here, so a bad input reads the same
 * way in both: what was wrong, where (file:line:column when the format can
 * say), and what to do.
 */
import { TooLargeToLoadError } from '../fs/memory-budget.ts';
import { readSessionText, type SessionText } from '../harness/session-text.ts';
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
    warnings.forEach((w: Warning) => ctx.warn(w));
    return transcript;
  } catch (err) {
    if (err instanceof TooLargeToLoadError)
      throw new CliError({ what: err.problem, where: name, todo: err.remedy });
    if (isSystemError(err)) throw readError(err);
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
