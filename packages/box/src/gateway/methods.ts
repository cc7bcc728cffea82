/**
 * The JSON methods: `POST /api/<method>`, one Zod schema and one host call each
 * (docs/gateway.md, "Methods"). The table reads like the API document.
 */
import { z } from 'zod';
import { agentIdSchema, method, type JsonMethod } from './method-spec.ts';
import { imageHostSchema } from './image-hosts.ts';
import { pageLinks } from './links.ts';
import { agentMethods } from './agent-methods.ts';
import { sessionMethods } from './session-methods.ts';
import { settingsMethods } from './settings-methods.ts';
import { mcpMethods } from './mcp-methods.ts';
import { turnMethods } from './turn-methods.ts';
import { MAX_HITS } from '../search/message-search.ts';
import { UPLOAD_LIMIT } from './body.ts';

export { agentIdSchema } from './method-spec.ts';

const messageIdSchema = z.string().min(1).max(200);

/** A response body that is JSON text already (a large ledger is serialized once, not per request). */
export class RawJson {
  constructor(readonly text: string) {}
}

export type { MethodContext } from './method-spec.ts';

const empty = z.object({});
const byId = z.object({ id: agentIdSchema });
const byImageHost = z.object({ host: imageHostSchema });

export const jsonMethods = {
  getStatus: method(empty, async ({ host, version }) => ({
    model: host.modelStatus(),
    sandbox: { ...host.sandboxStatus(), disk: await host.sandboxDisk() },
    mcp: await host.mcpSettings.view().then(({ file, problems }) => ({ file, problems })),
    version,
    links: pageLinks(),
    // The page checks a file against it before sending any byte.
    limits: { uploadBytes: UPLOAD_LIMIT },
  })),
  createAgent: method(
    z.object({
      // Empty or absent: the agent is named from its first prompt.
      name: z.string().trim().max(200).optional(),
      description: z.string().max(4000).optional(),
      harness: z.string().min(1).max(64).optional(),
    }),
    async ({ host }, input) => ({ agent: await host.createAgent(input) }),
  ),
  listAgents: method(empty, ({ host }) => host.listAgents()),
  openAgent: method(byId, async ({ host }, { id }) => {
    const entries = await host.openAgentJson(id);
    const pending = JSON.stringify(await host.pendingInputs(id));
    const todos = JSON.stringify(await host.todos(id));
    const notHeld = JSON.stringify(await host.secretRequestsNotHeld(id));
    return new RawJson(
      `{"entries":${entries},"pending":${pending},"todos":${todos},"secretRequestsNotHeld":${notHeld}}`,
    );
  }),
  deleteAgent: method(byId, async ({ host }, { id }) => {
    await host.deleteAgent(id);
    return { deleted: true };
  }),
  duplicateAgent: method(byId, async ({ host }, { id }) => ({ agent: await host.duplicateAgent(id) })),
  sendPrompt: method(
    z.object({
      agentId: agentIdSchema,
      prompt: z.string().refine((prompt) => prompt.trim() !== '', 'the prompt is empty'),
      clientNonce: z.string().min(1).max(200),
    }),
    ({ host }, input) => host.sendPrompt(input),
  ),
  answerWidget: method(
    z.object({
      agentId: agentIdSchema,
      messageId: messageIdSchema,
      answer: z.union([z.string(), z.array(z.string()).min(1, 'choose at least one option')]),
    }),
    ({ host }, input) => host.answerWidget(input),
  ),
  submitSecret: method(
    z.object({
      agentId: agentIdSchema,
      messageId: messageIdSchema,
      // The message names the field only: Zod never echoes the value.
      value: z.string().min(1, 'the secret is empty'),
    }),
    ({ host }, input) => host.submitSecret(input),
  ),
  answerToolApproval: method(
    z.object({
      agentId: agentIdSchema,
      entryId: messageIdSchema,
      decision: z.enum(['allow', 'allow-always', 'deny'], {
        message: 'decision is "allow", "allow-always" or "deny"',
      }),
    }),
    ({ host }, input) => host.answerToolApproval(input),
  ),
  ...agentMethods,
  ...turnMethods,
  ...settingsMethods,
  ...mcpMethods,
  ...sessionMethods,
  searchMessages: method(
    z.object({
      query: z.string().trim().min(1, 'the query is empty').max(500),
      limit: z.number().int().min(1).max(MAX_HITS).optional(),
    }),
    async ({ search }, { query, limit }) => ({ hits: await search.search(query, limit) }),
  ),
  listImageHosts: method(empty, ({ imageHosts }) => Promise.resolve({ hosts: imageHosts.list() })),
  allowImageHost: method(byImageHost, async ({ imageHosts }, { host }) => ({
    hosts: await imageHosts.allow(host),
  })),
  forgetImageHost: method(byImageHost, async ({ imageHosts }, { host }) => ({
    hosts: await imageHosts.forget(host),
  })),
} satisfies Record<string, JsonMethod<z.ZodType>>;

export type JsonMethodName = keyof typeof jsonMethods;

/** Methods served with another verb or body shape than JSON POST, and the verb they take. */
export const otherRoutes: Record<string, 'GET' | 'POST'> = {
  uploadFile: 'POST',
  events: 'GET',
  attachment: 'GET',
  upload: 'GET',
  remoteImage: 'GET',
};

export function isJsonMethod(name: string): name is JsonMethodName {
  return Object.hasOwn(jsonMethods, name);
}
