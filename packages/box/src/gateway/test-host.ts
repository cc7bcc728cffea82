/** The real host on a temp data dir, with the model the test drives. */
import { createAgentHost } from '../host/agent-host.ts';
import type { AgentHostOptions, LocalAgentHost } from '../host/agent-host.ts';
import type { ModelProvider } from '../providers/types.ts';

export function openTestHost(
  dataDir: string,
  model: ModelProvider,
  options: Partial<AgentHostOptions> = {},
): Promise<LocalAgentHost> {
  return createAgentHost({ dataDir, provider: model, env: {}, ...options });
}
