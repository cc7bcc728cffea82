/**
 * `await {taskId, blockUntilMs?, regex?}` (grok-bot-format.md §5, VR parity
 * 07): waits on a background command or a background subagent until it ends,
 * `blockUntilMs` passes, or (commands) output the model has not seen matches
 * `regex`. Results in Grok Bot's shapes: `success{stillRunning{taskId,
 * runtimeMs, outputFilePath, outputLength, regexRequested?}}` and
 * `success{complete{taskId, runtimeMs, outputFilePath, outputLength,
 * exitCode}}`; sendbox adds `output` (what the model has not seen yet,
 * scrubbed, capped) and, for a pattern, `regexMatched`.
 */
import { z } from 'zod';
import { outputPattern } from '../../tasks/output-pattern.ts';
import { defineTool, errorOutcome, oneLine, type ToolOutcome } from '../types.ts';

export const DEFAULT_BLOCK_UNTIL_MS = 30_000;
export const MAX_BLOCK_UNTIL_MS = 10 * 60_000;

export const awaitInput = z.strictObject({
  taskId: z.string().min(1, 'taskId must not be empty'),
  blockUntilMs: z
    .number()
    .int()
    .min(0)
    .max(MAX_BLOCK_UNTIL_MS)
    .optional()
    .describe(
      `Longest wait in milliseconds (default ${DEFAULT_BLOCK_UNTIL_MS}, at most ${MAX_BLOCK_UNTIL_MS}; 0 checks without waiting).`,
    ),
  regex: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Background commands: also stop waiting when output you have not seen yet matches this JavaScript ' +
        'regular expression (multiline; no back-references or lookaround).',
    ),
});

export const awaitTool = defineTool({
  name: 'await',
  description:
    'Wait for a background task (a shell command started with isBackground, or a subagent started with ' +
    'task isBackground) by its taskId. Returns stillRunning with the new output when the wait ends first, ' +
    'or complete with the exit code (commands) or the result (subagents) once it ended.',
  input: awaitInput,
  async run(input, ctx): Promise<ToolOutcome> {
    if (!ctx.tasks) return errorOutcome('There are no background tasks here to await.');
    let pattern: RegExp | undefined;
    if (input.regex !== undefined) {
      const compiled = outputPattern(input.regex);
      if ('refused' in compiled) return errorOutcome(compiled.refused, 'invalid regex');
      pattern = compiled;
    }
    const result = await ctx.tasks.wait(input.taskId, {
      blockUntilMs: input.blockUntilMs ?? DEFAULT_BLOCK_UNTIL_MS,
      ...(pattern ? { pattern } : {}),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
    switch (result.kind) {
      case 'unknown':
      case 'refused':
        return errorOutcome(result.message);
      case 'running':
        return {
          envelope: { success: { stillRunning: result.payload } },
          summary: oneLine(
            `${input.taskId} still running${result.payload.regexMatched === true ? ' (regex matched)' : ''}`,
          ),
        };
      case 'complete': {
        const code = result.payload.exitCode;
        return {
          envelope: { success: { complete: result.payload } },
          summary: oneLine(
            `${input.taskId} ${result.payload.interrupted === true ? 'interrupted' : 'complete'}${
              typeof code === 'number' ? ` (exit ${code})` : ''
            }`,
          ),
        };
      }
    }
  },
});
