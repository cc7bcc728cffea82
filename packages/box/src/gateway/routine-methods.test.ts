/**
 * listRoutines and updateRoutine over real HTTP, as the routines tab uses them: create with the
 * model's own rules (a missing field or a bad schedule is a 400 naming it), run now (once, out of
 * schedule, paused or not), and the `routines` event every stream carries, so a dialog open over
 * any agent follows it.
 */
import { afterEach, expect, it } from 'vitest';
import { scriptedProvider } from '../providers/scripted.ts';
import { SseReader, startTestBox, type TestBox } from './test-support.ts';

let box: TestBox | undefined;
afterEach(async () => {
  await box?.close();
  box = undefined;
});

interface Routine {
  id: string;
  paused: boolean;
  nextRunAt: number | null;
  runs: Array<{ instant: number; status: string }>;
}

async function setUp(): Promise<{ test: TestBox; id: string }> {
  const test = await startTestBox(scriptedProvider(() => ({ text: 'ok' })));
  box = test;
  const { body } = await test.call('createAgent', { name: 'Routines' });
  return { test, id: (body as { agent: { id: string } }).agent.id };
}

async function until(check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

it('updateRoutine creates with the model’s rules: a missing field or a bad schedule is a 400 naming it', async () => {
  const { test, id } = await setUp();
  const missing = await test.call('updateRoutine', {
    agentId: id,
    action: 'create',
    name: 'N',
    schedule: '0 9 * * *',
  });
  expect(missing.status).toBe(400);
  expect(JSON.stringify(missing.body)).toMatch(/create needs prompt/);
  const bad = await test.call('updateRoutine', {
    agentId: id,
    action: 'create',
    name: 'N',
    schedule: 'every morning',
    prompt: 'p',
  });
  expect(bad.status).toBe(400);
  expect(JSON.stringify(bad.body)).toMatch(/schedule: a cron schedule has 5 fields/);
  const withId = await test.call('updateRoutine', {
    agentId: id,
    action: 'create',
    id: 'r-1',
    name: 'N',
    schedule: '0 9 * * *',
    prompt: 'p',
  });
  expect(withId.status).toBe(400);
  expect((await test.call('listRoutines', { agentId: id })).body).toEqual({ routines: [] });

  // A roster-only stream (no agent open) hears of the change too.
  const stream = new SseReader(await test.api('events'));
  const created = await test.call('updateRoutine', {
    agentId: id,
    action: 'create',
    name: 'Morning',
    schedule: '0 9 * * *',
    timezone: 'America/New_York',
    prompt: 'Say good morning.',
  });
  expect(created).toMatchObject({
    status: 200,
    body: {
      routine: { name: 'Morning', schedule: '0 9 * * *', timezone: 'America/New_York', paused: false },
    },
  });
  const events = await stream.collect((event) => event.event === 'routines');
  await stream.cancel();
  expect(events.at(-1)!.data).toEqual({ agentId: id });

  // Each change is also Grok Bot's ledger event, the conversation's thin line.
  const routineId = (created.body as { routine: Routine }).routine.id;
  await test.call('updateRoutine', { agentId: id, id: routineId, action: 'pause' });
  await test.call('updateRoutine', { agentId: id, id: routineId, action: 'resume' });
  await test.call('updateRoutine', { agentId: id, id: routineId, action: 'update', prompt: 'Say hello.' });
  await test.call('updateRoutine', { agentId: id, id: routineId, action: 'delete' });
  const opened = (await test.call('openAgent', { id })).body as { entries: Array<Record<string, unknown>> };
  expect(opened.entries.filter((entry) => entry.kind === 'event').map((entry) => entry.event)).toEqual(
    ['created', 'disabled', 'enabled', 'updated', 'deleted'].map((action) => ({
      type: 'automation-changed',
      action,
      automationId: routineId,
      automationName: 'Morning',
    })),
  );
});

it('updateRoutine run: one run now, out of schedule, paused or not; the schedule goes on; bad asks are refused', async () => {
  const { test, id } = await setUp();
  const { body } = await test.call('updateRoutine', {
    agentId: id,
    action: 'create',
    name: 'Nightly',
    schedule: '0 3 * * *',
    prompt: 'Tidy up.',
  });
  const created = (body as { routine: Routine }).routine;
  await test.call('updateRoutine', { agentId: id, id: created.id, action: 'pause' });

  const ran = await test.call('updateRoutine', { agentId: id, id: created.id, action: 'run' });
  expect(ran.status).toBe(200);
  await until(async () => {
    const [routine] = ((await test.call('listRoutines', { agentId: id })).body as { routines: Routine[] })
      .routines;
    return routine!.runs[0]?.status === 'ok';
  });
  const entries = (await test.call('openAgent', { id })).body as { entries: Array<Record<string, unknown>> };
  const runs = entries.entries.filter((entry) => entry.kind === 'message' && 'routine' in entry);
  expect(runs).toHaveLength(1);
  expect(runs[0]).toMatchObject({ hidden: true, content: '[routine] Nightly\nTidy up.' });

  // Resumed, it keeps its schedule: the next run is a 03:00, not "now" again.
  const resumed = (await test.call('updateRoutine', { agentId: id, id: created.id, action: 'resume' }))
    .body as {
    routine: Routine;
  };
  expect(resumed.routine.nextRunAt).toBe(created.nextRunAt);

  const extra = await test.call('updateRoutine', { agentId: id, id: created.id, action: 'run', prompt: 'x' });
  expect(extra.status).toBe(400);
  expect(JSON.stringify(extra.body)).toMatch(/run takes only the id/);
  const unknown = await test.call('updateRoutine', { agentId: id, id: 'r-nothere', action: 'run' });
  expect(unknown.status).toBe(404);
  expect(JSON.stringify(unknown.body)).toMatch(/no routine with id r-nothere/);
});
