/**
 * Routines at scale (issue 21): 1,000 routines across 200 agents.
 *
 * 1. Scheduler overhead: the scheduler (routines/routines.ts) over real routine books (SQLite) on
 *    the system clock, every routine on `* * * * *` (1,000 fires a minute, all at :00), each fire
 *    handed to a delivery that only takes it: the CPU the process spends per minute, and how late
 *    each fire is handed over after its instant.
 * 2. Fire → turn start: a real box (createAgentHost, real files, a scripted model that answers at
 *    once), the same 1,000 routines staggered so each agent has one due a minute (200 fires a
 *    minute, all at :00); for each run, its scheduled instant → its turn's user entry (the turn's
 *    start). Targets: p50 < 100 ms, p99 < 1 s.
 *
 * Both wait for real minutes (wall time: about `minutes` × 2 plus set-up).
 *
 *   node --import tsx bench/routines.ts [agents=200] [perAgent=5] [minutes=2]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { createAgentHost, scriptedProvider } from '@sendbox/box';
import { ensurePrivateDir } from '../packages/box/src/fs/atomic.ts';
import { Routines, systemClock } from '../packages/box/src/routines/routines.ts';
import { agentPaths } from '../packages/box/src/stores/files/layout.ts';
import { WritePoints } from '../packages/box/src/stores/write-points.ts';
import type { RoutineCommand } from '../packages/box/src/tools/update-state/schema.ts';

const AGENTS = Number(process.argv[2] ?? 200);
const PER_AGENT = Number(process.argv[3] ?? 5);
const MINUTES = Number(process.argv[4] ?? 2);

const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Sleeps until `s` seconds past the next full minute. */
const untilMinute = (s = 0) => sleep(60_000 - (Date.now() % 60_000) + s * 1000);

function apply(routines: Routines, agentId: string, command: RoutineCommand) {
  return routines.for({ id: agentId }).toolServices!({ turn: 0, toolCallId: 'bench' }).routines!.apply(
    command,
  );
}

async function schedulerOverhead(): Promise<void> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'sendbox-bench-routines-'));
  const late: number[] = [];
  const routines = new Routines({
    dataDir,
    clock: systemClock,
    minIntervalS: 60,
    defaultTimeZone: 'UTC',
    deliver: (_agentId, _nonce, input) => {
      if (input.kind === 'routine') late.push(Date.now() - input.instant);
      return Promise.resolve(true);
    },
    exists: () => Promise.resolve(true),
    emit: () => undefined,
    writePoints: new WritePoints(),
  });
  const ids = Array.from({ length: AGENTS }, (_, i) => `bench-agent-${i}`);
  for (const id of ids) await ensurePrivateDir(agentPaths(dataDir, id).agentDir);
  await routines.start(ids);
  for (const id of ids)
    for (let k = 0; k < PER_AGENT; k++)
      await apply(routines, id, { action: 'create', name: `r${k}`, schedule: '* * * * *', prompt: 'tick' });
  // Measure whole minutes, from just after a minute's fires (so each window holds one burst at :00).
  await untilMinute(30);
  const cpu = process.cpuUsage();
  const started = performance.now();
  const loadBefore = load();
  await sleep(MINUTES * 60_000);
  const used = process.cpuUsage(cpu);
  const minutes = (performance.now() - started) / 60_000;
  routines.hostClosed();
  await rm(dataDir, { recursive: true, force: true });
  const sorted = late.sort((a, b) => a - b);
  console.log(
    `scheduler overhead: ${AGENTS * PER_AGENT} routines across ${AGENTS} agents, every one due each minute`,
  );
  console.log(
    `  CPU: ${((used.user + used.system) / 1000 / minutes).toFixed(0)} ms per minute ` +
      `(user ${(used.user / 1000 / minutes).toFixed(0)}, system ${(used.system / 1000 / minutes).toFixed(0)}) over ${minutes.toFixed(2)} min`,
  );
  console.log(
    `  fires handed over: ${sorted.length}; late after their instant p50 ${pct(sorted, 0.5)} ms, p99 ${pct(sorted, 0.99)} ms, max ${sorted.at(-1)} ms`,
  );
  console.log(`  loadavg before: ${loadBefore}; after: ${load()}`);
}

async function fireToTurnStart(): Promise<void> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'sendbox-bench-routines-box-'));
  const model = scriptedProvider((request) =>
    request.messages.at(-1)?.role === 'tool'
      ? {}
      : { toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'tick' } }] },
  );
  const host = await createAgentHost({ dataDir, provider: model, env: {} });
  const ids: string[] = [];
  for (let i = 0; i < AGENTS; i++) ids.push((await host.createAgent({ name: `Agent ${i}` })).id);
  // Each agent's routines on different minutes: one of them is due each minute.
  for (const id of ids)
    for (let k = 0; k < PER_AGENT; k++)
      await apply(host.routines, id, {
        action: 'create',
        name: `r${k}`,
        schedule: `${k}-59/${PER_AGENT} * * * *`,
        prompt: 'tick',
        timezone: 'UTC',
      });
  await untilMinute(1);
  const from = Date.now();
  const loadBefore = load();
  await sleep(MINUTES * 60_000);
  await untilMinute(20);
  const delays: number[] = [];
  for (const id of ids) {
    for (const entry of await host.entriesAfter(id, 0)) {
      const mark = (entry as { routine?: { instant: number } }).routine;
      if (entry.kind === 'message' && mark && mark.instant >= from)
        delays.push(entry.timestampMs - mark.instant);
    }
  }
  await host.close();
  await rm(dataDir, { recursive: true, force: true });
  const sorted = delays.sort((a, b) => a - b);
  console.log(
    `fire → turn start: a real box, ${AGENTS} agents × ${PER_AGENT} routines, ${AGENTS} fires at :00 each minute`,
  );
  console.log(
    `  runs: ${sorted.length}; instant → turn start p50 ${pct(sorted, 0.5)} ms, p99 ${pct(sorted, 0.99)} ms, max ${sorted.at(-1)} ms ` +
      '(targets: p50 < 100 ms, p99 < 1 s)',
  );
  console.log(`  loadavg before: ${loadBefore}; after: ${load()}`);
}

await schedulerOverhead();
await fireToTurnStart();
