/**
 * The runtime the CLI serves: the local host, its model chosen from the
 * environment. Without a model, the demo agent is made first (by its own
 * short-lived host, so the two never hold the data dir at once).
 */
import { createAgentHost } from '../host/agent-host.ts';
import type { AgentHost } from '../host/types.ts';
import type { OpenedHost, OpenHostOptions } from './serve.ts';
import { providerFromEnv } from '../providers/index.ts';
import { ensureDemoAgent } from './demo-agent.ts';

export async function openBoxHost(
  dataDir: string,
  options: OpenHostOptions = { unsafeHostTools: false },
  env: NodeJS.ProcessEnv = process.env,
): Promise<AgentHost | OpenedHost> {
  const sandbox = {
    unsafeHostTools: options.unsafeHostTools,
    // Which bubblewrap to run (default: `bwrap` on PATH).
    ...(env.SENDBOX_BWRAP ? { bwrap: env.SENDBOX_BWRAP } : {}),
  };
  if (options.cluster) {
    // Loaded only for a cluster: PostgreSQL, pg-boss and the S3 client are no cost of a box on files.
    const { readMasterKey } = await import('../cluster/master-key.ts');
    const { startClusterWorker } = await import('../cluster/worker.ts');
    const masterKey = await readMasterKey(env.SENDBOX_MASTER_KEY_FILE);
    const worker = await startClusterWorker({
      ...options.cluster,
      masterKey,
      masterKeySource: `the master key ${env.SENDBOX_MASTER_KEY_FILE}`,
      dataDir,
      env,
      sandbox,
    });
    return { host: worker.host, shared: worker.shared, sessionFiles: worker.sessionFiles };
  }
  if (!providerFromEnv(env).status.configured) await ensureDemoAgent(dataDir);
  return createAgentHost({ dataDir, env, sandbox });
}
