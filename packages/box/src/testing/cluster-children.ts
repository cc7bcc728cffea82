/**
 * Cluster workers in processes of their own (tests only): each runs testing/cluster-worker-child.ts
 * (its scripted model answers every turn from the conversation alone), over the test's database,
 * bucket and schema, and is killed by the caller (`stopAll`, or a SIGKILL of its own).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { until } from './processes.ts';

const CHILD = fileURLToPath(new URL('./cluster-worker-child.ts', import.meta.url));

export interface WorkerProcessConfig {
  databaseUrl: string;
  objectStoreUrl: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  schema: string;
  /** The cluster's secrets key, hex. */
  keyHex: string;
  dataDir: string;
  /** The worker's name in the lease rows. */
  name: string;
}

export interface WorkerProcess {
  child: ChildProcess;
  dataDir: string;
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
    await until(() => output.includes('ready') || child.exitCode !== null, `${config.name} to start`, 60_000);
    if (!output.includes('ready')) throw new Error(`${config.name} did not start:\n${output}`);
    return { child, dataDir: config.dataDir, output: () => output };
  }

  /** SIGKILLs every one still running. */
  stopAll(): void {
    for (const child of this.#children) if (child.exitCode === null) child.kill('SIGKILL');
  }
}
