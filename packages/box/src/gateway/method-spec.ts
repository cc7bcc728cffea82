/** One JSON method of the gateway: the Zod schema of its body and the host call it makes. */
import { z } from 'zod';
import { AGENT_ID_PATTERN } from '../stores/files/layout.ts';
import type { AgentHost } from '../host/types.ts';
import type { ImageHosts } from './image-hosts.ts';
import type { BrowserSessions } from './session.ts';
import type { MessageSearch } from '../search/message-search.ts';

export interface MethodContext {
  host: AgentHost;
  version: string;
  imageHosts: ImageHosts;
  sessions: BrowserSessions;
  /** Every agent's messages, searchable (search/message-search.ts). */
  search: MessageSearch;
  /** The browser session that called, or null for the bearer token (the CLI). */
  caller: string | null;
  /** The gateway's origin as this request reached it (`http://127.0.0.1:1340`): the OAuth callback's. */
  origin: string;
}

export interface JsonMethod<S extends z.ZodType> {
  input: S;
  run: (ctx: MethodContext, input: z.output<S>) => Promise<unknown>;
}

export function method<S extends z.ZodType>(input: S, run: JsonMethod<S>['run']): JsonMethod<S> {
  return { input, run };
}

/**
 * Agent ids name folders on disk (`agents/<id>/`). The host checks them too;
 * refusing anything but a plain name here keeps a path out of every call.
 */
export const agentIdSchema = z
  .string()
  .regex(AGENT_ID_PATTERN, 'expected an agent id (letters, digits, "-" and "_", at most 128)');
