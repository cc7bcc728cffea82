/**
 * `txcript convert <file|-> --from H --to H`: native text of one harness to
 * native text of another, through Common. Warnings go to stderr, the result
 * to stdout, written as it is made (harness/session-text.ts).
 */
import type { CliContext } from './context.ts';
import { errorMessage } from '../error-text.ts';
import { documentLabel, readDocumentAsCommon } from './document.ts';
import { CliError } from './errors.ts';
import { writeText } from './output.ts';
import { renderSessionText } from '../harness/session-text.ts';

export async function convertCommand(
  ctx: CliContext,
  input: string,
  options: { from: string; to: string },
): Promise<void> {
  const source = await ctx.findHarness(options.from);
  const target = await ctx.findHarness(options.to);
  const common = await readDocumentAsCommon(ctx, input, source, {
    what: 'the input',
    todo: 'give a readable file, or - for stdin',
  });
  try {
    // Written as it is made: an error part way leaves the output cut short, and the error says so.
    await writeText(ctx.io.stdout, renderSessionText(target, common));
  } catch (err) {
    throw new CliError({
      what: `could not convert ${source.id} to ${target.id}: ${errorMessage(err)}`,
      where: documentLabel(input),
    });
  }
}
