/**
 * `txcript convert <file|-> --from H --to H`: native text of one harness to
 * native text of another, through Common. Warnings go to stderr, the result
 * to stdout.
 */
import { readFile } from 'node:fs/promises';
import { SimpleFormatError, formatUtc, sessionIdForFile } from '../harness/simple/index.ts';
import type { CliContext } from './context.ts';
import { CliError } from './errors.ts';

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export async function convertCommand(
  ctx: CliContext,
  input: string,
  options: { from: string; to: string },
): Promise<void> {
  const source = await ctx.findHarness(options.from);
  const target = await ctx.findHarness(options.to);
  const name = input === '-' ? '<stdin>' : input;
  let text: string;
  try {
    text = input === '-' ? await ctx.io.readStdin() : await readFile(input, 'utf8');
  } catch (err) {
    throw new CliError({
      what: `could not read the input: ${message(err)}`,
      where: name,
      todo: 'give a readable file, or - for stdin',
    });
  }
  let parsed;
  try {
    parsed = source.text.parse(text, name);
  } catch (err) {
    if (err instanceof SimpleFormatError) {
      const at = err.line === undefined ? err.source : `${err.source}:${err.line}:${err.column ?? 1}`;
      throw new CliError({
        what: err.problem,
        where: at,
        todo: `fix the document, or check --from ${source.id}`,
      });
    }
    throw new CliError({
      what: message(err),
      where: name,
      todo: `check that the input is ${source.id} text`,
    });
  }
  for (const w of parsed.warnings) ctx.warn(w);
  let output: string;
  try {
    const common = source.codec.toCommon(parsed.records, {
      sessionId: sessionIdForFile(input),
      // A document with no time of its own is stamped with the time it is read.
      timestamp: formatUtc(ctx.io.now()),
    });
    output = target.text.render(target.codec.fromCommon(common));
  } catch (err) {
    throw new CliError({
      what: `could not convert ${source.id} to ${target.id}: ${message(err)}`,
      where: name,
    });
  }
  ctx.io.stdout.write(output);
}
