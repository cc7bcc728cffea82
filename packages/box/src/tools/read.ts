/** `read`: a text file inside the sandbox, optionally a line window (`offset` is 1-based, `limit` lines). */
import { open } from 'node:fs/promises';
import { z } from 'zod';
import { resolveInSandbox } from '../sandbox/paths.ts';
import { defineTool, errorOutcome as anyErrorOutcome, type ToolOutcome } from './types.ts';

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
    let file: string;
    try {
      file = await resolveInSandbox(ctx.sandboxDir, input.path, { mustExist: true });
    } catch (error) {
      return errorOutcome((error as Error).message);
    }
    const handle = await open(file, 'r').catch((error: Error) => error);
    if (handle instanceof Error) return errorOutcome(`Cannot read ${input.path}: ${handle.message}`);
    try {
      const info = await handle.stat();
      if (!info.isFile()) return errorOutcome(`${input.path} is not a regular file.`);
      const windowed = input.offset !== undefined || input.limit !== undefined;
      if (!windowed && info.size > READ_CAP_BYTES) {
        return errorOutcome(
          `${input.path} is ${info.size} bytes, more than the ${READ_CAP_BYTES}-byte read limit. ` +
            'Read it in parts with offset and limit (lines), or search it with shell (grep, head).',
        );
      }
      const text = (await handle.readFile()).toString('utf8');
      let content = text;
      if (windowed) {
        const lines = text.split('\n');
        const start = (input.offset ?? 1) - 1;
        content = lines.slice(start, input.limit === undefined ? undefined : start + input.limit).join('\n');
        if (Buffer.byteLength(content) > READ_CAP_BYTES) {
          return errorOutcome(
            `That window of ${input.path} is over ${READ_CAP_BYTES} bytes; ask for fewer lines.`,
          );
        }
      }
      return { envelope: { success: { content: ctx.scrub.text(content) } }, summary: input.path };
    } finally {
      await handle.close();
    }
  },
});
