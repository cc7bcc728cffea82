/**
 * Serving beyond loopback. By default the gateway binds loopback only: its bearer token and
 * session cookie travel in clear HTTP. A box that other machines must reach runs behind a
 * TLS-terminating reverse proxy (docs/deploy.md) and is told its public address with
 * `--public-url https://box.example.com` (or `SENDBOX_PUBLIC_URL`). Then, and only then:
 * - it may bind a non-loopback address (the proxy's upstream);
 * - it answers to that `Host` and accepts that `Origin`, besides its loopback names;
 * - the session cookie it sets on a request for the public host is `Secure`.
 */
import net from 'node:net';

export class PublicUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PublicUrlError';
  }
}

export interface PublicUrl {
  /** `https://box.example.com` (no trailing slash; a default port dropped). */
  readonly origin: string;
  /** The `Host` header values a proxy forwards for it, lower-case: `box.example.com` (and `:443`). */
  readonly hosts: readonly string[];
}

/** Parses `--public-url`; refuses anything but an https origin, with what to pass instead. */
export function parsePublicUrl(raw: string): PublicUrl {
  const where = `--public-url ${JSON.stringify(raw)}`;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new PublicUrlError(
      `${where} is not a URL; pass the address users open, e.g. https://box.example.com`,
    );
  }
  if (url.protocol !== 'https:') {
    throw new PublicUrlError(
      `${where} must be an https URL: the gateway's token and session cookie must not cross a network in clear. ` +
        'Put a TLS-terminating reverse proxy in front of the box (docs/deploy.md) and pass its https address.',
    );
  }
  if (
    url.username !== '' ||
    url.password !== '' ||
    url.search !== '' ||
    url.hash !== '' ||
    url.pathname !== '/'
  ) {
    throw new PublicUrlError(
      `${where} must be an origin only (scheme, host and optional port), without a path, query, fragment or ` +
        'credentials: the box is served at the root of its host.',
    );
  }
  const host = url.host.toLowerCase();
  const hosts = url.port === '' ? [host, `${host}:443`] : [host];
  return { origin: url.origin.toLowerCase(), hosts };
}

function isLoopback(address: string): boolean {
  const family = net.isIP(address);
  return (family === 4 && address.startsWith('127.')) || (family === 6 && address === '::1');
}

/**
 * The address to bind, or an error saying why not and what to do. Loopback is always allowed;
 * any other IP literal (`0.0.0.0`, `::`, an interface's address) only with a public URL.
 * Host names other than `localhost` are refused: a name can resolve anywhere.
 */
export function bindAddress(requested: string, publicUrl?: PublicUrl): string {
  const name = requested.trim().replace(/^\[(.*)\]$/, '$1');
  if (name.toLowerCase() === 'localhost') return '127.0.0.1';
  const family = net.isIP(name);
  if (family !== 0 && isLoopback(name)) return name;
  if (family !== 0 && publicUrl !== undefined) return name;
  if (family === 0) {
    throw new PublicUrlError(
      `refusing to listen on ${JSON.stringify(requested)}: pass an IP address to bind (127.0.0.1, ::1, ` +
        'localhost, or with --public-url an interface address, 0.0.0.0 or ::), not a host name.',
    );
  }
  throw new PublicUrlError(
    `refusing to listen on ${JSON.stringify(requested)} without --public-url: the gateway's token and session ` +
      'cookies travel in clear HTTP, so it binds loopback addresses only (127.0.0.1, ::1, localhost). ' +
      'To serve other machines, run it behind a TLS-terminating reverse proxy and pass ' +
      '--public-url https://<its name> (docs/deploy.md); for yourself alone, forward the port over SSH: ' +
      'ssh -L 1340:127.0.0.1:1340 <this host>.',
  );
}

/** Where the box answers on its own machine: a wildcard bind (`0.0.0.0`, `::`) on loopback. */
export function loopbackHost(boundHost: string): string {
  const host = boundHost.toLowerCase();
  return host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
}

/** A host as a URL's authority writes it: an IPv6 literal in brackets. */
export function authorityHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
