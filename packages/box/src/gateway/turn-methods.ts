/**
 * Methods on a running or failed turn (docs/gateway.md): `cancelTurn` stops the agent's
 * running turn (the model call is aborted, tool process groups are killed, the turn ends with
 * a notice and the model reads that it was stopped); `retryTurn` runs the agent again on its
 * conversation as it stands, after a failed model call; `regenerateReply` and `editPrompt` send the
 * last prompt again, as it was or edited, in place of its turn (agent/revisions.ts);
 * `removeQueuedPrompt` takes back a prompt that has not started; `listTasks`, `stopTask` and
 * `openSubagent` show and stop its background work; `listRoutines` and `updateRoutine` show,
 * create, change and run its routines (routines/).
 */
import { z } from 'zod';
import { SUBAGENT_ID_PATTERN } from '../stores/files/layout.ts';
import { routineCommand } from '../tools/update-state/schema.ts';
import { agentIdSchema, method } from './method-spec.ts';

const byAgent = z.object({ agentId: agentIdSchema });
const nonceSchema = z.string().min(1).max(200);

export const turnMethods = {
  cancelTurn: method(byAgent, ({ host }, { agentId }) => host.cancelTurn(agentId)),
  retryTurn: method(byAgent, ({ host }, { agentId }) => host.retryTurn(agentId)),
  regenerateReply: method(
    z.object({ agentId: agentIdSchema, clientNonce: nonceSchema }),
    ({ host }, { agentId, clientNonce }) =>
      host.revisePrompt({ agentId, clientNonce, revision: { kind: 'regenerate' } }),
  ),
  editPrompt: method(
    z.object({
      agentId: agentIdSchema,
      messageId: z.string().min(1).max(200),
      prompt: z.string().refine((prompt) => prompt.trim() !== '', 'the prompt is empty'),
      clientNonce: nonceSchema,
    }),
    ({ host }, { agentId, clientNonce, messageId, prompt }) =>
      host.revisePrompt({ agentId, clientNonce, revision: { kind: 'edit', messageId, prompt } }),
  ),
  removeQueuedPrompt: method(z.object({ agentId: agentIdSchema, nonce: nonceSchema }), ({ host }, input) =>
    host.removeQueuedPrompt(input),
  ),
  listTasks: method(byAgent, async ({ host }, { agentId }) => ({ tasks: await host.listTasks(agentId) })),
  stopTask: method(
    z.object({ agentId: agentIdSchema, taskId: z.string().min(1).max(200) }),
    ({ host }, { agentId, taskId }) => host.stopTask(agentId, taskId),
  ),
  openSubagent: method(
    z.object({
      agentId: agentIdSchema,
      subagentId: z.string().regex(SUBAGENT_ID_PATTERN, 'expected sand-subagent-<uuid>'),
    }),
    async ({ host }, { agentId, subagentId }) => ({ entries: await host.openSubagent(agentId, subagentId) }),
  ),
  listRoutines: method(byAgent, async ({ host }, { agentId }) => ({
    routines: await host.listRoutines(agentId),
  })),
  /** The model's routine commands (one owner of their rules: update_state's schema), and `run`. */
  updateRoutine: method(
    z
      .strictObject({
        agentId: agentIdSchema,
        id: z.string().min(1).max(200).optional(),
        action: z.enum(['create', 'update', 'pause', 'resume', 'delete', 'run']),
        name: z.string().min(1).max(120).optional(),
        schedule: z.string().min(1).max(200).optional(),
        timezone: z.string().min(1).max(100).optional(),
        prompt: z.string().min(1).max(20_000).optional(),
        silent: z.boolean().optional(),
      })
      .superRefine(({ agentId: _agentId, ...change }, ctx) => {
        if (change.action === 'run') {
          if (change.id === undefined)
            ctx.addIssue({ code: 'custom', path: ['id'], message: "run needs the routine's id" });
          const extra = Object.keys(change).filter((key) => key !== 'id' && key !== 'action');
          if (extra.length > 0)
            ctx.addIssue({ code: 'custom', path: [extra[0]!], message: 'run takes only the id' });
          return;
        }
        const checked = routineCommand.safeParse(change);
        if (!checked.success) for (const issue of checked.error.issues) ctx.addIssue({ ...issue });
      }),
    ({ host }, { agentId, ...change }) => host.updateRoutine(agentId, change),
  ),
};
