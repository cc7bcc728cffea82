/**
 * What may change in an agent's profile (issue 21 item 4): the user's `updateAgent {id, name?,
 * description?, instructions?, allowDomains?, model?, webFetch?, mcpServers?}`, and the agent's own `update_state profile
 * {name?, description?, instructions?}`. Pure: the checks and the new profile; profile-editor.ts
 * writes it.
 */
import { z } from 'zod';
import { HostError } from '../agent/errors.ts';
import { SERVER_NAME } from '../mcp/config.ts';
import type { Profile } from '../stores/files/profile.ts';

export const MAX_NAME_CHARS = 200;
export const MAX_DESCRIPTION_CHARS = 4000;
export const MAX_INSTRUCTIONS_CHARS = 16_000;
const MAX_DOMAINS = 200;
const MAX_SERVERS = 200;

/** A host name, `*.`-prefixed or not, or `*` (every host): what the egress proxy matches. */
const DOMAIN = /^(\*|(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*)$/;

const name = z
  .string()
  .trim()
  .min(1, 'name is empty: give the agent a name')
  .max(MAX_NAME_CHARS, `name is longer than ${MAX_NAME_CHARS} characters`);
const description = z
  .string()
  .max(MAX_DESCRIPTION_CHARS, `description is longer than ${MAX_DESCRIPTION_CHARS} characters`);
const instructions = z
  .string()
  .max(MAX_INSTRUCTIONS_CHARS, `instructions are longer than ${MAX_INSTRUCTIONS_CHARS} characters`);

/** What the agent may change about itself. */
export const ownProfileSchema = z
  .object({
    name: name.optional(),
    description: description.optional(),
    instructions: instructions.optional(),
  })
  .strict()
  .refine(
    (update) => Object.values(update).some((value) => value !== undefined),
    'profile needs at least one of name, description, instructions',
  );

/** What the user may change (the gateway's `updateAgent` without its `id`). */
export const agentUpdateSchema = z
  .object({
    name: name.optional(),
    description: description.optional(),
    instructions: instructions.optional(),
    allowDomains: z
      .array(
        z
          .string()
          .trim()
          .toLowerCase()
          .regex(DOMAIN, 'not a host name: use example.com (subdomains included), *.example.com or *'),
      )
      .max(MAX_DOMAINS, `at most ${MAX_DOMAINS} domains`)
      .optional(),
    /** A model id of the configured provider; `null` or "" goes back to the box's model. */
    model: z.string().trim().max(200).nullable().optional(),
    /** Whether the agent is offered `web_fetch` (the profile's `web.fetch`, issue 19 item 9). */
    webFetch: z.boolean({ message: 'webFetch is true or false' }).optional(),
    /**
     * The MCP servers of mcp.json this agent may use (profile `mcp.servers`); `null`: all of them,
     * including servers added later.
     */
    mcpServers: z
      .array(z.string().regex(SERVER_NAME, "not a server name: letters, digits, '_', '.' or '-'"))
      .max(MAX_SERVERS, `at most ${MAX_SERVERS} servers`)
      .nullable()
      .optional(),
  })
  .strict();

export type AgentUpdate = z.output<typeof agentUpdateSchema>;

/** `update` checked and normalized (domains lower-cased) for any caller; a bad field: 400 naming it. */
export function checkedUpdate(update: AgentUpdate): AgentUpdate {
  const parsed = agentUpdateSchema.safeParse(update);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map(
    (issue) => `${issue.path.join('.') || '(update)'}: ${issue.message}`,
  );
  throw new HostError(`updateAgent: ${issues.join('; ')}`, 400);
}

export type ProfileField =
  'name' | 'description' | 'instructions' | 'allowDomains' | 'model' | 'webFetch' | 'mcpServers';

export interface AppliedUpdate {
  profile: Profile;
  /** The fields whose value changed, in the update's order. */
  changed: ProfileField[];
}

/**
 * The profile after `update` (the input is not changed). `provider` is the configured provider's
 * name, recorded with a model id (null: no model, so a model id cannot be picked).
 */
export function applyUpdate(
  profile: Profile,
  update: AgentUpdate,
  provider: string | null,
  now: number,
): AppliedUpdate {
  const next: Profile = { ...profile };
  const changed: ProfileField[] = [];
  if (update.name !== undefined && update.name !== profile.name) {
    next.name = update.name;
    changed.push('name');
  }
  if (update.description !== undefined && update.description !== profile.description) {
    next.description = update.description;
    changed.push('description');
  }
  if (update.instructions !== undefined && update.instructions !== (profile.instructions ?? '')) {
    if (update.instructions === '') delete next.instructions;
    else next.instructions = update.instructions;
    changed.push('instructions');
  }
  if (update.allowDomains !== undefined) {
    const domains = [...new Set(update.allowDomains)];
    const before = profile.sandbox?.allowDomains ?? [];
    if (domains.join('\n') !== before.join('\n')) {
      next.sandbox = { ...profile.sandbox, allowDomains: domains };
      changed.push('allowDomains');
    }
  }
  if (update.model !== undefined) {
    const id = update.model ?? '';
    if (id === '') {
      if (profile.model !== undefined) changed.push('model');
      delete next.model;
      delete next.modelProvider;
    } else {
      if (provider === null)
        throw new HostError('model: no model is configured, so there is no model id to pick from', 409);
      if (id !== profile.model || provider !== profile.modelProvider) changed.push('model');
      next.model = id;
      next.modelProvider = provider;
    }
  }
  if (update.webFetch !== undefined) {
    const fetch = update.webFetch ? 'on' : 'off';
    if (fetch !== (profile.web?.fetch ?? 'on')) {
      next.web = { ...profile.web, fetch };
      changed.push('webFetch');
    }
  }
  if (update.mcpServers !== undefined) {
    const servers = update.mcpServers === null ? null : [...new Set(update.mcpServers)];
    const before = profile.mcp?.servers ?? null;
    if (JSON.stringify(servers) !== JSON.stringify(before)) {
      const { servers: _old, ...rest } = profile.mcp ?? {};
      next.mcp = servers === null ? rest : { ...rest, servers };
      if (servers === null && Object.keys(rest).length === 0) delete next.mcp;
      changed.push('mcpServers');
    }
  }
  if (changed.length > 0) next.updatedAt = now;
  return { profile: next, changed };
}
