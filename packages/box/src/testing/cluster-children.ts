/**
 * Cluster workers in processes of their own (tests only): each runs testing/cluster-worker-child.ts
 * (its scripted model answers every turn from the conversation alone), over the test's database,
 * bucket and schema, and is killed by the caller (`stopAll`, or a SIGKILL of its own).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startClusterWorker, type ClusterWorker, type ClusterWorkerOptions } from '../cluster/worker.ts';
import { scriptedProvider } from '../providers/scripted.ts';
import { until } from './processes.ts';

const CHILD = fileURLToPath(new URL('./cluster-worker-child.ts', import.meta.url));

export interface WorkerProcessConfig {
  databaseUrl: string;
  objectStoreUrl: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  schema: string;
  /** The cluster's master key, hex. */
  keyHex: string;
  dataDir: string;
  /** The worker's name in the lease rows. */
  name: string;
  /** Serve its own gateway on loopback (its url and token come back in the WorkerProcess). */
  gateway?: boolean;
  /** The worker's environment (default: none of this process's). */
  env?: Record<string, string>;
}

export interface WorkerProcess {
  name: string;
  child: ChildProcess;
  dataDir: string;
  /** Its gateway, when started with one. */
  url?: string;
  token?: string;
  /** What it printed so far (stdout and stderr). */
  output(): string;
}

/** The worker processes a test started: each started and waited for until it takes jobs. */
export class WorkerProcesses {
  readonly #children: ChildProcess[] = [];

  async start(config: WorkerProcessConfig): Promise<WorkerProcess> {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, JSON.stringify(config)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#children.push(child);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await until(() => /^ready/m.test(output) || child.exitCode !== null, `${config.name} to start`, 60_000);
    const ready = /^ready(?: (\S+) (\S+))?$/m.exec(output);
    if (!ready) throw new Error(`${config.name} did not start:\n${output}`);
    return {
      name: config.name,
      child,
      dataDir: config.dataDir,
      ...(ready[1] ? { url: ready[1], token: ready[2]! } : {}),
      output: () => output,
    };
  }

  /** SIGKILLs every one still running. */
  stopAll(): void {
    for (const child of this.#children) if (child.exitCode === null) child.kill('SIGKILL');
  }
}

/**
 * A worker in this process that accepts inputs and serves, and runs no turn: a model is configured
 * (so prompts are accepted), and any call of it fails the test.
 */
export function startAcceptingWorker(
  options: Omit<ClusterWorkerOptions, 'provider' | 'takeTurns' | 'env'>,
): Promise<ClusterWorker> {
  return startClusterWorker({
    ...options,
    env: {},
    provider: scriptedProvider(() => {
      throw new Error('a worker that runs no turn was asked to run one');
    }),
    takeTurns: false,
  });
}
