/**
 * Grok Bot discovery over a box of 2,000 agents: 1,000 with a JSONL
 * transcript (and a profile), 1,000 with a profile and a store.db ledger only.
 * Run: npx tsx bench/list.ts [agents] [withJsonl]. Target: < 1 s.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGrokBotStore } from '../packages/txcript/src/harness/grok-bot/index.ts';
import { generateBox } from '../packages/txcript/test/fixtures/grok-bot/generate.ts';

const agents = Number(process.argv[2] ?? 2000);
const withJsonl = Number(process.argv[3] ?? Math.floor(agents / 2));
const home = await mkdtemp(join(tmpdir(), 'grok-list-bench-'));
try {
  const t0 = performance.now();
  const box = generateBox(home, { agents, withJsonl });
  console.log(
    `generated        ${agents} agents (${withJsonl} with JSONL) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  const store = createGrokBotStore(box.env);
  const times: number[] = [];
  const cpuTimes: number[] = [];
  let count = 0;
  for (let run = 0; run < 5; run++) {
    const start = performance.now();
    const cpu0 = process.cpuUsage();
    const { sessions, warnings } = await store.discover();
    times.push(performance.now() - start);
    const cpu = process.cpuUsage(cpu0);
    cpuTimes.push((cpu.user + cpu.system) / 1000);
    count = sessions.length;
    if (warnings.length > 0) console.log(`warnings: ${warnings.length}`, warnings[0]);
  }
  times.sort((a, b) => a - b);
  cpuTimes.sort((a, b) => a - b);
  console.log(`load average     ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} CPUs`);
  console.log(
    `discover()       ${count} sessions; first (cold) run ${times.at(-1)!.toFixed(0)} ms, median ${times[2]!.toFixed(0)} ms, best ${times[0]!.toFixed(0)} ms (target < 1000 ms); CPU time median ${cpuTimes[2]!.toFixed(0)} ms`,
  );
} finally {
  await rm(home, { recursive: true, force: true });
}
