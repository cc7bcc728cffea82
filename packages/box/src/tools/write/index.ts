/** `write`: creates or replaces a regular file inside the sandbox (parent folders created, atomic replace, links never followed). */
import { z } from 'zod';
import { withDeadline, writeInSandbox } from '../../sandbox/paths.ts';
import { defineTool, errorOutcome, type ToolOutcome } from '../types.ts';

export const writeInput = z.strictObject({
  path: z.string().min(1, 'path must not be empty').describe('File path, relative to your sandbox folder.'),
  content: z.string().describe('The whole new content of the file.'),
});

export const writeTool = defineTool({
  name: 'write',
  description: 'Create or overwrite a file in your sandbox folder with the given content.',
  input: writeInput,
  async run(input, ctx): Promise<ToolOutcome> {
    try {
      await ctx.disk?.reserve(Buffer.byteLength(input.content));
      await withDeadline(`Writing ${input.path}`, () =>
        writeInSandbox(ctx.sandboxDir, input.path, input.content),
      );
    } catch (error) {
      return errorOutcome(ctx.scrub.text((error as Error).message));
    }
    const fileSize = Buffer.byteLength(input.content);
    return {
      envelope: { success: { path: input.path, fileSize } },
      summary: `${input.path} (${fileSize} bytes)`,
    };
  },
});
