/**
 * Test helper (fire-crash.test.ts), run as its own process: a real box on the data dir in argv[2]
 * whose agent has a routine due at 12:01 on a stepped clock. The clock moves to 12:01 and the box
 * SIGKILLs itself at the fire, at the point argv[3] names:
 *
 * - `inbox`: as the fire's input is about to be committed in the inbox;
 * - `inbox:2`: the run's user entry is in the ledger, its inbox row not yet marked started;
 * - `routine`: the inbox took it (on disk; its turn started at the commit), the routine book has
 *   not recorded it;
 * - `ledger` / `jsonl`: the run's turn starts (its first ledger entry / its first JSONL record);
 * - `model`: the run's turn is in its first model call.
 *
 * It prints `{agentId, routineId}` before it arms; a box that outlives its clock step prints
 * `survived` and exits 0 (the test fails on that).
 */
import { createAgentHost } from '../host/agent-host.ts';
import { scriptedProvider } from '../providers/scripted.ts';
import { WritePoints, type WriteStore } from '../stores/write-points.ts';
import type { RoutineCommand } from '../tools/update-state/schema.ts';
import { SteppedClock } from './test-clock.ts';

export const FIRE_CRASH_START = Date.UTC(2026, 5, 1, 12, 0, 0);

const [dataDir, phase] = process.argv.slice(2);
if (!dataDir || !phase) throw new Error('usage: test-fire-crash.ts <dataDir> <store[:n]|model>');
const [store, nth = '1'] = phase.split(':');
let armed = false;
let passes = 0;
const die = (): never => {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable');
};
const writePoints = new WritePoints({
  fail: (s: WriteStore) => {
    if (armed && s === store && ++passes === Number(nth)) die();
    return null;
  },
});
const model = scriptedProvider((request) => {
  if (armed && phase === 'model') die();
  // One send, then the turn ends (a run that ends before the kill ends as any run does).
  if (request.messages.at(-1)?.role === 'tool') return {};
  return { toolCalls: [{ name: 'send_message', input: { type: 'text', content: 'never' } }] };
});
const clock = new SteppedClock(FIRE_CRASH_START);
const host = await createAgentHost({
  dataDir,
  provider: model,
  env: { SENDBOX_ROUTINE_MIN_INTERVAL_S: '1' },
  routineClock: clock,
  writePoints,
});
const agent = await host.createAgent({ name: 'Routine keeper' });
const command: RoutineCommand = {
  action: 'create',
  name: 'Tick',
  schedule: '* * * * *',
  prompt: 'tick',
  timezone: 'UTC',
};
const created = await host.routines.for({ id: agent.id }).toolServices!({
  turn: 0,
  toolCallId: 'x',
}).routines!.apply(command);
const routineId = /\(id (r-[0-9a-f]+)\)/.exec(created.text)![1];
process.stdout.write(`${JSON.stringify({ agentId: agent.id, routineId })}\n`);
armed = true;
await clock.advanceTo(FIRE_CRASH_START + 60_000);
await host.idle(agent.id);
process.stdout.write('survived\n');
await host.close();
