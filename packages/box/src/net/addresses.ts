/**
 * What an IP address is: public, or one of the special ranges (this machine,
 * private networks, link-local, documentation, multicast...). One owner for
 * both ways out of the box that must not reach the host's own network: the
 * gateway's image proxy and the sandboxes' egress proxy.
 */
import net from 'node:net';

/**
 * Addresses no public host on the internet has: this machine, private networks and special
 * ranges. Two lists, because a BlockList checks an IPv4 address against IPv6 rules as
 * `::ffff:a.b.c.d`, and the IPv6 list refuses every IPv4-mapped address.
 */
const SPECIAL_IPV4 = new net.BlockList();
const SPECIAL_IPV6 = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  SPECIAL_IPV4.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 127], // unspecified and loopback
  ['::ffff:0:0', 96], // IPv4-mapped: would reach any IPv4 address, private ones included
  ['64:ff9b::', 96], // NAT64, the same
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16], // 6to4 embeds an IPv4 address
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10],
  ['ff00::', 8], // multicast
] as const) {
  SPECIAL_IPV6.addSubnet(prefix, bits, 'ipv6');
}

export function isPublicAddress(address: string, family: 4 | 6): boolean {
  return family === 4 ? !SPECIAL_IPV4.check(address, 'ipv4') : !SPECIAL_IPV6.check(address, 'ipv6');
}

/** Addresses a sandbox never reaches, even through a name listed explicitly: this machine, link-local, multicast. */
const LOCAL_IPV4 = new net.BlockList();
const LOCAL_IPV6 = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['224.0.0.0', 3], // multicast, reserved, broadcast
] as const) {
  LOCAL_IPV4.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 127],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  LOCAL_IPV6.addSubnet(prefix, bits, 'ipv6');
}

/** This machine, link-local or multicast; an IPv4-mapped IPv6 address is judged as its IPv4 address. */
export function isLocalAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  const v4 = mapped ? mapped[1]! : address;
  if (net.isIPv4(v4)) return LOCAL_IPV4.check(v4, 'ipv4');
  return net.isIPv6(address) ? LOCAL_IPV6.check(address, 'ipv6') : false;
}

export function familyOf(address: string): 4 | 6 {
  return net.isIPv4(address) ? 4 : 6;
}
