/**
 * `delete`: one file or one empty folder of the sandbox (sandbox/paths.ts `removeInSandbox`:
 * never through a link, never the sandbox folder itself). On disk it is Cursor's delete shape
 * (docs/formats/grok-bot.md, "Work tools"): `success{path, message}` or `error{path, error}`.
 */
import { z } from 'zod';
import { removeInSandbox, withDeadline } from '../../sandbox/paths.ts';
import { defineTool, oneLine, successFields, type ToolOutcome } from '../types.ts';

export const deleteInput = z.strictObject({
  path: z
    .string()
    .min(1, 'path must not be empty')
    .describe('File or empty folder, relative to your sandbox folder.'),
});

export const deleteTool = defineTool({
  name: 'delete',
  description: 'Delete one file, or one empty folder, in your sandbox folder.',
  input: deleteInput,
  async run(input, ctx): Promise<ToolOutcome> {
    try {
      const kind = await withDeadline(`Deleting ${input.path}`, () =>
        removeInSandbox(ctx.sandboxDir, input.path),
      );
      const message = `Deleted the ${kind} ${input.path}.`;
      return { envelope: { success: { path: input.path, message } }, summary: `${input.path} (${kind})` };
    } catch (error) {
      const message = ctx.scrub.text((error as Error).message);
      return { envelope: { error: { path: input.path, error: message } }, summary: oneLine(message) };
    }
  },
  modelOutput(result) {
    const message = successFields(result)?.message;
    return typeof message === 'string' ? { type: 'text', value: message } : undefined;
  },
});
