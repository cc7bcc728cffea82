/**
 * Methods on a running or failed turn (docs/gateway.md): `cancelTurn` stops the agent's
 * running turn (the model call is aborted, tool process groups are killed, the turn ends with
 * a notice and the model reads that it was stopped); `retryTurn` runs the agent again on its
 * conversation as it stands, after a failed model call.
 */
import { z } from 'zod';
import { agentIdSchema, method } from './method-spec.ts';

const byAgent = z.object({ agentId: agentIdSchema });

export const turnMethods = {
  cancelTurn: method(byAgent, ({ host }, { agentId }) => host.cancelTurn(agentId)),
  retryTurn: method(byAgent, ({ host }, { agentId }) => host.retryTurn(agentId)),
};
