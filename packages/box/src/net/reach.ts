/**
 * Which hosts a request of the box may reach, decided once per connection: the host's name is
 * resolved once, every address is judged by net/addresses.ts, and the connection goes to exactly
 * the addresses judged (a pinned lookup: no second lookup a rebinding DNS server could answer
 * differently). The lookup answers on a later tick, so a connect error is emitted only once the
 * socket has its error handler (a synchronous answer let an unroutable host crash the box).
 */
import dns from 'node:dns';
import net from 'node:net';
import type { LookupFunction } from 'node:net';
import { addressKind } from './addresses.ts';
import type { AddressKind } from './addresses.ts';
import { Deadline } from './deadline.ts';
import { OutboundError } from './errors.ts';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Where names point and what an address is: DNS and net/addresses.ts; tests play outside hosts with it. */
export interface NetworkView {
  resolve(hostname: string): Promise<ResolvedAddress[]>;
  kindOf(address: string): AddressKind;
  /** Certificate authorities for https instead of Node's bundled ones (a test's outside https host). */
  ca?: string;
}

export const SYSTEM_NETWORK: NetworkView = {
  async resolve(hostname) {
    const found = await dns.promises.lookup(hostname, { all: true, verbatim: true });
    return found.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }));
  },
  kindOf: addressKind,
};

/** What a caller may reach. The default reaches public addresses only. */
export interface ReachPolicy {
  /** `private` also reaches private networks (never this machine); default `public`. */
  reach?: 'public' | 'private';
  /**
   * Hosts the operator named (host names or IP literals, compared exactly, case-insensitive):
   * every address they resolve to is reached, loopback and this machine's included.
   */
  trustedHosts?: readonly string[];
}

/** A host as written in a URL or a list: lower case, no brackets, no trailing dot. */
export function normalizeHost(host: string): string {
  const bare = host
    .trim()
    .replace(/^\[(.*)\]$/, '$1')
    .toLowerCase()
    .replace(/\.$/, '');
  return net.isIPv6(bare) ? new net.SocketAddress({ address: bare, family: 'ipv6' }).address : bare;
}

/**
 * An operator's comma-separated host list (`SENDBOX_WEB_ALLOW_PRIVATE_HOSTS=nas.lan,10.0.0.7,[::1]`):
 * host names or IP literals, no scheme, port or path. Throws a message naming the bad entry.
 */
export function parseHostList(text: string | undefined, what: string): string[] {
  const hosts: string[] = [];
  for (const entry of (text ?? '').split(',')) {
    if (entry.trim() === '') continue;
    const host = normalizeHost(entry);
    const name = /^(?=[a-z0-9_])[a-z0-9_-]{1,63}(?:\.[a-z0-9_-]{1,63})*$/.test(host) && host.length <= 253;
    if (!name && net.isIP(host) === 0) {
      throw new Error(
        `${what}: ${JSON.stringify(entry.trim())} is not a host name or IP address ` +
          '(write names such as nas.lan or addresses such as 10.0.0.7, separated by commas; no scheme or port)',
      );
    }
    hosts.push(host);
  }
  return hosts;
}

const KIND_WORDS: Record<Exclude<AddressKind, 'public'>, string> = {
  private: 'a private or reserved address',
  local: 'an address of this machine (loopback or one of its interfaces), link-local, multicast or reserved',
};

/**
 * The addresses a connection to `host` may use: all of them, or an OutboundError (`refused`
 * when any address is out of reach, `unresolved` when the name has none).
 */
export async function checkHost(
  host: string,
  policy: ReachPolicy,
  network: NetworkView = SYSTEM_NETWORK,
): Promise<ResolvedAddress[]> {
  const name = normalizeHost(host);
  const literal = net.isIP(name);
  let addresses: ResolvedAddress[];
  if (literal !== 0) {
    addresses = [{ address: name, family: literal === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await network.resolve(name);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new OutboundError(
        'unresolved',
        name,
        `cannot resolve ${name}: ${code ?? (error as Error).message}`,
        {
          cause: error,
        },
      );
    }
    if (addresses.length === 0) throw new OutboundError('unresolved', name, `${name} has no address`);
  }
  if (policy.trustedHosts?.some((trusted) => normalizeHost(trusted) === name)) return addresses;
  for (const { address } of addresses) {
    const kind = network.kindOf(address);
    if (kind === 'public' || (kind === 'private' && policy.reach === 'private')) continue;
    throw new OutboundError(
      'refused',
      name,
      `refused ${name}: ${literal === 0 ? `it resolves to ${address}, ` : ''}${KIND_WORDS[kind]}`,
    );
  }
  return addresses;
}

/** A lookup that answers with addresses already checked, on a later tick (after the socket has its handlers). */
function pinnedLookup(addresses: readonly ResolvedAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    setImmediate(() => {
      if (options.all === true) {
        callback(null, [...addresses]);
      } else {
        const first = addresses[0]!;
        callback(null, first.address, first.family);
      }
    });
  };
}

/** A lookup that checks the host by `policy` and answers with its checked addresses, or the refusal. */
export function checkingLookup(policy: ReachPolicy, network: NetworkView): LookupFunction {
  return (hostname, options, callback) => {
    checkHost(hostname, policy, network).then(
      (addresses) => pinnedLookup(addresses)(hostname, options, callback),
      (error: Error) => setImmediate(() => callback(error as NodeJS.ErrnoException, '', 4)),
    );
  };
}

/**
 * A TCP connection to `host:port` through `policy` (the egress proxy's way out): resolves once
 * connected, or rejects with an OutboundError (refused, unresolved, unreachable, timeout,
 * aborted). `timeoutMs` covers the lookup and the connect. Attach an error handler at once.
 */
export async function connectChecked(
  host: string,
  port: number,
  policy: ReachPolicy,
  options: { network?: NetworkView; timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<net.Socket> {
  const name = normalizeHost(host);
  const deadline = new Deadline(name, options.timeoutMs, options.signal);
  try {
    const addresses = await deadline.race(checkHost(name, policy, options.network));
    return await new Promise<net.Socket>((resolve, reject) => {
      const socket = net.connect({ host: name, port, lookup: pinnedLookup(addresses) });
      const settle = (error?: OutboundError): void => {
        socket.off('error', onError);
        deadline.signal.removeEventListener('abort', onAbort);
        if (error === undefined) return resolve(socket);
        socket.destroy();
        reject(error);
      };
      const onError = (error: NodeJS.ErrnoException): void =>
        settle(
          new OutboundError(
            'unreachable',
            name,
            `cannot connect to ${name}:${port}: ${error.code ?? error.message}`,
            {
              cause: error,
            },
          ),
        );
      const onAbort = (): void => settle(deadline.error());
      socket.on('error', onError);
      socket.once('connect', () => settle());
      deadline.signal.addEventListener('abort', onAbort, { once: true });
      if (deadline.signal.aborted) onAbort();
    });
  } finally {
    deadline.clear();
  }
}
