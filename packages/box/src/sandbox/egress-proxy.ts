/**
 * The only way out of a sandbox: an HTTP proxy on a unix socket that is bound
 * into the sandbox (socat inside turns it into 127.0.0.1:3128). It serves
 * `CONNECT host:port` (HTTPS and other TLS) and absolute-URL plain HTTP
 * requests, for hosts on the agent's allowlist only. Where a name may connect to
 * is decided by the outbound module (net/reach.ts): never to this machine (its
 * loopback or any of its interfaces' addresses), link-local or multicast, whatever
 * a name resolves to, so the box's gateway and other local services stay out of
 * reach; with `*`, public addresses only.
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import { chmod, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { OutboundError } from '../net/errors.ts';
import { connectChecked } from '../net/reach.ts';
import type { NetworkView } from '../net/reach.ts';

export interface EgressPolicy {
  /** Domains the agent may reach; `example.com` also allows its subdomains. `*` allows any public host. */
  allowDomains: readonly string[];
}

export interface EgressProxyOptions {
  /** Name resolution and address rules; default the system's (tests point names at local listeners). */
  network?: NetworkView;
  /** Connections from the sandbox open at once (default 64). */
  maxConnections?: number;
}

/**
 * An agent's connections through its proxy at once. Each holds up to two of
 * the box's descriptors (the sandbox's side, the host's); without a bound one
 * agent opening thousands used up the box's and new gateway connections failed.
 */
export const DEFAULT_MAX_PROXY_CONNECTIONS = 64;

/** How long a name lookup and connect may take before the program in the sandbox is told. */
const CONNECT_TIMEOUT_MS = 15_000;

export function normalizeDomain(domain: string): string {
  return domain.trim().toLowerCase().replace(/\.$/, '');
}

export function domainAllowed(host: string, allow: readonly string[]): boolean {
  const name = normalizeDomain(host.replace(/^\[|\]$/g, ''));
  return allow.some((entry) => {
    const rule = normalizeDomain(entry);
    return rule === '*' || name === rule || name.endsWith(`.${rule}`);
  });
}

export class EgressProxy {
  private readonly server: http.Server;
  private readonly sockets = new Set<net.Socket>();
  /** Connections from the sandbox (the other sockets are upstream). */
  private clients = 0;

  private constructor(
    readonly socketPath: string,
    private policy: EgressPolicy,
    private readonly options: EgressProxyOptions,
  ) {
    const limit = options.maxConnections ?? DEFAULT_MAX_PROXY_CONNECTIONS;
    this.server = http.createServer((req, res) => void this.forward(req, res));
    this.server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
      void this.tunnel(req, client, head);
    });
    this.server.on('connection', (socket: net.Socket) => {
      if (this.clients >= limit) {
        // Said before any request is read, and closed at once: a refusal holds no descriptor for long.
        socket.on('error', () => socket.destroy());
        socket.end(
          'HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n' +
            `sendbox: this agent already has ${limit} connections open through its proxy, the most it may; ` +
            'close some, or wait for them to end, and retry.\n',
        );
        socket.destroySoon();
        return;
      }
      this.clients += 1;
      this.sockets.add(socket);
      socket.on('close', () => {
        this.clients -= 1;
        this.sockets.delete(socket);
      });
    });
  }

  /** Listens on `socketPath` (replacing a stale socket), connectable by the sandbox user. */
  static async start(socketPath: string, policy: EgressPolicy, options: EgressProxyOptions = {}) {
    await rm(socketPath, { force: true });
    const proxy = new EgressProxy(socketPath, policy, options);
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen(socketPath, () => resolve());
    });
    // The sandbox user may differ from the box's: the socket is reachable only where it is bound in.
    await chmod(socketPath, 0o666);
    return proxy;
  }

  setPolicy(policy: EgressPolicy): void {
    this.policy = policy;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await rm(this.socketPath, { force: true });
  }

  /** A connection to `host:port` for the sandbox, or the status and words that say why not. */
  private async open(
    host: string,
    port: number,
  ): Promise<{ socket: net.Socket } | { status: number; denied: string }> {
    if (!domainAllowed(host, this.policy.allowDomains)) {
      return {
        status: 403,
        denied:
          `sendbox: network access to ${host} is not allowed for this agent ` +
          `(allowed: ${this.policy.allowDomains.join(', ') || 'none'}). ` +
          'The user can add the domain to the agent profile (sandbox.allowDomains).',
      };
    }
    // `*` means public hosts: a private address needs its name listed. This machine never.
    const named = domainAllowed(
      host,
      this.policy.allowDomains.filter((rule) => rule.trim() !== '*'),
    );
    try {
      const socket = await connectChecked(
        host,
        port,
        { reach: named ? 'private' : 'public' },
        { timeoutMs: CONNECT_TIMEOUT_MS, ...(this.options.network ? { network: this.options.network } : {}) },
      );
      this.track(socket);
      return { socket };
    } catch (error) {
      if (!(error instanceof OutboundError)) throw error;
      if (error.failure !== 'refused') return { status: 502, denied: `sendbox: ${error.message}` };
      return {
        status: 403,
        denied:
          `sendbox: ${error.message}; sandboxes never reach this machine` +
          (named
            ? ''
            : ', and with "*" only public addresses (a private one needs its name listed, not "*")'),
      };
    }
  }

  private track(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
  }

  private async tunnel(req: http.IncomingMessage, client: net.Socket, head: Buffer): Promise<void> {
    client.on('error', () => client.destroy());
    const target = splitHostPort(req.url ?? '', 443);
    const opened = target
      ? await this.open(target.host, target.port)
      : { status: 400, denied: 'sendbox: bad CONNECT target (expected host:port)' };
    if ('denied' in opened) {
      const reason =
        opened.status === 403 ? 'Forbidden' : opened.status === 400 ? 'Bad Request' : 'Bad Gateway';
      client.end(
        `HTTP/1.1 ${opened.status} ${reason}\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${opened.denied}\n`,
      );
      return;
    }
    const upstream = opened.socket;
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    if (client.destroyed) return void upstream.destroy();
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  }

  private async forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
      if (url.protocol !== 'http:')
        throw new Error('only http:// URLs are proxied; use https through CONNECT');
    } catch (error) {
      res.writeHead(400, { 'Content-Type': 'text/plain' }).end(`sendbox: ${(error as Error).message}\n`);
      return;
    }
    const opened = await this.open(url.hostname, Number(url.port || 80));
    if ('denied' in opened) {
      res.writeHead(opened.status, { 'Content-Type': 'text/plain' }).end(`${opened.denied}\n`);
      return;
    }
    const headers = { ...req.headers };
    delete headers['proxy-connection'];
    delete headers['proxy-authorization'];
    const upstream = http.request(
      {
        createConnection: () => opened.socket,
        method: req.method,
        path: `${url.pathname}${url.search}`,
        headers: { ...headers, host: url.host },
      },
      (response) => {
        // One request per connection: the client's end is its signal that the response is over.
        const { connection: _c, 'keep-alive': _k, ...headers } = response.headers;
        res.writeHead(response.statusCode ?? 502, { ...headers, connection: 'close' });
        response.pipe(res);
      },
    );
    upstream.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'Content-Type': 'text/plain' });
      res.end(`sendbox: ${error.message}\n`);
    });
    req.pipe(upstream);
  }
}

function splitHostPort(target: string, defaultPort: number): { host: string; port: number } | null {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(target);
  if (!match?.[1]) return null;
  const port = match[2] === undefined ? defaultPort : Number(match[2]);
  if (port < 1 || port > 65535) return null;
  return { host: match[1], port };
}

/** One proxy per agent that has an allowlist, started on its first networked command. */
export class EgressProxies {
  private readonly proxies = new Map<string, Promise<EgressProxy>>();

  constructor(
    private readonly runDir: string,
    private readonly options: EgressProxyOptions = {},
  ) {}

  /** The socket of the agent's proxy, or null when the agent may reach no host. */
  async socketFor(agentKey: string, policy: EgressPolicy): Promise<string | null> {
    if (policy.allowDomains.length === 0) return null;
    let pending = this.proxies.get(agentKey);
    if (!pending) {
      const name = createHash('sha256').update(agentKey).digest('hex').slice(0, 16);
      pending = (async () => {
        await mkdir(this.runDir, { recursive: true, mode: 0o700 });
        return EgressProxy.start(path.join(this.runDir, `egress-${name}.sock`), policy, this.options);
      })();
      this.proxies.set(agentKey, pending);
      pending.catch(() => this.proxies.delete(agentKey));
    }
    const proxy = await pending;
    proxy.setPolicy(policy); // the profile may have changed since the proxy started
    return proxy.socketPath;
  }

  /** Stops an agent's proxy (the agent was deleted). */
  async release(agentKey: string): Promise<void> {
    const pending = this.proxies.get(agentKey);
    this.proxies.delete(agentKey);
    const proxy = await pending?.catch(() => null);
    await proxy?.close();
  }

  async close(): Promise<void> {
    const all = await Promise.allSettled([...this.proxies.values()]);
    this.proxies.clear();
    for (const p of all) if (p.status === 'fulfilled') await p.value.close();
  }
}
