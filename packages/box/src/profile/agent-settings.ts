/** An agent's settings as the settings dialog shows them (gateway `getAgent`, `updateAgent`). */
import type { ModelProvider } from '../providers/types.ts';
import type { Profile } from '../stores/files/profile.ts';

export interface AgentSettings {
  id: string;
  name: string;
  description: string;
  instructions: string;
  allowDomains: string[];
  /** Whether the agent is offered `web_fetch` (false: its profile says `web: {fetch: "off"}`). */
  webFetch: boolean;
  /** The agent's own model id, or null for the box's model. */
  model: string | null;
  /** False when the agent's model was picked for another provider than the one configured now (it is then unused). */
  modelApplies: boolean;
  /** The configured provider and its model (what the agent uses without a model of its own); null without one. */
  provider: string | null;
  defaultModel: string | null;
  /** The MCP servers of mcp.json this agent may use (profile `mcp.servers`), or null: all of them. */
  mcpServers: string[] | null;
}

export function agentSettingsOf(id: string, profile: Profile, provider: ModelProvider | null): AgentSettings {
  return {
    id,
    name: profile.name,
    description: profile.description,
    instructions: profile.instructions ?? '',
    allowDomains: [...(profile.sandbox?.allowDomains ?? [])],
    webFetch: profile.web?.fetch !== 'off',
    model: profile.model ?? null,
    modelApplies:
      profile.model !== undefined &&
      provider !== null &&
      profile.modelProvider === provider.provider &&
      provider.withModel !== undefined,
    provider: provider?.provider ?? null,
    defaultModel: provider?.model ?? null,
    mcpServers: profile.mcp?.servers ? [...profile.mcp.servers] : null,
  };
}
