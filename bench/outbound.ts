/**
 * What the outbound module's checks cost. Two figures:
 *
 * - `addressKind`: an address seen before (a set lookup and a range check) and one never
 *   seen (the interfaces are read again: one getifaddrs);
 * - a GET over loopback, sequential: plain undici (its own Agent, no checks) against
 *   `OutboundClient` (lookup checked, pinned), on a pooled connection and on a fresh
 *   client per request (what the image proxy does).
 *
 *   npx tsx bench/outbound.ts [requests=2000]
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { Agent, fetch as undiciFetch } from 'undici';
import { addressKind, OutboundClient, SYSTEM_NETWORK } from '@sendbox/box';

const REQUESTS = Number(process.argv[2] ?? 2000);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

async function timeEach(count: number, run: () => Promise<void>): Promise<string> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    await run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return `p50 ${percentile(times, 50).toFixed(3)} ms, p99 ${percentile(times, 99).toFixed(3)} ms`;
}

let start = performance.now();
const repeats = 100_000;
for (let i = 0; i < repeats; i++) addressKind('93.184.216.34');
const seen = ((performance.now() - start) * 1000) / repeats;
start = performance.now();
const fresh = 2_000;
for (let i = 0; i < fresh; i++) addressKind(`45.${(i >> 8) & 255}.${i & 255}.7`);
const unseen = ((performance.now() - start) * 1000) / fresh;
console.log(
  `addressKind: ${seen.toFixed(2)} µs seen before, ${unseen.toFixed(1)} µs never seen (interfaces re-read)`,
);

const server = http.createServer((_req, res) => res.end('ok'));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://localhost:${(server.address() as AddressInfo).port}/`;
// The operator names localhost, so the loopback server is reachable; the checks still run.
const policy = { trustedHosts: ['localhost'] };

const plain = new Agent();
const plainPooled = await timeEach(REQUESTS, async () => {
  await (await undiciFetch(url, { dispatcher: plain })).text();
});
await plain.close();
const client = new OutboundClient({ policy, network: SYSTEM_NETWORK });
const checkedPooled = await timeEach(REQUESTS, async () => {
  await (await client.fetch(url)).text();
});
await client.close();
const plainFresh = await timeEach(REQUESTS / 4, async () => {
  const agent = new Agent();
  await (await undiciFetch(url, { dispatcher: agent })).text();
  await agent.destroy();
});
const checkedFresh = await timeEach(REQUESTS / 4, async () => {
  const once = new OutboundClient({ policy });
  await (await once.fetch(url)).text();
  await once.close();
});
server.close();

console.log(`GET over loopback, pooled:  undici ${plainPooled}; OutboundClient ${checkedPooled}`);
console.log(`GET over loopback, fresh:   undici ${plainFresh}; OutboundClient ${checkedFresh}`);
console.log(
  `load: ${os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')} (${os.cpus().length} cores)`,
);
