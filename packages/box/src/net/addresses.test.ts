import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { addressKind, isLocalAddress } from './addresses.ts';
import type { AddressKind } from './addresses.ts';

function expectKinds(table: Record<string, AddressKind>): void {
  for (const [address, kind] of Object.entries(table)) expect(addressKind(address), address).toBe(kind);
}

describe('address kinds', () => {
  it('public addresses', () => {
    expectKinds({
      '93.184.216.34': 'public',
      '8.8.8.8': 'public',
      '2606:4700:4700::1111': 'public',
      '2a00:1450:4001:80b::200e': 'public',
    });
  });

  it('private networks and reserved ranges', () => {
    expectKinds({
      '10.1.2.3': 'private',
      '172.16.0.1': 'private',
      '172.31.255.255': 'private',
      '192.168.0.1': 'private',
      '100.64.0.1': 'private',
      '198.18.0.1': 'private',
      '203.0.113.9': 'private',
      'fc00::1': 'private',
      'fd12:3456::1': 'private',
      '2001:db8::1': 'private',
      '3fff::1': 'private',
      '64:ff9b:1::a00:1': 'private',
      '100::1': 'private',
    });
  });

  it('this machine, link-local, multicast, broadcast and what is not an address', () => {
    expectKinds({
      '127.0.0.1': 'local',
      '127.255.0.9': 'local',
      '0.0.0.0': 'local',
      '169.254.169.254': 'local',
      '224.0.0.1': 'local',
      '255.255.255.255': 'local',
      '::1': 'local',
      '0:0:0:0:0:0:0:1': 'local',
      '::': 'local',
      '[::1]': 'local',
      'fe80::1': 'local',
      'fe80::1%eth0': 'local',
      'ff02::1': 'local',
      'example.com': 'local',
      '': 'local',
    });
  });

  it('IPv4-compatible IPv6 (::/96) is never reached, whatever it embeds', () => {
    expectKinds({
      '::8.8.8.8': 'local',
      '::808:808': 'local',
      '::127.0.0.1': 'local',
      '::10.0.0.1': 'local',
    });
  });

  it('IPv4-mapped, IPv4-translated, NAT64, 6to4 and Teredo addresses are what their IPv4 address is', () => {
    expectKinds({
      '::ffff:8.8.8.8': 'public',
      '::ffff:127.0.0.1': 'local',
      '::ffff:7f00:1': 'local',
      '::ffff:10.0.0.1': 'private',
      '::ffff:169.254.169.254': 'local',
      '::ffff:0:8.8.8.8': 'public',
      '::ffff:0:7f00:1': 'local',
      '::ffff:0:a00:1': 'private',
      '64:ff9b::8.8.8.8': 'public',
      '64:ff9b::7f00:1': 'local',
      '64:ff9b::a00:1': 'private',
      '2002:808:808::1': 'public',
      '2002:7f00:1::1': 'local',
      '2002:a00:1::': 'private',
      '2002:c0a8:101::1': 'private',
      // Teredo: server 8.8.8.8, client 8.8.8.8 / 127.0.0.1 / 10.0.0.1 (stored inverted).
      '2001:0:808:808::f7f7:f7f7': 'public',
      '2001:0:808:808::80ff:fffe': 'local',
      '2001:0:808:808::f5ff:fffe': 'private',
      '2001:0:7f00:1::f7f7:f7f7': 'local',
    });
  });

  it("this machine's own interface addresses, whatever their range", () => {
    const own = Object.values(os.networkInterfaces())
      .flatMap((entries) => entries ?? [])
      .filter((entry) => !entry.internal);
    for (const { address } of own) expect(addressKind(address), address).toBe('local');
    for (const { address, family } of own.filter((entry) => entry.family === 'IPv4')) {
      expect(addressKind(`::ffff:${address}`), `mapped ${address} (${family})`).toBe('local');
    }
  });

  it('isLocalAddress says the same', () => {
    expect(isLocalAddress('8.8.8.8')).toBe(false);
    expect(isLocalAddress('10.0.0.1')).toBe(false);
    expect(isLocalAddress('::ffff:127.0.0.1')).toBe(true);
  });
});
