/**
 * `sendbox serve`: take the data dir's lock (one box per data dir), build the UI if needed, open the host on the data dir,
 * start the gateway, say where it is and which model runs (or how to set one
 * up), and shut down cleanly on SIGINT/SIGTERM.
 */
import { sendboxCommand } from './command-name.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pc from 'picocolors';
import { agentFiles, bindAddress, boxAgentFolders, parsePublicUrl, startGateway } from '../gateway/index.ts';
import { pageLinks } from '../gateway/links.ts';
import type { RunningGateway, SharedGatewayKeys } from '../gateway/index.ts';
import type { SessionFiles } from '../search/session-files.ts';
import type { AgentHost } from '../host/types.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { ensureWebBuild, WEB_DIST_DIR } from './web-build.ts';

export interface ServeOptions {
  host: string;
  /** `--public-url`: served beyond loopback behind a TLS proxy (gateway/public-url.ts). */
  publicUrl?: string;
  port: number;
  dataDir: string;
  /** Build the web UI when missing or stale (default true). */
  build: boolean;
  /** Log one line per request (never bodies). */
  verbose: boolean;
  /** Run tools on the host, unconfined, when bubblewrap cannot start (docs/sandbox.md). */
  unsafeHostTools?: boolean;
  /** `--database-url`/`--object-store-url`: a worker of a cluster (docs/cluster.md). */
  cluster?: ClusterLocation;
}

/** Where a cluster's shared state is: its PostgreSQL and its bucket. */
export interface ClusterLocation {
  databaseUrl: string;
  objectStoreUrl: string;
  /** The schema (default `sendbox`; tests give each run its own). */
  schema?: string;
}

export interface Terminal {
  out(line: string): void;
  err(line: string): void;
}

export interface OpenHostOptions {
  unsafeHostTools: boolean;
  /** Open the host as a worker of this cluster. */
  cluster?: ClusterLocation;
}

/** A host whose gateway shares its token, session key and sessions with other gateways (a cluster worker's). */
export interface OpenedHost {
  host: AgentHost;
  shared: SharedGatewayKeys;
  /** Where the message search reads the sessions (a cluster worker's copy of the rows). */
  sessionFiles: SessionFiles;
}

/** Opens the runtime on a data dir; the CLI's one seam to the host runtime. */
export type OpenHost = (dataDir: string, options: OpenHostOptions) => Promise<AgentHost | OpenedHost>;

export interface RunningBox {
  gateway: RunningGateway;
  host: AgentHost;
  /** Stops the gateway (no new requests, streams ended), then lets running turns settle and closes the host. */
  stop(): Promise<void>;
}

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.HOME ?? os.homedir(), 'agent-data');
}

export function boxVersion(): string {
  const manifest = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version?: string;
  };
  return manifest.version ?? '0.0.0';
}

export async function serve(
  options: ServeOptions,
  openHost: OpenHost,
  terminal: Terminal,
): Promise<RunningBox> {
  const dataDir = path.resolve(options.dataDir);
  // Before the lock and the host: a bad address is the user's typo, not a reason to touch the data dir.
  const publicUrl = options.publicUrl === undefined ? undefined : parsePublicUrl(options.publicUrl);
  if (options.host !== undefined) bindAddress(options.host, publicUrl);
  pageLinks(); // a bad SENDBOX_CURSOR_AGENT_URL stops the start, with what to set
  // Before anything touches the data dir: a second box must not recover, write or serve it.
  let stop: (() => Promise<void>) | null = null;
  const lock = await lockDataDir(dataDir, {
    onLost: (reason) => {
      // Another box may now take the path: this one must not write there any more.
      terminal.err(pc.red(`${reason}; stopping`));
      process.exitCode = 1;
      void stop?.();
    },
  });
  let host: AgentHost;
  let shared: SharedGatewayKeys | undefined;
  let sessionFiles: SessionFiles | undefined;
  try {
    if (options.build) await ensureWebBuild((line) => terminal.err(pc.dim(line)));
    const opened = await openHost(dataDir, {
      unsafeHostTools: options.unsafeHostTools ?? false,
      ...(options.cluster ? { cluster: options.cluster } : {}),
    });
    if ('shared' in opened) ({ host, shared, sessionFiles } = opened);
    else host = opened;
  } catch (error) {
    lock.release();
    throw error;
  }
  // As the user's shell runs it (cli/command-name.ts): printed below, and named by the sign-in page.
  const loginCommand = sendboxCommand(
    dataDir === path.resolve(defaultDataDir()) ? 'login' : `login --data-dir ${dataDir}`,
  );
  let gateway: RunningGateway;
  try {
    gateway = await startGateway({
      host,
      files: agentFiles(host, boxAgentFolders(dataDir)),
      dataDir,
      webRoot: WEB_DIST_DIR,
      version: boxVersion(),
      bindHost: options.host,
      ...(publicUrl ? { publicUrl } : {}),
      ...(shared ? { shared } : {}),
      ...(sessionFiles ? { sessionFiles } : {}),
      port: options.port,
      loginCommand,
      ...(options.verbose ? { logRequest: (line: string) => terminal.err(pc.dim(line)) } : {}),
      logError: (message) => terminal.err(pc.red(message)),
    });
  } catch (error) {
    await host.close();
    lock.release();
    throw error;
  }
  // Informational (a second box names this address); a failure to write it does not stop the box.
  await lock.announce(gateway.url).catch(() => undefined);

  const status = host.modelStatus();
  terminal.out(`sendbox is running at ${pc.bold(gateway.userUrl)}`);
  if (gateway.userUrl !== gateway.url)
    terminal.out(pc.dim(`(listening on ${gateway.bindHost}:${gateway.port})`));
  terminal.out(`open this link to sign in (it works once, for 5 minutes): ${pc.bold(gateway.loginUrl())}`);
  terminal.out(pc.dim(`\`${loginCommand}\` prints a fresh one.`));
  terminal.out(`data dir: ${dataDir}`);
  if (status.configured) {
    terminal.out(`model: ${status.provider ?? 'unknown'} ${status.model ?? ''}`.trimEnd());
  } else {
    terminal.out(pc.yellow(status.howToConfigure));
    terminal.out('Until then the UI shows a read-only demo agent.');
  }
  const sandbox = host.sandboxStatus();
  if (sandbox.mode === 'unsafe-host') terminal.err(pc.red(pc.bold(sandbox.detail)));
  if (sandbox.mode === 'unavailable') {
    terminal.err(pc.yellow(`The shell tool is disabled: ${sandbox.reason}.`));
    terminal.err(pc.yellow(sandbox.fix));
  }
  terminal.out(pc.dim('Press Ctrl+C to stop.'));

  let stopping: Promise<void> | null = null;
  stop = () => {
    stopping ??= (async () => {
      await gateway.close();
      await host.close();
      lock.release();
    })();
    return stopping;
  };
  return { gateway, host, stop };
}
