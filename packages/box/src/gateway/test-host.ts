/** The real host on a temp data dir, with the model the test drives. */
import { createAgentHost } from '../host/agent-host.ts';
import type { LocalAgentHost } from '../host/agent-host.ts';
import type { ModelProvider } from '../providers/types.ts';

export function openTestHost(dataDir: string, model: ModelProvider): Promise<LocalAgentHost> {
  return createAgentHost({ dataDir, provider: model, env: {} });
}
