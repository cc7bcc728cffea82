/** The runtime the CLI serves. */
import type { AgentHost } from '../host/types.ts';

export function openBoxHost(_dataDir: string): Promise<AgentHost> {
  return Promise.reject(new Error('the host runtime is not available yet'));
}
