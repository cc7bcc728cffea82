/** `read`: a text file inside the sandbox, optionally a line window (`offset` is 1-based, `limit` lines). */
import { z } from 'zod';
import { openInSandbox, withDeadline } from '../../sandbox/paths.ts';
import { readLineWindow } from './line-window.ts';
import { defineTool, errorOutcome as anyErrorOutcome, type ToolOutcome } from '../types.ts';

/** Real read errors are `{error: {errorMessage}}` (grok-bot-format.md §5, VR parity 06). */
const errorOutcome = (message: string): ToolOutcome => anyErrorOutcome(message, message, 'errorMessage');

export const READ_CAP_BYTES = 256 * 1024;

export const readInput = z.strictObject({
  path: z.string().min(1, 'path must not be empty').describe('File path, relative to your sandbox folder.'),
  offset: z.number().int().positive().optional().describe('First line to return, 1-based.'),
  limit: z.number().int().positive().optional().describe('Number of lines to return.'),
});

export const readTool = defineTool({
  name: 'read',
  description:
    'Read a text file in your sandbox folder. Use offset (1-based line) and limit (lines) for large files.',
  input: readInput,
  async run(input, ctx): Promise<ToolOutcome> {
    const windowed = input.offset !== undefined || input.limit !== undefined;
    let content: string;
    try {
      content = await withDeadline(`Reading ${input.path}`, async () => {
        const { handle, info } = await openInSandbox(ctx.sandboxDir, input.path);
        try {
          if (!windowed && info.size > READ_CAP_BYTES) {
            throw new Error(
              `${input.path} is ${info.size} bytes, more than the ${READ_CAP_BYTES}-byte read limit. ` +
                'Read it in parts with offset and limit (lines), or search it with shell (grep, head).',
            );
          }
          const text = await readLineWindow(handle, (input.offset ?? 1) - 1, input.limit, READ_CAP_BYTES);
          if (text !== null) return text;
          throw new Error(
            windowed
              ? `That window of ${input.path} is over ${READ_CAP_BYTES} bytes; ask for fewer lines.`
              : `${input.path} grew past the ${READ_CAP_BYTES}-byte read limit while it was read; ` +
                  'read it in parts with offset and limit (lines).',
          );
        } finally {
          await handle.close();
        }
      });
    } catch (error) {
      return errorOutcome(ctx.scrub.text((error as Error).message));
    }
    return { envelope: { success: { content: ctx.scrub.text(content) } }, summary: input.path };
  },
});
