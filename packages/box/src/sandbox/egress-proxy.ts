/**
 * The only way out of a sandbox: an HTTP proxy on a unix socket that is bound
 * into the sandbox (socat inside turns it into 127.0.0.1:3128). It serves
 * `CONNECT host:port` (HTTPS and other TLS) and absolute-URL plain HTTP
 * requests, for hosts on the agent's allowlist only, and never to a loopback,
 * link-local or unspecified address, whatever a name resolves to: the box's
 * gateway and other local services stay out of reach.
 */
import { createHash } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import http from 'node:http';
import net from 'node:net';
import { chmod, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { familyOf, isLocalAddress, isPublicAddress } from '../net/addresses.ts';

export interface EgressPolicy {
  /** Domains the agent may reach; `example.com` also allows its subdomains. `*` allows any public host. */
  allowDomains: readonly string[];
}

export interface EgressProxyOptions {
  /** Name resolution (tests point names at local listeners). */
  resolve?: (host: string) => Promise<string[]>;
  /** Addresses never connected to; default: this machine, link-local, multicast (isLocalAddress). */
  forbidden?: (address: string) => boolean;
}

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

async function defaultResolve(host: string): Promise<string[]> {
  if (net.isIP(host)) return [host];
  return (await lookup(host, { all: true })).map((entry) => entry.address);
}

export class EgressProxy {
  private readonly server: http.Server;
  private readonly sockets = new Set<net.Socket>();
  private readonly resolve: (host: string) => Promise<string[]>;
  private readonly forbidden: (address: string) => boolean;

  private constructor(
    readonly socketPath: string,
    private policy: EgressPolicy,
    options: EgressProxyOptions,
  ) {
    this.resolve = options.resolve ?? defaultResolve;
    this.forbidden = options.forbidden ?? isLocalAddress;
    this.server = http.createServer((req, res) => void this.forward(req, res));
    this.server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
      void this.tunnel(req, client, head);
    });
    this.server.on('connection', (socket: net.Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
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

  /** The address to connect to, or why not (said to the program in the sandbox). */
  private async admit(host: string): Promise<{ address: string } | { denied: string }> {
    if (!domainAllowed(host, this.policy.allowDomains)) {
      return {
        denied:
          `sendbox: network access to ${host} is not allowed for this agent ` +
          `(allowed: ${this.policy.allowDomains.join(', ') || 'none'}). ` +
          'The user can add the domain to the agent profile (sandbox.allowDomains).',
      };
    }
    let addresses: string[];
    try {
      addresses = await this.resolve(host.replace(/^\[|\]$/g, ''));
    } catch (error) {
      return { denied: `sendbox: cannot resolve ${host}: ${(error as Error).message}` };
    }
    const named = domainAllowed(
      host,
      this.policy.allowDomains.filter((rule) => rule.trim() !== '*'),
    );
    // `*` means public hosts: a private or special address needs its name listed.
    const address = addresses.find((a) => !this.forbidden(a) && (named || isPublicAddress(a, familyOf(a))));
    if (address === undefined) {
      return {
        denied:
          `sendbox: ${host} resolves to a local address (${addresses.join(', ')}), which sandboxes never reach` +
          (named ? '' : ' (a private address needs its name listed, not "*")'),
      };
    }
    return { address };
  }

  private async tunnel(req: http.IncomingMessage, client: net.Socket, head: Buffer): Promise<void> {
    client.on('error', () => client.destroy());
    const target = splitHostPort(req.url ?? '', 443);
    const admitted = target ? await this.admit(target.host) : { denied: 'sendbox: bad CONNECT target' };
    if ('denied' in admitted || !target) {
      const why = 'denied' in admitted ? admitted.denied : '';
      client.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n${why}\n`);
      return;
    }
    const upstream = net.connect({ host: admitted.address, port: target.port });
    this.sockets.add(upstream);
    upstream.on('close', () => this.sockets.delete(upstream));
    upstream.once('connect', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', (error) => {
      if (client.writable && !upstream.readableEnded) {
        client.end(`HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\nsendbox: ${error.message}\n`);
      }
      client.destroy();
    });
    client.on('close', () => upstream.destroy());
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
    const admitted = await this.admit(url.hostname);
    if ('denied' in admitted) {
      res.writeHead(403, { 'Content-Type': 'text/plain' }).end(`${admitted.denied}\n`);
      return;
    }
    const headers = { ...req.headers };
    delete headers['proxy-connection'];
    delete headers['proxy-authorization'];
    const upstream = http.request(
      {
        host: admitted.address,
        port: Number(url.port || 80),
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
