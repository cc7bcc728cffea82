/**
 * `task {description, prompt, isBackground?, subagentType?}` (grok-bot-format.md
 * §5, VR parity 07): hands a job to a child agent on the same model, with its
 * own transcript `agent-transcripts/sand-subagent-<uuid>/…` (subagents/). In
 * the foreground the call returns the child's result when it ends:
 * `success{agentId, isBackground: false, durationMs, result, toolCalls, steps}`
 * (`failure{…}` when its model failed or it was stopped); in the background
 * at once, `success{agentId, isBackground: true, durationMs,
 * backgroundReason}`, and the child is awaited with `await {taskId: agentId}`.
 * The `agentId` in the result is what links the parent to the child's
 * transcript (C7).
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { defineTool, errorOutcome, oneLine, type ToolOutcome } from '../types.ts';

/** The kinds of child this box runs. */
export const SUBAGENT_TYPES = ['general'] as const;

export const taskInput = z.strictObject({
  description: z
    .string()
    .min(1, 'description must not be empty')
    .describe('A few words on the job (shown to the user).'),
  prompt: z
    .string()
    .min(1, 'prompt must not be empty')
    .describe(
      'The whole job for the subagent: it sees nothing of your conversation, only this. Say what to do, ' +
        'where, and what to report back.',
    ),
  isBackground: z
    .boolean()
    .optional()
    .describe('Run it in the background and return at once; wait for it with await {taskId: <agentId>}.'),
  // Grok Bot's own calls name it `{custom: {name}}` (grok-bot-format.md §5); a plain name is accepted too.
  subagentType: z
    .union([z.string(), z.strictObject({ custom: z.strictObject({ name: z.string() }) })])
    .optional()
    .describe(`The kind of subagent: ${SUBAGENT_TYPES.join(', ')} (default general).`),
});

export function newSubagentId(): string {
  return `sand-subagent-${randomUUID()}`;
}

export const taskTool = defineTool({
  name: 'task',
  description:
    'Hand a self-contained job to a subagent: a fresh agent on your model, in your sandbox folder, with your ' +
    'tools except send_message and task. It cannot talk to the user; its final text comes back to you with ' +
    'the list of tool calls it made. Use it for work you can describe fully in one prompt.',
  input: taskInput,
  async run(input, ctx): Promise<ToolOutcome> {
    if (!ctx.tasks || !ctx.subagents || !ctx.call) {
      return errorOutcome('Subagents cannot be started here: do the work yourself.', 'no subagents here');
    }
    const named = input.subagentType;
    const type = named === undefined ? 'general' : typeof named === 'string' ? named : named.custom.name;
    if (!(SUBAGENT_TYPES as readonly string[]).includes(type)) {
      return errorOutcome(
        `There is no subagentType ${JSON.stringify(type)} on this box. Types: ${SUBAGENT_TYPES.join(', ')}.`,
        'unknown subagent type',
      );
    }
    const agentId = newSubagentId();
    const isBackground = input.isBackground === true;
    const startedAt = ctx.now();
    const launcher = ctx.subagents;
    const started = ctx.tasks.startChild({
      turn: ctx.call.turn,
      toolCallId: ctx.call.toolCallId,
      ...(ctx.call.subagentId ? { startedBy: ctx.call.subagentId } : {}),
      agentId,
      label: input.description,
      background: isBackground,
      start: (onStep) =>
        launcher.start({
          agentId,
          description: input.description,
          prompt: input.prompt,
          isBackground,
          onStep,
        }),
    });
    if ('refused' in started) return errorOutcome(started.refused, 'too many subagents');
    const outcome = ctx.tasks.childOutcome(agentId);
    if (isBackground) {
      return {
        envelope: {
          success: {
            agentId,
            isBackground: true,
            durationMs: ctx.now() - startedAt,
            backgroundReason: 'requested',
            taskId: agentId,
          },
        },
        summary: oneLine(`${input.description} (background ${agentId})`),
      };
    }
    // Stop (the turn's signal) ends the child too; its turn closes before this call returns.
    const tasks = ctx.tasks;
    const onAbort = () => tasks.stop(agentId);
    ctx.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const result = await outcome;
      if (!result) return errorOutcome(`The subagent ${agentId} ended without a result.`, 'subagent lost');
      const envelope =
        result.envelope === 'success' ? { success: result.payload } : { failure: result.payload };
      const calls = typeof result.payload.toolCalls === 'string' ? result.payload.toolCalls : '';
      return { envelope, summary: oneLine(`${input.description}: ${calls}`) };
    } finally {
      ctx.signal?.removeEventListener('abort', onAbort);
    }
  },
});
