/**
 * Runs inside a network namespace of its own (`unshare --net`, started by test-netns.ts), where a
 * test may take routes away and give this "machine" any address without touching the host's
 * network. Each scenario prints one JSON line of what it saw; the test judges it.
 *
 *   unreachable    the box's /api/remoteImage against hosts with no route, an unreachable, a
 *                  blackhole and a prohibit route, IPv4 and IPv6, names and literals, http and https
 *   own-interface  a service on a public address this machine gets after start: the outbound
 *                  client, the image proxy and the egress proxy with "*" must not reach it
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startTestBox } from '../gateway/test-support.ts';
import { testModel } from '../gateway/test-model.ts';
import { fetchRemoteImage } from '../gateway/image-proxy.ts';
import { EgressProxy } from '../sandbox/egress-proxy.ts';
import { addressKind } from './addresses.ts';
import { OutboundClient } from './fetch.ts';
import { parseHostList } from './reach.ts';
import type { NetworkView, ResolvedAddress } from './reach.ts';

const ip = (...args: string[]): void => void execFileSync('ip', args, { stdio: 'pipe' });

function namedNetwork(names: Record<string, string[]>): NetworkView {
  return {
    resolve: (hostname) => {
      const found = names[hostname];
      if (!found)
        return Promise.reject(Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
      return Promise.resolve(
        found.map((address): ResolvedAddress => ({ address, family: net.isIPv6(address) ? 6 : 4 })),
      );
    },
    kindOf: addressKind,
  };
}

async function unreachable(): Promise<unknown> {
  ip('link', 'set', 'lo', 'up');
  // No default route at all; then one destination of each route type that refuses.
  ip('route', 'add', 'unreachable', '9.9.9.0/24');
  ip('route', 'add', 'blackhole', '8.8.4.0/24');
  ip('route', 'add', 'prohibit', '208.67.222.0/24');
  ip('-6', 'route', 'add', 'unreachable', '2620:fe::/48');
  ip('-6', 'route', 'add', 'blackhole', '2001:4860::/32');
  const names: Record<string, string[]> = {
    'v6only.test': ['2606:4700:4700::1111'],
    'v4only.test': ['1.1.1.1'],
    'dual.test': ['2606:4700:4700::1111', '1.1.1.1'],
    'unreachable-route.test': ['9.9.9.9'],
    'blackhole.test': ['8.8.4.4'],
    'prohibit.test': ['208.67.222.222'],
    'unreachable-route6.test': ['2620:fe::fe'],
    'blackhole6.test': ['2001:4860:4860::8888'],
  };
  const hosts = [...Object.keys(names), '1.1.1.1', '[2606:4700:4700::1111]', '9.9.9.9', '[2620:fe::fe]'];
  const box = await startTestBox(testModel(), {
    imagePolicy: namedNetwork(names),
    imageLimits: { maxBytes: 65_536, timeoutMs: 5_000, maxRedirects: 3 },
  });
  const answers: Array<{ url: string; status: number; error: string }> = [];
  try {
    for (const scheme of ['https', 'http']) {
      for (const host of hosts) {
        const url = `${scheme}://${host}/pixel.png`;
        const response = await box.api(`remoteImage?${new URLSearchParams({ url }).toString()}`);
        const body = (await response.json()) as { error?: string };
        answers.push({ url, status: response.status, error: body.error ?? '' });
      }
    }
    const stillUp = (await box.call('listAgents')).status;
    return { answers, stillUp };
  } finally {
    await box.close();
  }
}

async function ownInterface(): Promise<unknown> {
  ip('link', 'set', 'lo', 'up');
  const before = { v4: addressKind('8.8.8.8') };
  // A second interface, brought up after start, with public addresses: this machine's now.
  ip('link', 'add', 'sbx0', 'type', 'veth', 'peer', 'name', 'sbx1');
  ip('link', 'set', 'sbx0', 'up');
  ip('link', 'set', 'sbx1', 'up');
  ip('addr', 'add', '8.8.8.8/32', 'dev', 'sbx0');
  ip('-6', 'addr', 'add', '2606:4700:4700::1111/128', 'dev', 'sbx0', 'nodad');
  const hits: string[] = [];
  const service = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    res.writeHead(200, { 'Content-Type': 'image/png' }).end('a service of this machine');
  });
  await new Promise<void>((resolve) => service.listen(0, '::', resolve));
  const port = (service.address() as net.AddressInfo).port;
  const network = namedNetwork({ 'own.test': ['8.8.8.8'], 'own6.test': ['2606:4700:4700::1111'] });
  // The IPv6 address was never checked before: the interfaces are read again at once for it.
  const after = { v6: addressKind('2606:4700:4700::1111'), v4: addressKind('8.8.8.8') };
  const attempt = async (what: string, run: () => Promise<unknown>): Promise<string> => {
    try {
      await run();
      return `${what}: reached`;
    } catch (error) {
      return `${what}: ${(error as Error).message}`;
    }
  };
  const client = new OutboundClient({ network, limits: { timeoutMs: 5_000 } });
  const operator = new OutboundClient({
    network,
    policy: { trustedHosts: parseHostList('own.test', 'SENDBOX_WEB_ALLOW_PRIVATE_HOSTS') },
    limits: { timeoutMs: 5_000 },
  });
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sendbox-netns-'));
  const egress = await EgressProxy.start(path.join(dir, 'egress.sock'), { allowDomains: ['*'] }, { network });
  const connect = (target: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const socket = net.connect(egress.socketPath, () => socket.write(`CONNECT ${target} HTTP/1.1\r\n\r\n`));
      let answer = '';
      socket.on('data', (chunk: Buffer) => {
        answer += chunk.toString();
        if (answer.includes('\r\n\r\n')) socket.destroy();
      });
      socket.on('close', () => resolve(answer.split('\r\n')[0] + ' ' + answer.split('\r\n\r\n')[1]));
      socket.on('error', reject);
    });
  try {
    const outbound = [
      await attempt('literal v4', () => client.fetch(`http://8.8.8.8:${port}/literal`)),
      await attempt('literal v6', () => client.fetch(`http://[2606:4700:4700::1111]:${port}/literal6`)),
      await attempt('mapped', () => client.fetch(`http://[::ffff:8.8.8.8]:${port}/mapped`)),
      await attempt('name v4', () => client.fetch(`http://own.test:${port}/name`)),
      await attempt('name v6', () => client.fetch(`http://own6.test:${port}/name6`)),
      await attempt('image proxy', () => fetchRemoteImage(new URL(`http://own.test:${port}/image`), network)),
    ];
    const egressAnswers = [
      await connect(`own.test:${port}`),
      await connect(`8.8.8.8:${port}`),
      await connect(`[2606:4700:4700::1111]:${port}`),
    ];
    egress.setPolicy({ allowDomains: ['own.test'] });
    egressAnswers.push(await connect(`own.test:${port}`));
    const hitsBeforeOperator = [...hits];
    const trusted = await operator.fetch(`http://own.test:${port}/trusted`);
    return {
      before,
      after,
      outbound,
      egress: egressAnswers,
      hitsBeforeOperator,
      trusted: { status: trusted.status, body: await trusted.text() },
    };
  } finally {
    await Promise.all([client.close(), operator.close(), egress.close()]);
    service.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

const scenarios: Record<string, () => Promise<unknown>> = {
  unreachable,
  'own-interface': ownInterface,
};

const run = scenarios[process.argv[2] ?? ''];
if (!run) {
  console.error(`unknown scenario ${process.argv[2]}; one of ${Object.keys(scenarios).join(', ')}`);
  process.exit(2);
}
console.log(JSON.stringify(await run()));
