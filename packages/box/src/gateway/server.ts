/**
 * Starting and stopping the gateway: bind loopback only, mint the token, load
 * the kept session key and the image domains, write `gateway.json`, and on
 * shutdown stop accepting, end event streams and take the descriptor away.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { AgentHost } from '../host/types.ts';
import { MessageSearch } from '../search/message-search.ts';
import type { SessionFiles } from '../search/session-files.ts';
import { createGatewayApp } from './app.ts';
import { removeGatewayDescriptor, writeGatewayDescriptor } from './descriptor.ts';
import type { AgentFiles } from './files.ts';
import { gatewayAddress, type GatewayAddress } from './guards.ts';
import { ImageHosts } from './image-hosts.ts';
import type { ImageFetchLimits, ImageFetchPolicy } from './image-proxy.ts';
import { authorityHost, bindAddress, loopbackHost, PublicUrlError, type PublicUrl } from './public-url.ts';
import { SessionBook, type SessionRecords } from './session-book.ts';
import { BrowserSessions, loadSessionKey, loginUrl, mintLoginCode } from './session.ts';
import { mintToken } from './token.ts';
import { preloadTokenCounter } from '../context/tokens.ts';

export const DEFAULT_GATEWAY_HOST = '127.0.0.1';
export const DEFAULT_GATEWAY_PORT = 1340;
/** How long shutdown waits for in-flight requests (an upload, say) before closing their sockets. */
export const SHUTDOWN_GRACE_MS = 10_000;
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

export class GatewayStartError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GatewayStartError';
  }
}

export interface GatewayOptions {
  host: AgentHost;
  files: AgentFiles;
  /** Where `gateway.json` goes (normally the host's data dir). */
  dataDir: string;
  webRoot: string;
  version: string;
  /** Default 127.0.0.1. Only loopback addresses, unless `publicUrl` is given (public-url.ts). */
  bindHost?: string;
  /** The https address a TLS-terminating proxy serves the box at (`--public-url`). */
  publicUrl?: PublicUrl;
  /** Default 1340; 0 picks a free port. */
  port?: number;
  logRequest?: (line: string) => void;
  logError?: (message: string) => void;
  /** How the user's shell runs `sendbox login` for this box (cli/command-name.ts); default `sendbox login`. */
  loginCommand?: string;
  /** Where remote images may be fetched from (default: public addresses, resolved by the system). */
  imagePolicy?: ImageFetchPolicy;
  imageLimits?: ImageFetchLimits;
  /**
   * The gateways of a cluster share these (cluster/cluster-keys.ts): a token and a session key kept
   * in the cluster, and one book of browser sessions. Default: a token minted at start, the data
   * dir's session.key and sessions.json.
   */
  shared?: SharedGatewayKeys;
  /** Where the message search reads the agents' sessions (default: the data dir's files; a cluster worker's copy). */
  sessionFiles?: SessionFiles;
}

/** What every gateway of a cluster has in common: a login or a session made on one holds on all. */
export interface SharedGatewayKeys {
  token: string;
  sessionKey: Buffer;
  sessions: SessionRecords;
}

export interface RunningGateway {
  /** `http://127.0.0.1:1340/` */
  readonly url: string;
  /** `https://box.example.com/` with `--public-url`, else `url`: where users open the box. */
  readonly userUrl: string;
  readonly bindHost: string;
  readonly port: number;
  readonly token: string;
  readonly descriptorPath: string;
  /** A fresh one-time login link for a browser (session.ts). */
  loginUrl(): string;
  /** Stops accepting, ends event streams, waits for in-flight requests, removes `gateway.json`. Idempotent. */
  close(): Promise<void>;
}

function listen(server: Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      server.off('listening', onListening);
      if (error.code === 'EADDRINUSE') {
        reject(
          new GatewayStartError(
            // A box on this data dir was refused earlier by the data-dir lock: this is another program,
            // or a box on another data dir.
            `port ${port} on ${host} is already in use by another program (a sendbox on another data dir, perhaps); ` +
              'stop it, or start this one on another port: --port <number>, or --port 0 for any free one',
            { cause: error },
          ),
        );
      } else {
        reject(new GatewayStartError(`cannot listen on ${host}:${port}: ${error.message}`, { cause: error }));
      }
    };
    const onListening = (): void => {
      server.off('error', onError);
      resolve(server.address() as AddressInfo);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

/**
 * The server's sockets, how many requests run on each, and how many bytes it had sent when the last
 * one ended. Node's own `closeIdleConnections` skips a socket that has not sent a request yet, and
 * browsers open such sockets ahead of need (preconnect): one of them held a shutdown for the whole
 * grace period. A socket is idle when no request runs on it and it has sent nothing since (a request
 * whose headers are still arriving is not cut).
 */
function trackRequestsPerSocket(server: Server): { closeIdle: () => void } {
  const sockets = new Map<Socket, { running: number; readAtRest: number }>();
  server.on('connection', (socket: Socket) => {
    sockets.set(socket, { running: 0, readAtRest: 0 });
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const state = sockets.get(request.socket);
    if (state === undefined) return;
    state.running++;
    response.once('close', () => {
      state.running--;
      if (state.running === 0) state.readAtRest = request.socket.bytesRead;
    });
  });
  return {
    closeIdle() {
      for (const [socket, { running, readAtRest }] of sockets) {
        if (running === 0 && socket.bytesRead === readAtRest) socket.destroy();
      }
    },
  };
}

export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  let bindHost: string;
  try {
    bindHost = bindAddress(options.bindHost ?? DEFAULT_GATEWAY_HOST, options.publicUrl);
  } catch (error) {
    if (error instanceof PublicUrlError) throw new GatewayStartError(error.message);
    throw error;
  }
  const token = options.shared?.token ?? mintToken();
  let sessionKey: Buffer;
  let sessionBook: SessionRecords;
  let imageHosts: ImageHosts;
  try {
    sessionKey = options.shared?.sessionKey ?? (await loadSessionKey(options.dataDir));
    sessionBook = options.shared?.sessions ?? (await SessionBook.open(options.dataDir));
    imageHosts = await ImageHosts.open(options.dataDir);
  } catch (error) {
    throw new GatewayStartError(
      `cannot start the gateway on ${options.dataDir}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  let address: GatewayAddress = gatewayAddress(bindHost, 0, options.publicUrl);
  const search = new MessageSearch({
    dataDir: options.dataDir,
    ...(options.sessionFiles ? { files: options.sessionFiles } : {}),
    log: options.logError ?? ((message) => console.error(message)),
  });
  const unfollow = options.host.subscribe((event) => search.observe(event));
  search.warm();
  const { app, streams } = createGatewayApp({
    host: options.host,
    token,
    sessions: new BrowserSessions(sessionKey, token, sessionBook),
    imageHosts,
    search,
    ...(options.imagePolicy ? { imagePolicy: options.imagePolicy } : {}),
    ...(options.imageLimits ? { imageLimits: options.imageLimits } : {}),
    address: () => address,
    dataDir: options.dataDir,
    webRoot: options.webRoot,
    files: options.files,
    version: options.version,
    ...(options.logRequest ? { logRequest: options.logRequest } : {}),
    logError: options.logError ?? ((message) => console.error(message)),
    ...(options.loginCommand ? { loginCommand: options.loginCommand } : {}),
  });
  const server = createAdaptorServer({ fetch: app.fetch }) as Server;
  // Node's 5 s keep-alive is far shorter than clients' (browsers and undici reuse idle sockets for longer):
  // a request sent on a socket the server is just closing fails with ECONNRESET. A longer idle time
  // makes that race rare.
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
  const sockets = trackRequestsPerSocket(server);
  const { port } = await listen(server, bindHost, options.port ?? DEFAULT_GATEWAY_PORT);
  address = gatewayAddress(bindHost, port, options.publicUrl);
  // Before the first prompt arrives, not during it (context/tokens.ts).
  setImmediate(preloadTokenCounter);

  const localHost = loopbackHost(bindHost);
  const urlHost = authorityHost(localHost);
  let descriptorPath: string;
  try {
    descriptorPath = await writeGatewayDescriptor(options.dataDir, { host: localHost, port, token });
  } catch (error) {
    server.close();
    throw new GatewayStartError(`cannot write gateway.json in ${options.dataDir}: ${String(error)}`, {
      cause: error,
    });
  }

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      streams.closeAll();
      // Open sockets hold close() open until they time out: close each as soon as no request runs on
      // it, and after a grace period cut requests that are still running.
      const sweep = setInterval(sockets.closeIdle, 50);
      const deadline = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      sockets.closeIdle();
      try {
        await stopped;
      } finally {
        clearInterval(sweep);
        clearTimeout(deadline);
      }
      unfollow();
      await search.close();
      await removeGatewayDescriptor(options.dataDir, token);
    })();
    return closing;
  };

  const url = `http://${urlHost}:${port}/`;
  const userUrl = options.publicUrl ? `${options.publicUrl.origin}/` : url;
  return {
    url,
    userUrl,
    bindHost,
    port,
    token,
    descriptorPath,
    loginUrl: () => loginUrl(userUrl, mintLoginCode(sessionKey, token)),
    close,
  };
}
