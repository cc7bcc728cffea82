/** `write`: creates or replaces a file inside the sandbox (parent folders created, atomic replace). */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../fs/atomic.ts';
import { resolveInSandbox } from '../sandbox/paths.ts';
import { defineTool, errorOutcome, type ToolOutcome } from './types.ts';

export const writeInput = z.strictObject({
  path: z.string().min(1, 'path must not be empty').describe('File path, relative to your sandbox folder.'),
  content: z.string().describe('The whole new content of the file.'),
});

export const writeTool = defineTool({
  name: 'write',
  description: 'Create or overwrite a file in your sandbox folder with the given content.',
  input: writeInput,
  async run(input, ctx): Promise<ToolOutcome> {
    let file: string;
    try {
      file = await resolveInSandbox(ctx.sandboxDir, input.path, { mustExist: false });
      await mkdir(path.dirname(file), { recursive: true });
      // The parent may only now exist: check again that it did not resolve out of the sandbox.
      file = await resolveInSandbox(ctx.sandboxDir, input.path, { mustExist: false });
      await writeFileAtomic(file, input.content, { mode: 0o644 });
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
