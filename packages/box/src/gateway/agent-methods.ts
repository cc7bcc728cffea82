/**
 * An agent's settings and memory (docs/gateway.md): `getAgent` and `updateAgent` for the settings
 * dialog, `listMemory` and `forgetMemory` for the memory view.
 */
import { z } from 'zod';
import { agentUpdateSchema } from '../profile/agent-update.ts';
import { agentIdSchema, method } from './method-spec.ts';

export const agentMethods = {
  getAgent: method(z.object({ id: agentIdSchema }), ({ host }, { id }) => host.agentSettings(id)),
  updateAgent: method(agentUpdateSchema.extend({ id: agentIdSchema }), ({ host }, { id, ...update }) =>
    host.updateAgent(id, update),
  ),
  listMemory: method(z.object({ agentId: agentIdSchema }), ({ host }, { agentId }) => host.memory(agentId)),
  forgetMemory: method(
    z.object({
      agentId: agentIdSchema,
      scope: z.enum(['agent', 'user']),
      text: z.string().min(1, 'text is the exact entry to delete'),
    }),
    ({ host }, input) => host.forgetMemory(input),
  ),
};
