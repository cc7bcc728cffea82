/**
 * What an IP address is, for every way out of the box (the image proxy, web_fetch, MCP over
 * HTTP, the sandboxes' egress proxy): `public`, `private` (a network no public host is on:
 * RFC 1918, CGNAT, unique-local, documentation, benchmarking...) or `local` (this machine and
 * what no request should ever reach: loopback, unspecified, every address of this machine's own
 * interfaces, link-local with the cloud metadata service, multicast, broadcast, IPv4-compatible
 * IPv6). The one owner of address rules: callers decide which kinds they reach (net/reach.ts).
 */
import net from 'node:net';
import os from 'node:os';

export type AddressKind = 'public' | 'private' | 'local';

/** The stricter of two kinds: local beats private beats public. */
function stricter(a: AddressKind, b: AddressKind): AddressKind {
  return a === 'local' || b === 'local' ? 'local' : a === 'private' || b === 'private' ? 'private' : 'public';
}

function blockList(family: 'ipv4' | 'ipv6', ranges: ReadonlyArray<readonly [string, number]>): net.BlockList {
  const list = new net.BlockList();
  for (const [prefix, bits] of ranges) list.addSubnet(prefix, bits, family);
  return list;
}

const LOCAL_IPV4 = blockList('ipv4', [
  ['0.0.0.0', 8], // "this network": 0.0.0.0 connects to this machine
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
]);
const PRIVATE_IPV4 = blockList('ipv4', [
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.88.99.0', 24], // deprecated 6to4 relays
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation
  ['203.0.113.0', 24], // documentation
]);
const LOCAL_IPV6 = blockList('ipv6', [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
]);
const PRIVATE_IPV6 = blockList('ipv6', [
  ['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215): where it embeds IPv4 depends on the network
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments (Teredo, 2001::/32, is judged by what it embeds)
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation (RFC 9637)
  ['5f00::', 16], // SRv6 segment identifiers
  ['fc00::', 7], // unique local
  ['fec0::', 10], // deprecated site-local
]);

/** The eight 16-bit words of an IPv6 address (a zone id is dropped), or null if it is not one. */
function ipv6Words(address: string): number[] | null {
  const bare = address.replace(/%.*$/, '');
  if (!net.isIPv6(bare)) return null;
  let text = bare.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((w) => parseInt(w, 16)));
  const front = parse(head);
  if (tail === undefined) return front;
  const back = parse(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

function ipv4From(high: number, low: number): string {
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/** One spelling per IPv6 address, so this machine's addresses compare by value. */
function canonicalIpv6(words: readonly number[]): string {
  return new net.SocketAddress({ address: words.map((w) => w.toString(16)).join(':'), family: 'ipv6' })
    .address;
}

/**
 * The addresses of this machine's interfaces. Re-read (about 50 µs: one getifaddrs) when an
 * address is checked that was not checked since the last read, and at most a second after the
 * last read otherwise: an interface that comes up later (DHCP, a VPN, a container bridge) is
 * refused from the first request to its address, with no timer and no cost on repeat traffic.
 */
const OWN_ADDRESSES_FRESH_MS = 1_000;
let ownAddresses = new Set<string>();
let ownReadAt = -Infinity;
let checkedSinceRead = new Set<string>();

function readOwnAddresses(): void {
  const found = new Set<string>();
  for (const entries of Object.values(os.networkInterfaces())) {
    for (const entry of entries ?? []) {
      const words = entry.family === 'IPv6' ? ipv6Words(entry.address) : null;
      found.add(words ? canonicalIpv6(words) : entry.address);
    }
  }
  ownAddresses = found;
  ownReadAt = performance.now();
  checkedSinceRead = new Set();
}

/** Whether `canonical` (an IPv4 address, or an IPv6 one in canonical form) is on one of this machine's interfaces. */
function isOwnAddress(canonical: string): boolean {
  if (ownAddresses.has(canonical)) return true;
  if (performance.now() - ownReadAt > OWN_ADDRESSES_FRESH_MS || !checkedSinceRead.has(canonical)) {
    readOwnAddresses();
    checkedSinceRead.add(canonical);
  }
  return ownAddresses.has(canonical);
}

function ipv4Kind(address: string): AddressKind {
  if (LOCAL_IPV4.check(address, 'ipv4') || isOwnAddress(address)) return 'local';
  return PRIVATE_IPV4.check(address, 'ipv4') ? 'private' : 'public';
}

function ipv6Kind(words: readonly number[]): AddressKind {
  const canonical = canonicalIpv6(words);
  if (LOCAL_IPV6.check(canonical, 'ipv6') || isOwnAddress(canonical)) return 'local';
  const [w0 = 0, w1 = 0, w2 = 0, w3 = 0, w4 = 0, w5 = 0, w6 = 0, w7 = 0] = words;
  const zeros = (from: number, to: number): boolean => words.slice(from, to).every((w) => w === 0);
  const last = ipv4From(w6, w7);
  // IPv4-compatible (::/96, deprecated by RFC 4291): Linux may carry it to the embedded IPv4
  // address through its automatic tunnel, this machine's included. No host needs it: never reached.
  if (zeros(0, 6)) return 'local';
  // Forms that embed an IPv4 address are what that address is.
  if (zeros(0, 5) && w5 === 0xffff) return ipv4Kind(last); // IPv4-mapped ::ffff:0:0/96
  if (zeros(0, 4) && w4 === 0xffff && w5 === 0) return ipv4Kind(last); // IPv4-translated ::ffff:0:0:0/96
  if (w0 === 0x64 && w1 === 0xff9b && zeros(2, 6)) return ipv4Kind(last); // NAT64 64:ff9b::/96
  if (w0 === 0x2002) return ipv4Kind(ipv4From(w1, w2)); // 6to4 2002::/16
  if (w0 === 0x2001 && w1 === 0) {
    // Teredo 2001::/32: the server's IPv4 address, then the client's, inverted.
    const server = ipv4Kind(ipv4From(w2, w3));
    return stricter(server, ipv4Kind(ipv4From(~w6 & 0xffff, ~w7 & 0xffff)));
  }
  return PRIVATE_IPV6.check(canonical, 'ipv6') ? 'private' : 'public';
}

/** What `address` (an IPv4 or IPv6 literal; brackets and a zone id allowed) is; anything else counts as `local`. */
export function addressKind(address: string): AddressKind {
  const bare = address.replace(/^\[(.*)\]$/, '$1');
  if (net.isIPv4(bare)) return ipv4Kind(bare);
  const words = ipv6Words(bare);
  return words ? ipv6Kind(words) : 'local';
}

/** This machine, link-local or multicast: what a sandbox never reaches, even through a name listed explicitly. */
export function isLocalAddress(address: string): boolean {
  return addressKind(address) === 'local';
}
