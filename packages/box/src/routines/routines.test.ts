/**
 * Routines through the real box: the scripted model, real files, a real restart. Time is the
 * system's where a test waits for real fires (@every with the lowered minimum), and a stepped
 * clock where it crosses hours (catch-up, daylight saving).
 */
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentHost, type LocalAgentHost } from '../host/agent-host.ts';
import type { ModelStepRequest } from '../providers/types.ts';
import { scriptedProvider, type ScriptedStep } from '../providers/scripted.ts';
import { hostFixture, type HostFixture } from '../testing/host-fixture.ts';
import type { RoutineCommand } from '../tools/update-state/schema.ts';
import { SteppedClock } from './test-clock.ts';

const fixtures: HostFixture[] = [];
const hosts: LocalAgentHost[] = [];
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.close().catch(() => undefined);
  for (const fixture of fixtures.splice(0)) await fixture.dispose();
});

/** The text of the request's last user message. */
function lastUser(request: ModelStepRequest): string {
  const user = request.messages.filter((m) => m.role === 'user').at(-1);
  if (!user) return '';
  if (typeof user.content === 'string') return user.content;
  return user.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

const send = (content: string): ScriptedStep => ({
  toolCalls: [{ name: 'send_message', input: { type: 'text', content } }],
});

/** A model that answers each routine run with a send (or nothing, for prompts saying "quiet"). */
function routineModel(request: ModelStepRequest): ScriptedStep {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return { text: 'done' };
  // The run's own message (a reminder may follow it in the user role).
  const text =
    request.messages
      .filter((m) => m.role === 'user')
      .map((m) =>
        typeof m.content === 'string'
          ? m.content
          : m.content.map((p) => (p.type === 'text' ? p.text : '')).join('\n'),
      )
      .reverse()
      .find((t) => t.includes('[routine]') || !t.includes('system_reminder')) ?? '';
  if (text.includes('quiet')) return { text: 'Nothing to report.' };
  return send(`ran: ${text.split('\n')[1] ?? ''}`);
}

async function box(env: Record<string, string> = {}, clock?: SteppedClock): Promise<HostFixture> {
  const fixture = await hostFixture([], {
    provider: scriptedProvider(routineModel),
    env: { SENDBOX_ROUTINE_MIN_INTERVAL_S: '1', ...env },
    ...(clock ? { routineClock: clock } : {}),
  });
  fixtures.push(fixture);
  return fixture;
}

function create(fx: HostFixture, command: Omit<RoutineCommand, 'action'>) {
  const handler = fx.host.routines.for({ id: fx.agentId }).toolServices!({
    turn: 0,
    toolCallId: 'x',
  }).routines!;
  return handler.apply({ action: 'create', ...command });
}

const idOf = (text: string): string => /\(id (r-[0-9a-f]+)\)/.exec(text)![1]!;

async function until(check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function routineUsers(fx: HostFixture) {
  return (await fx.entries()).filter((e) => e.kind === 'message' && 'routine' in e) as unknown as Array<
    Record<string, unknown> & { id: string; content: string; routine: { id: string; instant: number } }
  >;
}

describe('routines', () => {
  it('are created by update_state and fire at @every as hidden [routine] turns, with their run history', async () => {
    // The model's own call creates it.
    const model = scriptedProvider((request) => {
      const last = request.messages.at(-1);
      if (last?.role === 'user' && lastUser(request).includes('ping me'))
        return {
          toolCalls: [
            {
              id: 'c1',
              name: 'update_state',
              input: {
                routine: { action: 'create', name: 'Ping', schedule: '@every 1s', prompt: 'say ping' },
              },
            },
          ],
        };
      if (
        last?.role === 'tool' &&
        last.content.some((part) => 'toolName' in part && part.toolName === 'update_state')
      )
        return send('Scheduled.');
      return routineModel(request);
    });
    const creating = await hostFixture([], { env: { SENDBOX_ROUTINE_MIN_INTERVAL_S: '1' }, provider: model });
    fixtures.push(creating);
    await creating.prompt('ping me every second');
    const created = (await creating.entries()).find((e) => e.kind === 'tool-call');
    expect(created).toMatchObject({ name: 'update_state', status: 'success' });
    await until(async () => (await routineUsers(creating)).length >= 2);
    const [routine] = await creating.host.listRoutines(creating.agentId);
    await creating.host.updateRoutine(creating.agentId, { id: routine!.id, action: 'pause' });
    await creating.host.idle(creating.agentId);

    const users = await routineUsers(creating);
    expect(users[0]).toMatchObject({ role: 'user', hidden: true, content: '[routine] Ping\nsay ping' });
    // The model read it as a hidden prompt under the turn's address tag.
    const seen = model.requests.map(lastUser).find((text) => text.includes('[routine] Ping'));
    expect(seen).toContain(`[${users[0]!.id}]\n[SAND_HIDDEN_PROMPT][routine] Ping\nsay ping`);
    // Each fire is its own instant, one second apart.
    expect(users[1]!.routine.instant - users[0]!.routine.instant).toBe(1000);
    const [listed] = await creating.host.listRoutines(creating.agentId);
    expect(listed).toMatchObject({ name: 'Ping', schedule: '@every 1s', paused: true, nextRunAt: null });
    const first = listed!.runs.at(-1)!;
    expect(first).toMatchObject({
      instant: users[0]!.routine.instant,
      status: 'ok',
      entryId: users[0]!.id,
      turn: Number(users[0]!.id.slice(1, -1)),
    });
    expect(first.endedAt).toBeGreaterThanOrEqual(first.startedAt!);
  });

  it('refuses an interval under the minimum and a bad zone, saying how to write them', async () => {
    const fx = await box({ SENDBOX_ROUTINE_MIN_INTERVAL_S: '60' });
    await expect(create(fx, { name: 'Fast', schedule: '@every 30s', prompt: 'x' })).rejects.toThrow(
      /too often: the shortest interval is 60 s/,
    );
    await expect(
      create(fx, { name: 'Zone', schedule: '0 9 * * *', timezone: 'Mars/Base', prompt: 'x' }),
    ).rejects.toThrow(/unknown time zone "Mars\/Base"/);
    await expect(create(fx, { name: 'Six', schedule: '* * * * * *', prompt: 'x' })).rejects.toThrow(
      /5 fields/,
    );
    const ok = await create(fx, { name: 'Paris', schedule: 'CRON_TZ=Europe/Paris 0 9 * * *', prompt: 'x' });
    expect(ok.text).toMatch(
      /0 9 \* \* \* in Europe\/Paris\. Next run: .*\(\d{4}-\d\d-\d\d 09:00 Europe\/Paris\)/,
    );
  });

  it('pause, resume and delete: a paused routine does not fire, a resumed one does not catch up, a deleted one is gone', async () => {
    const start = Date.UTC(2026, 5, 1, 12, 0);
    const clock = new SteppedClock(start);
    const fx = await box({}, clock);
    const id = idOf((await create(fx, { name: 'Tick', schedule: '@every 1m', prompt: 'tick' })).text);
    await clock.advanceTo(start + 60_000);
    await fx.host.idle(fx.agentId);
    expect(await routineUsers(fx)).toHaveLength(1);

    await fx.host.updateRoutine(fx.agentId, { id, action: 'pause' });
    await clock.advanceTo(start + 10 * 60_000);
    await fx.host.idle(fx.agentId);
    expect(await routineUsers(fx)).toHaveLength(1);

    const resumed = await fx.host.updateRoutine(fx.agentId, { id, action: 'resume' });
    expect(resumed.routine).toMatchObject({ paused: false, nextRunAt: start + 11 * 60_000 });
    await clock.advanceTo(start + 11 * 60_000);
    await fx.host.idle(fx.agentId);
    const users = await routineUsers(fx);
    expect(users).toHaveLength(2);
    // One run, on time: the paused minutes are not "missed".
    expect(users[1]!.content).toBe('[routine] Tick\ntick');

    expect(await fx.host.updateRoutine(fx.agentId, { id, action: 'delete' })).toEqual({ routine: null });
    expect(await fx.host.listRoutines(fx.agentId)).toEqual([]);
    expect(clock.waiting).toBe(0);
    await expect(fx.host.updateRoutine(fx.agentId, { id, action: 'pause' })).rejects.toMatchObject({
      status: 404,
      message: expect.stringMatching(/no routine with id/) as unknown,
    });
  });

  it('after 5 missed fires while the box was down, runs once and says 5', async () => {
    const start = Date.UTC(2026, 5, 1, 12, 0, 30);
    const clock = new SteppedClock(start);
    const fx = await box({}, clock);
    const id = idOf((await create(fx, { name: 'Digest', schedule: '* * * * *', prompt: 'sum up' })).text);
    await fx.host.close();
    // Down from 12:00:30 to 12:05:40: 12:01 … 12:05 were missed.
    const later = new SteppedClock(Date.UTC(2026, 5, 1, 12, 5, 40));
    const host = await createAgentHost({
      dataDir: fx.dataDir,
      provider: scriptedProvider(routineModel),
      env: { SENDBOX_ROUTINE_MIN_INTERVAL_S: '1' },
      routineClock: later,
    });
    hosts.push(host);
    await until(async () =>
      (await host.listRoutines(fx.agentId))[0]!.runs.some((run) => run.status === 'ok'),
    );
    const users = (await host.entriesAfter(fx.agentId, 0)).filter((e) => 'routine' in e);
    expect(users).toHaveLength(1);
    expect(users[0]).toMatchObject({
      content: expect.stringContaining(
        'this routine was due 5 times since 2026-06-01T12:01:00.000Z',
      ) as unknown,
      routine: { id, instant: Date.UTC(2026, 5, 1, 12, 5) },
    });
    const [routine] = await host.listRoutines(fx.agentId);
    expect(routine!.runs).toHaveLength(1);
    expect(routine!.runs[0]).toMatchObject({
      missed: 5,
      missedSince: Date.UTC(2026, 5, 1, 12, 1),
      status: 'ok',
    });
    expect(routine!.nextRunAt).toBe(Date.UTC(2026, 5, 1, 12, 6));
  });

  it('a silent run whose model sends nothing ends without the "no reply" notice', async () => {
    const start = Date.UTC(2026, 5, 1, 12, 0);
    const clock = new SteppedClock(start);
    const fx = await box({}, clock);
    await create(fx, { name: 'Quiet', schedule: '@every 1m', prompt: 'stay quiet', silent: true });
    await create(fx, { name: 'Loud', schedule: '@every 2m', prompt: 'quiet too, but not silent' });
    await clock.advanceTo(start + 2 * 60_000);
    await fx.host.idle(fx.agentId);
    const entries = await fx.entries();
    const turnOf = (name: string) =>
      entries
        .filter(
          (e) => e.kind === 'message' && 'routine' in e && (e.routine as { name: string }).name === name,
        )
        .map((e) => e.id.slice(0, -1));
    const notices = (turn: string) =>
      entries.filter((e) => e.kind === 'notice' && e.id.startsWith(`${turn}n`));
    const quiet = turnOf('Quiet');
    expect(quiet).toHaveLength(2);
    for (const turn of quiet) expect(notices(turn)).toEqual([]);
    // The same text-only answer in a routine that is not silent gets the notice.
    const [loud] = turnOf('Loud');
    expect(notices(loud!)).toEqual([
      expect.objectContaining({ text: 'The agent stopped without sending you a reply.' }),
    ]);
    const routines = await fx.host.listRoutines(fx.agentId);
    expect(routines.find((r) => r.name === 'Quiet')!.runs.map((run) => run.status)).toEqual([
      'silent',
      'silent',
    ]);
    expect(routines.find((r) => r.name === 'Loud')!.runs.map((run) => run.status)).toEqual(['ok']);
  });

  it('crosses daylight saving in America/New_York: each local time fires once', async () => {
    const start = Date.UTC(2026, 9, 31, 12, 0); // Oct 31, 08:00 EDT
    const clock = new SteppedClock(start);
    const fx = await box({}, clock);
    await create(fx, { name: 'Fall', schedule: '30 1 * * *', timezone: 'America/New_York', prompt: 'fall' });
    await clock.advanceTo(Date.UTC(2026, 10, 3, 12, 0));
    await fx.host.idle(fx.agentId);
    const fall = (await routineUsers(fx)).map((u) => new Date(u.routine.instant).toISOString());
    // 01:30 happens twice on Nov 1 (EDT, then EST): it runs at the first only.
    expect(fall).toEqual([
      '2026-11-01T05:30:00.000Z',
      '2026-11-02T06:30:00.000Z',
      '2026-11-03T06:30:00.000Z',
    ]);

    const spring = new SteppedClock(Date.UTC(2026, 2, 7, 12, 0)); // Mar 7
    const fx2 = await box({}, spring);
    await create(fx2, {
      name: 'Spring',
      schedule: '30 2 * * *',
      timezone: 'America/New_York',
      prompt: 'spring',
    });
    await spring.advanceTo(Date.UTC(2026, 2, 9, 12, 0));
    await fx2.host.idle(fx2.agentId);
    const runs = (await routineUsers(fx2)).map((u) => new Date(u.routine.instant).toISOString());
    // 02:30 does not exist on Mar 8: it runs once, at 03:00 EDT, the first minute after the gap.
    expect(runs).toEqual(['2026-03-08T07:00:00.000Z', '2026-03-09T06:30:00.000Z']);
  });

  it('a fire that finds the agent busy waits behind its turn', async () => {
    const start = Date.UTC(2026, 5, 1, 12, 0);
    const clock = new SteppedClock(start);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const model = scriptedProvider(routineModel);
    const step = model.step.bind(model);
    let started = false;
    model.step = async (request) => {
      if (lastUser(request).includes('long job')) {
        started = true;
        await held;
      }
      return step(request);
    };
    const fx = await hostFixture([], {
      provider: model,
      env: { SENDBOX_ROUTINE_MIN_INTERVAL_S: '1' },
      routineClock: clock,
    });
    fixtures.push(fx);
    await create(fx, { name: 'Tick', schedule: '@every 1m', prompt: 'tick' });
    await fx.host.sendPrompt({ agentId: fx.agentId, prompt: 'long job', clientNonce: 'long' });
    await until(() => started);
    await clock.advanceTo(start + 60_000);
    expect((await fx.host.pendingInputs(fx.agentId)).map((p) => p.text)).toEqual(['Routine: Tick']);
    release();
    await fx.host.idle(fx.agentId);
    const users = (await fx.entries()).filter((e) => e.kind === 'message' && e.role === 'user');
    expect(users.map((u) => ('routine' in u ? 'routine' : u.content))).toEqual(['long job', 'routine']);
  });

  it('stop when their agent is deleted', async () => {
    const start = Date.UTC(2026, 5, 1, 12, 0);
    const clock = new SteppedClock(start);
    const fx = await box({}, clock);
    await create(fx, { name: 'Tick', schedule: '@every 1m', prompt: 'tick' });
    expect(fx.host.routines.armedCount).toBe(1);
    await fx.host.deleteAgent(fx.agentId);
    expect(fx.host.routines.armedCount).toBe(0);
    expect(clock.waiting).toBe(0);
    await clock.advanceTo(start + 10 * 60_000);
    await rm(fx.dataDir, { recursive: true, force: true }).catch(() => undefined);
  });
});
