/**
 * `txcript convert <file|-> --from H --to H`: native text of one harness to
 * native text of another, through Common. Warnings go to stderr, the result
 * to stdout.
 */
import type { CliContext } from './context.ts';
import { errorMessage } from '../error-text.ts';
import { documentLabel, readDocumentAsCommon } from './document.ts';
import { CliError } from './errors.ts';

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
  let output: string;
  try {
    output = target.text.render(target.codec.fromCommon(common));
  } catch (err) {
    throw new CliError({
      what: `could not convert ${source.id} to ${target.id}: ${errorMessage(err)}`,
      where: documentLabel(input),
    });
  }
  ctx.io.stdout.write(output);
}
