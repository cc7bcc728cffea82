/**
 * MCP stdio servers, confined as agents run them (docs/mcp-client.md), with the real SDK test
 * server (packages/box/src/mcp/testing/stdio-server.mjs):
 *
 * - cold: the first call of an agent to a server not running (spawn under bubblewrap +
 *   initialize + tools/list + the call, as the `mcp` tool does it), p50 over N agents; target < 1.5 s;
 * - warm: a call to a running server (echo, whose own time is ~0), through the `mcp` tool
 *   (schema check, result record) and through the client alone, p50 and p99; targets < 5 ms, < 20 ms;
 * - 20 agents each holding a warm server: RSS of the box, and RSS and PSS of the servers' processes.
 *
 *   npx tsx bench/mcp-stdio.ts [agents=20] [warmCalls=500]
 */
import { readdir, readFile, rm, writeFile, mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAgentHost, scriptedProvider } from '@sendbox/box';
import { mcpTool } from '../packages/box/src/tools/mcp/index.ts';
import { noScrub } from '../packages/box/src/secrets/scrub.ts';
import { agentPaths } from '../packages/box/src/stores/files/layout.ts';
import { testServerMounts } from '../packages/box/src/mcp/testing/server-mounts.ts';

const AGENTS = Number(process.argv[2] ?? 20);
const WARM = Number(process.argv[3] ?? 500);
const root = fileURLToPath(new URL('..', import.meta.url));
const script = path.join(root, 'packages/box/src/mcp/testing/stdio-server.mjs');
const readOnly = testServerMounts(root);
const dataDir = await mkdtemp(path.join(process.env.SENDBOX_BENCH_DIR ?? os.tmpdir(), 'sendbox-bench-mcp-'));
const host = await createAgentHost({ dataDir, provider: scriptedProvider([]), env: {} });
await writeFile(
  path.join(dataDir, 'mcp.json'),
  JSON.stringify({ mcpServers: { demo: { command: 'node', args: [script], readOnly } } }),
);
console.log(`load before: ${(await readFile('/proc/loadavg', 'utf8')).trim()}`);
const rssBefore = process.memoryUsage().rss;

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
const agents: string[] = [];
const cold: number[] = [];
for (let i = 0; i < AGENTS; i++) {
  const { id } = await host.createAgent({ name: `Agent ${i}` });
  agents.push(id);
  const access = host.mcp.access(id);
  const started = performance.now();
  await access.tools('demo');
  await access.call('demo', 'echo', { text: 'cold' });
  cold.push(performance.now() - started);
}
cold.sort((a, b) => a - b);
console.log(
  `cold first call (spawn + initialize + tools/list + call), ${AGENTS} agents: p50 ${pct(cold, 0.5).toFixed(0)} ms, ` +
    `max ${cold.at(-1)!.toFixed(0)} ms   (target p50 < 1500 ms: ${pct(cold, 0.5) < 1500 ? 'met' : 'NOT met'})`,
);

const first = agents[0]!;
const access = host.mcp.access(first);
const ctx = {
  sandboxDir: agentPaths(dataDir, first).sandbox,
  env: {},
  scrub: noScrub,
  todos: [],
  now: Date.now,
  mcp: access,
  call: { turn: 1, toolCallId: 'bench' },
};
async function measure(label: string, once: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < 50; i++) await once(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < WARM; i++) {
    const started = performance.now();
    await once();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const p50 = pct(times, 0.5);
  const p99 = pct(times, 0.99);
  console.log(
    `warm ${label}, ${WARM} calls: p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms   ` +
      `(targets < 5 ms / < 20 ms: ${p50 < 5 && p99 < 20 ? 'met' : 'NOT met'})`,
  );
}
await measure('client call (echo)', () => access.call('demo', 'echo', { text: 'warm' }));
const input = mcpTool.input.parse({ server: 'demo', toolName: 'echo', args: { text: 'warm' } });
await measure('mcp tool (schema check + call + record)', () => mcpTool.run(input, ctx));

// Memory: the box's RSS, and every process of the servers' sandboxes (bubblewrap, the sandbox
// supervisor, node). RSS counts pages the processes share (node's code) once per process; PSS
// splits each shared page between its sharers, so the PSS sum is what the servers really add.
const rssAfter = process.memoryUsage().rss;
const byKind = new Map<string, { processes: number; rssKb: number; pssKb: number }>();
const sandboxes = path.join(dataDir, 'sandboxes');
for (const pid of await readdir('/proc')) {
  if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
  if (!cmdline.includes(sandboxes) && !cmdline.includes('stdio-server.mjs')) continue;
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const rollup = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8').catch(() => '');
  const kind = /^Name:\s+(\S+)/m.exec(status)?.[1] ?? '?';
  const row = byKind.get(kind) ?? { processes: 0, rssKb: 0, pssKb: 0 };
  row.processes++;
  row.rssKb += Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0);
  row.pssKb += Number(/^Pss:\s+(\d+) kB/m.exec(rollup)?.[1] ?? 0);
  byKind.set(kind, row);
}
const mb = (kb: number) => `${(kb / 1024).toFixed(0)} MB`;
let rssKb = 0;
let pssKb = 0;
let processes = 0;
for (const [kind, row] of byKind) {
  rssKb += row.rssKb;
  pssKb += row.pssKb;
  processes += row.processes;
  console.log(`  ${kind}: ${row.processes} processes, RSS ${mb(row.rssKb)}, PSS ${mb(row.pssKb)}`);
}
console.log(
  `${AGENTS} agents with a warm server: box RSS ${(rssAfter / 1024 ** 2).toFixed(0)} MB ` +
    `(+${((rssAfter - rssBefore) / 1024 ** 2).toFixed(0)} MB over the 20 servers); servers: ${processes} processes, ` +
    `RSS ${mb(rssKb)} (${(rssKb / 1024 / AGENTS).toFixed(1)} MB per server), ` +
    `PSS ${mb(pssKb)} (${(pssKb / 1024 / AGENTS).toFixed(1)} MB per server)`,
);
console.log(`load after: ${(await readFile('/proc/loadavg', 'utf8')).trim()}`);
await host.close();
await rm(dataDir, { recursive: true, force: true });
