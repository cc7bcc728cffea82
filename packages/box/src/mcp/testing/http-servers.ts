/**
 * Starts the loopback MCP servers of http-server.mjs (real SDK servers: Streamable HTTP, the
 * older HTTP+SSE, and one behind OAuth) as child processes, for tests and the benchmark.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('./http-server.mjs', import.meta.url));

export interface TestHttpServer {
  /** The MCP URL. */
  url: string;
  /** The OAuth server's test control URL (`oauth` only): `/test/issued`, `/test/expire`. */
  control?: string;
  stop(): Promise<void>;
}

export async function startHttpServer(
  mode: 'streamable' | 'sse' | 'oauth',
  env: Record<string, string> = {},
): Promise<TestHttpServer> {
  const child: ChildProcess = spawn(process.execPath, [script, mode], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! });
  const [first] = (await Promise.race([
    once(lines, 'line'),
    once(child, 'exit').then(([code]) => {
      throw new Error(`http-server.mjs ${mode} exited with ${String(code)} before it listened`);
    }),
  ])) as [string];
  const info = JSON.parse(first) as { url: string; control?: string };
  return {
    ...info,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill();
      await once(child, 'exit');
    },
  };
}
