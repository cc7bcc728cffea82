/**
 * `edit`: replaces exact text in a file of the sandbox. One occurrence unless `replace_all`; none,
 * or several without `replace_all`, is an error that gives the count and the way forward. The
 * file is replaced atomically (sandbox/paths.ts) and keeps its mode. The result is Cursor's edit
 * shape, which Grok Bot's tools share (docs/formats/grok-bot.md, "Work tools"): `path`,
 * `linesAdded`, `linesRemoved`, a short `diffString`, plus sendbox's `replacements` count.
 */
import { z } from 'zod';
import { openInSandbox, withDeadline, writeInSandbox } from '../../sandbox/paths.ts';
import { defineTool, errorOutcome, successFields, type ToolContext, type ToolOutcome } from '../types.ts';
import { readFileBytes, type FileBytes } from './file-bytes.ts';
import { replacementDiff } from './diff.ts';

/** Larger files are not edited in memory here: the model is told to use shell. */
export const EDIT_CAP_BYTES = 16 * 1024 * 1024;

export const editInput = z.strictObject({
  path: z.string().min(1, 'path must not be empty').describe('File path, relative to your sandbox folder.'),
  old_string: z
    .string()
    .min(1, 'old_string must not be empty: to create a file, use write')
    .describe('The exact text to replace, whitespace and indentation included.'),
  new_string: z.string().describe('The text to put in its place.'),
  replace_all: z.boolean().optional().describe('Replace every occurrence (default: exactly one must exist).'),
});

export const editTool = defineTool({
  name: 'edit',
  description:
    'Replace exact text in a file of your sandbox folder. old_string must occur exactly once (give enough ' +
    'surrounding lines to make it unique) unless replace_all is true. Returns how many were replaced and a diff.',
  input: editInput,
  async run(input, ctx): Promise<ToolOutcome> {
    const fail = (message: string) => errorOutcome(ctx.scrub.text(message));
    if (input.old_string === input.new_string)
      return fail('old_string and new_string are the same, so there is nothing to change.');
    // The file stays bytes from read to write (a 1 MB file decoded, replaced and encoded again made
    // three 1 MB copies in the JavaScript heap per edit, and their collection the slowest edits),
    // read into a reused buffer (file-bytes.ts) and written back as chunks around the replacements.
    // UTF-8 is self-synchronising, so a byte match is a text match; bytes that are not UTF-8 are
    // kept as they were.
    let file: FileBytes;
    let mode: number;
    try {
      ({ file, mode } = await withDeadline(`Reading ${input.path}`, async () => {
        const { handle, info } = await openInSandbox(ctx.sandboxDir, input.path);
        try {
          if (info.size > EDIT_CAP_BYTES) {
            throw new Error(
              `${input.path} is ${info.size} bytes, more than edit's ${EDIT_CAP_BYTES}-byte limit; change it with shell (sed, a script) instead.`,
            );
          }
          const read = await readFileBytes(handle, info.size);
          if (read.bytes.includes(0)) {
            read.release();
            throw new Error(`${input.path} is a binary file; edit changes text files only.`);
          }
          return { file: read, mode: info.mode };
        } finally {
          await handle.close();
        }
      }));
    } catch (error) {
      return fail((error as Error).message);
    }
    return replaceInFile(input, file, mode, ctx);
  },
  /** The diff, for the UI's tool row. */
  entryFields(result) {
    const diff = successFields(result)?.diffString;
    return typeof diff === 'string' ? { diff } : undefined;
  },
});

/**
 * The replacement itself, once the file's bytes are read: count, write, diff. The read buffer goes
 * back for the next edit when this is done, except after a write that was given up (its bytes may
 * still be on their way to the file).
 */
async function replaceInFile(
  input: z.infer<typeof editInput>,
  file: FileBytes,
  mode: number,
  ctx: ToolContext,
): Promise<ToolOutcome> {
  const fail = (message: string) => errorOutcome(ctx.scrub.text(message));
  const before = file.bytes;
  let reusable = true;
  try {
    const oldBytes = Buffer.from(input.old_string);
    const at = occurrences(before, oldBytes);
    if (at.length === 0) {
      return fail(
        `old_string was not found in ${input.path} (0 matches). It must match the file exactly, whitespace ` +
          'and line breaks included: read the file again and copy the text from it.',
      );
    }
    if (at.length > 1 && input.replace_all !== true) {
      const lines = lineNumbersOf(before, at.slice(0, 10)).join(', ');
      return fail(
        `old_string occurs ${at.length} times in ${input.path} (at lines ${lines}${at.length > 10 ? ', …' : ''}). ` +
          'Include more of the surrounding text in old_string so it matches one place only, or set replace_all ' +
          `to true to replace all ${at.length}.`,
      );
    }
    const after = chunksAround(before, at, oldBytes.length, Buffer.from(input.new_string));
    try {
      await withDeadline(`Writing ${input.path}`, () =>
        writeInSandbox(ctx.sandboxDir, input.path, after, { mode }),
      );
    } catch (error) {
      reusable = false;
      return fail((error as Error).message);
    }
    const diff = replacementDiff(before, at, input.old_string, input.new_string);
    const n = at.length;
    return {
      envelope: {
        success: {
          path: input.path,
          replacements: n,
          linesAdded: diff.linesAdded,
          linesRemoved: diff.linesRemoved,
          diffString: ctx.scrub.text(diff.text),
        },
      },
      summary: `${input.path}: ${n} replacement${n === 1 ? '' : 's'} (+${diff.linesAdded} -${diff.linesRemoved})`,
    };
  } finally {
    if (reusable) file.release();
  }
}

/** Start offsets of the non-overlapping occurrences of `needle`, left to right. */
export function occurrences(text: Buffer, needle: Buffer): number[] {
  const out: number[] = [];
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) out.push(i);
  return out;
}

/** The file after the replacements, as views of `text` around `replacement` (nothing is copied). */
function chunksAround(text: Buffer, at: readonly number[], length: number, replacement: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let from = 0;
  for (const start of at) {
    parts.push(text.subarray(from, start), replacement);
    from = start + length;
  }
  parts.push(text.subarray(from));
  return parts;
}

/** 1-based line numbers of sorted offsets, in one pass. */
function lineNumbersOf(text: Buffer, offsets: readonly number[]): number[] {
  const out: number[] = [];
  let line = 1;
  let from = 0;
  for (const offset of offsets) {
    for (let i = text.indexOf(0x0a, from); i !== -1 && i < offset; i = text.indexOf(0x0a, i + 1)) line += 1;
    from = offset;
    out.push(line);
  }
  return out;
}
