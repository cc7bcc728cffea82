/**
 * Every agent's routines, for the host (issue 21 item 2): the books (routine-book.ts), one timer
 * for the soonest fire of all of them, the fire, the catch-up after downtime, the run history,
 * `update_state`'s routine part, and the gateway's `listRoutines` / `updateRoutine`.
 *
 * A fire hands the agent's session an inbox input at once (`deliver`: the session's own queue
 * starts its turn as soon as the row commits, no poll), whose nonce is `routine:<id>:<instant>`;
 * once the row is on disk the book records the instant. A crash between the two repeats the fire on the next start with the same
 * nonce, and the inbox keeps it once. Fires missed while the box was down give one run for the
 * latest instant, which says how many were missed and since when. A fire finding the agent busy
 * waits in its inbox behind the turn; a deleted agent's routines go with its folder.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { AgentExtension } from '../agent/extension.ts';
import type { HostEvent } from '../agent/events.ts';
import { agentPaths } from '../stores/files/layout.ts';
import type { InboxInput } from '../stores/inbox.ts';
import type { WritePoints } from '../stores/write-points.ts';
import { StateError, type RoutineCommand, type StateHandler } from '../tools/update-state/schema.ts';
import {
  fileRoutineBooks,
  type RoutineBooks,
  type RoutineBookStore,
  type RoutineRecord,
  type RunRecord,
} from './routine-book.ts';
import { routineNonce } from './run-text.ts';
import { instantsBetween, parseSchedule, ScheduleError, type Schedule } from './schedule.ts';

/** A clock the scheduler reads and sleeps on (tests step a fake one through a DST change). */
export interface RoutineClock {
  now(): number;
  /** Calls `fire` after `ms`; returns how to cancel it. */
  sleep(ms: number, fire: () => void): () => void;
}

export const systemClock: RoutineClock = {
  now: () => Date.now(),
  sleep(ms, fire) {
    // setTimeout holds at most 2^31-1 ms: a longer wait wakes early and sleeps again.
    const timer = setTimeout(fire, Math.min(Math.max(ms, 0), 2 ** 31 - 1));
    timer.unref();
    return () => clearTimeout(timer);
  },
};

/** A late fire (a wake more than this after its instant) tells the model it ran late. */
const LATE_MS = 60_000;
/** How long a fire that could not be delivered (a full disk) waits before it tries again. */
const RETRY_MS = 5_000;

export interface RoutineView extends Pick<
  RoutineRecord,
  'id' | 'name' | 'schedule' | 'timezone' | 'prompt' | 'silent' | 'paused'
> {
  createdAt: number;
  updatedAt: number;
  /** The next fire (epoch ms), or null when paused or the schedule has no more. */
  nextRunAt: number | null;
  /** The latest runs, newest first. */
  runs: RunView[];
}

export interface RunView extends RunRecord {
  /** The ledger id of the user message its turn opened (`t<turn>u`), for a link. */
  entryId: string | null;
}

/** The gateway's `updateRoutine` (beside its agentId): the model's routine commands, and `run` (now, once). */
export interface RoutineUpdate {
  /** Every action but create. */
  id?: string | undefined;
  action: 'create' | 'update' | 'pause' | 'resume' | 'delete' | 'run';
  name?: string | undefined;
  schedule?: string | undefined;
  timezone?: string | undefined;
  prompt?: string | undefined;
  silent?: boolean | undefined;
}

/** What routines tell the UI: the agent's routines changed (a run started or ended, an edit). */
export interface RoutinesEvent {
  type: 'routines';
  agentId: string;
}

export interface RoutinesHost {
  dataDir: string;
  clock: RoutineClock;
  minIntervalS: number;
  defaultTimeZone: string;
  /** Hands an input to the agent's inbox (false: the nonce was accepted before); 404 HostError for a gone agent. */
  deliver(agentId: string, nonce: string, input: InboxInput): Promise<boolean>;
  /** True while the agent exists. */
  exists(agentId: string): Promise<boolean>;
  emit(event: RoutinesEvent): void;
  /**
   * Appends Grok Bot's ledger entry for a routine change, `event {type: "automation-changed",
   * action, automationId, automationName}` (the conversation's thin line). Absent: none written.
   */
  record?(agentId: string, event: AutomationChanged): Promise<void>;
  writePoints: WritePoints;
  /** Where the books are (default: `agents/<id>/routines.db` in the data dir). */
  books?: RoutineBooks;
}

/** Grok Bot's routine lifecycle event (grok-bot-format.md §7; docs/formats/grok-bot.md). */
export type AutomationChanged = {
  type: 'automation-changed';
  action: 'created' | 'updated' | 'enabled' | 'disabled' | 'deleted';
  automationId: string;
  automationName: string;
};

const CHANGE_ACTION = {
  create: 'created',
  update: 'updated',
  resume: 'enabled',
  pause: 'disabled',
  delete: 'deleted',
} as const satisfies Record<RoutineCommand['action'], AutomationChanged['action']>;

interface Armed {
  agentId: string;
  routineId: string;
  at: number;
  /** `at` is the schedule's next instant (not a retry's time). */
  scheduled: boolean;
}

export class Routines {
  private readonly books = new Map<string, RoutineBookStore>();
  private readonly stored: RoutineBooks;
  /** Each active routine's next fire, by `<agentId>/<routineId>`. */
  private readonly armed = new Map<string, Armed>();
  private readonly firing = new Set<string>();
  /** Each routine's parsed schedule, by `<agentId>/<routineId>`, with what it was parsed from. */
  private readonly schedules = new Map<string, { source: string; schedule: Schedule }>();
  /** Turns of each agent that delivered a send (a silent run that sent nothing is `silent`). */
  private readonly sentIn = new Map<string, Set<number>>();
  private cancelTimer: (() => void) | null = null;
  private timerAt = Infinity;
  private started = false;
  private stopped = false;

  constructor(private readonly host: RoutinesHost) {
    this.stored =
      host.books ?? fileRoutineBooks((id) => path.join(agentPaths(host.dataDir, id).agentDir, 'routines.db'));
  }

  /** Opens the books of every agent that has one, catches up on missed fires, and arms the timer. */
  async start(agentIds: readonly string[]): Promise<void> {
    this.started = true;
    for (const agentId of this.stored.agents(agentIds)) {
      const book = this.book(agentId);
      for (const routine of book.all()) this.arm(agentId, routine);
    }
    await this.wake();
  }

  /** The extension of one agent: update_state's routine part. */
  for(agent: { id: string }): AgentExtension {
    const handler: StateHandler<RoutineCommand> = { apply: (input) => this.apply(agent.id, input) };
    return { toolServices: () => ({ routines: handler }) };
  }

  /** The agent's routines with their next fire and latest runs (the gateway's `listRoutines`). */
  list(agentId: string): RoutineView[] {
    // A shared book is read whatever this worker heard: the routines may have been made on another.
    if (!this.books.has(agentId) && !this.stored.shared && !this.stored.has(agentId)) return [];
    const book = this.book(agentId);
    return book.all().map((routine) => this.view(agentId, routine, book));
  }

  /** The gateway's `updateRoutine`: the same changes as the model's, with a 4xx for a bad request. */
  async update(agentId: string, change: RoutineUpdate): Promise<RoutineView | null> {
    const { id } =
      change.action === 'run'
        ? await this.runNow(agentId, change.id!)
        : await this.apply(agentId, { ...change, action: change.action });
    const routine = this.books.get(agentId)?.get(id);
    return routine ? this.view(agentId, routine, this.book(agentId)) : null;
  }

  /**
   * Runs a routine once, now, outside its schedule (the UI's "Run now"), paused or not. The run's
   * instant is the moment asked, so its nonce is its own; the schedule goes on from there.
   */
  private async runNow(agentId: string, routineId: string): Promise<{ id: string }> {
    const book = this.book(agentId);
    const routine = this.existing(agentId, book, routineId);
    const key = `${agentId}/${routineId}`;
    if (this.firing.has(key)) return { id: routineId };
    const now = this.host.clock.now();
    this.firing.add(key);
    try {
      await this.host.deliver(agentId, routineNonce(routineId, now), {
        kind: 'routine',
        routineId,
        name: routine.name,
        prompt: routine.prompt,
        instant: now,
        silent: routine.silent,
        missed: 1,
        missedSince: null,
      });
    } finally {
      this.firing.delete(key);
    }
    book.fired({ routineId, instant: now, firedAt: now, missed: 1, missedSince: null });
    const fresh = book.get(routineId);
    if (fresh) this.arm(agentId, fresh);
    this.rearm();
    this.changed(agentId);
    return { id: routineId };
  }

  /** Run history from the agent's ledger entries: a routine's turn started, failed, ended. */
  onEvent(event: HostEvent): void {
    if (event.type !== 'entry' || this.stopped) return;
    const { agentId, entry } = event;
    const record = entry as Record<string, unknown>;
    const turn = /^t(\d+)/.exec(entry.id);
    if (!turn) return;
    const number = Number(turn[1]);
    if (entry.kind === 'message' && isRoutineMark(record.routine)) {
      this.book(agentId).started(record.routine.id, record.routine.instant, number, entry.timestampMs);
      this.changed(agentId);
      return;
    }
    if (entry.kind !== 'send-message' && entry.kind !== 'notice' && entry.kind !== 'turn-ended') return;
    // A book not open yet is opened from its file: a restart closes a run's cut turn before start().
    const book = this.books.get(agentId) ?? (this.stored.has(agentId) ? this.book(agentId) : null);
    if (!book) return;
    if (entry.kind === 'send-message') {
      let sent = this.sentIn.get(agentId);
      if (!sent) this.sentIn.set(agentId, (sent = new Set()));
      sent.add(number);
    } else if (entry.kind === 'notice' && record.level === 'error') {
      book.failed(number);
    } else if (entry.kind === 'turn-ended') {
      const sent = this.sentIn.get(agentId);
      const run = book.ended(number, entry.timestampMs, sent?.has(number) ?? false);
      sent?.delete(number);
      if (run) this.changed(agentId);
    }
  }

  /**
   * The agent's routines changed (a `routines` event, this worker's or another's): with books
   * every worker shares, they are read again and armed as they are now (made, changed or deleted
   * through another gateway, or fired by another worker).
   */
  changedElsewhere(agentId: string): void {
    if (!this.stored.shared || this.stopped) return;
    const book = this.book(agentId);
    const present = new Set<string>();
    for (const routine of book.all()) {
      present.add(routine.id);
      if (!this.firing.has(`${agentId}/${routine.id}`)) this.arm(agentId, routine);
    }
    for (const [key, armed] of this.armed) {
      if (armed.agentId !== agentId || present.has(armed.routineId)) continue;
      this.armed.delete(key);
      this.schedules.delete(key);
    }
    this.rearm();
  }

  /** How many routines are armed (diagnostics, the bench). */
  get armedCount(): number {
    return this.armed.size;
  }

  agentDeleted(agentId: string): void {
    this.forget(agentId);
  }

  hostClosed(): void {
    this.stopped = true;
    this.cancelTimer?.();
    this.cancelTimer = null;
    for (const book of this.books.values()) book.close();
    this.books.clear();
    this.armed.clear();
    this.schedules.clear();
  }

  // -------------------------------------------------------------------------

  private book(agentId: string): RoutineBookStore {
    let book = this.books.get(agentId);
    if (!book) {
      book = this.stored.open(agentId);
      this.books.set(agentId, book);
    }
    return book;
  }

  private forget(agentId: string): void {
    for (const [key, armed] of this.armed) if (armed.agentId === agentId) this.armed.delete(key);
    for (const key of [...this.schedules.keys()])
      if (key.startsWith(`${agentId}/`)) this.schedules.delete(key);
    this.books.get(agentId)?.close();
    this.books.delete(agentId);
    this.sentIn.delete(agentId);
    this.rearm();
  }

  private changed(agentId: string): void {
    this.host.emit({ type: 'routines', agentId });
  }

  /** The routine's schedule, parsed once per schedule, zone and anchor (not at every fire). */
  private scheduleOf(agentId: string, routine: RoutineRecord): Schedule {
    const key = `${agentId}/${routine.id}`;
    const source = `${routine.schedule}\n${routine.timezone}\n${routine.anchor}`;
    const cached = this.schedules.get(key);
    if (cached?.source === source) return cached.schedule;
    const schedule = parseSchedule(routine.schedule, routine.timezone, {
      defaultTimeZone: routine.timezone,
      // A stored routine passed the minimum when it was written: a later, higher minimum does not stop it.
      minIntervalS: 0.001,
      anchor: routine.anchor,
    });
    this.schedules.set(key, { source, schedule });
    return schedule;
  }

  /** Where a routine's instants are counted from: its last fire, else its anchor. */
  private since(routine: RoutineRecord): number {
    return routine.lastInstant ?? routine.anchor;
  }

  private arm(agentId: string, routine: RoutineRecord): void {
    const key = `${agentId}/${routine.id}`;
    if (routine.paused) {
      this.armed.delete(key);
      return;
    }
    let next: number | null;
    try {
      next = this.scheduleOf(agentId, routine).next(this.since(routine));
    } catch {
      next = null; // a schedule this box can no longer read (an unknown zone): shown, not fired
    }
    if (next === null) this.armed.delete(key);
    else this.armed.set(key, { agentId, routineId: routine.id, at: next, scheduled: true });
  }

  /** Sleeps until the soonest armed fire. */
  private rearm(): void {
    if (!this.started || this.stopped) return;
    let soonest = Infinity;
    // A fire being handed over is not due again: it re-arms once the inbox holds it.
    for (const [key, armed] of this.armed)
      if (armed.at < soonest && !this.firing.has(key)) soonest = armed.at;
    if (soonest === this.timerAt && this.cancelTimer) return;
    this.cancelTimer?.();
    this.cancelTimer = null;
    this.timerAt = soonest;
    if (soonest === Infinity) return;
    this.cancelTimer = this.host.clock.sleep(soonest - this.host.clock.now(), () => {
      this.cancelTimer = null;
      void this.wake();
    });
  }

  /** Fires every routine that is due, each once for its latest due instant. */
  private async wake(): Promise<void> {
    const now = this.host.clock.now();
    const due = [...this.armed].filter(([key, armed]) => armed.at <= now && !this.firing.has(key));
    this.timerAt = Infinity;
    // The timer is armed again once all were handed over (each fire's turn starts sooner).
    await Promise.all(due.map(([, armed]) => this.fire(armed, now)));
    this.rearm();
  }

  private async fire(armed: Armed, now: number): Promise<void> {
    const { agentId, routineId } = armed;
    const key = `${agentId}/${routineId}`;
    if (this.firing.has(key)) return;
    const book = this.books.get(agentId);
    const routine = book?.get(routineId);
    if (!book || !routine || routine.paused) {
      this.armed.delete(key);
      return;
    }
    const schedule = this.scheduleOf(agentId, routine);
    // On time (the usual fire): no other instant lies between the armed one and now, so the turn
    // starts without walking the schedule (a cron step costs 0.1–0.2 ms; a burst has hundreds).
    const onTime = armed.scheduled && armed.at > this.since(routine) && now - armed.at < schedule.minGapMs;
    const missed = onTime
      ? { count: 1, first: armed.at, last: armed.at }
      : instantsBetween(schedule, this.since(routine), now);
    if (missed.last === null) {
      this.arm(agentId, routine);
      return;
    }
    const instant = missed.last;
    const caughtUp = missed.count > 1 || now - instant > LATE_MS;
    const input: InboxInput = {
      kind: 'routine',
      routineId,
      name: routine.name,
      prompt: routine.prompt,
      instant,
      silent: routine.silent,
      missed: missed.count,
      missedSince: caughtUp ? missed.first : null,
    };
    this.firing.add(key);
    // Its turn starts as soon as the inbox row commits; `deliver` resolves once it is on disk.
    try {
      // False (accepted before: a fire repeated after a crash) needs nothing more: its book moves on.
      await this.host.deliver(agentId, routineNonce(routineId, instant), input);
    } catch (error) {
      this.firing.delete(key);
      if ((error as { status?: number }).status === 404 || !(await this.host.exists(agentId))) {
        this.forget(agentId); // the agent is gone: so are its routines
        return;
      }
      // Not taken (a full disk): the same instant again shortly.
      this.armed.set(key, { agentId, routineId, at: this.host.clock.now() + RETRY_MS, scheduled: false });
      return;
    }
    this.firing.delete(key);
    if (this.stopped || this.books.get(agentId) !== book) return;
    // The inbox holds the fire; a crash before the next line repeats it with the same nonce.
    this.host.writePoints.pass('routine', routineId);
    book.fired({
      routineId,
      instant,
      firedAt: now,
      missed: missed.count,
      missedSince: input.missedSince,
    });
    const fresh = book.get(routineId);
    if (fresh) this.arm(agentId, fresh);
    this.changed(agentId);
  }

  private view(agentId: string, routine: RoutineRecord, book: RoutineBookStore): RoutineView {
    const armed = this.armed.get(`${agentId}/${routine.id}`);
    return {
      id: routine.id,
      name: routine.name,
      schedule: routine.schedule,
      timezone: routine.timezone,
      prompt: routine.prompt,
      silent: routine.silent,
      paused: routine.paused,
      createdAt: routine.createdAt,
      updatedAt: routine.updatedAt,
      nextRunAt: routine.paused ? null : (armed?.at ?? null),
      runs: book.runs(routine.id, 20).map((run) => ({
        ...run,
        entryId: run.turn === null ? null : `t${run.turn}u`,
      })),
    };
  }

  /** update_state's routine part (and updateRoutine's): changes the book, re-arms, answers in a sentence. */
  private async apply(
    agentId: string,
    input: RoutineCommand,
  ): Promise<{ text: string; target: string; id: string }> {
    const done = this.change(agentId, input);
    await this.book(agentId).durable();
    await this.recorded(agentId, input.action, done);
    return done;
  }

  /** The change's ledger entry (after the book holds it: the ledger only tells of a change made). */
  private async recorded(
    agentId: string,
    action: RoutineCommand['action'],
    done: { id: string; target: string },
  ): Promise<void> {
    await this.host.record?.(agentId, {
      type: 'automation-changed',
      action: CHANGE_ACTION[action],
      automationId: done.id,
      automationName: done.target,
    });
  }

  /** The routine with `id`, or a 404 StateError naming the agent's routines. */
  private existing(agentId: string, book: RoutineBookStore, id: string | undefined): RoutineRecord {
    const routine = id === undefined ? undefined : book.get(id);
    if (routine) return routine;
    const ids = book.all().map((r) => `${r.id} ("${r.name}")`);
    throw new StateError(
      `there is no routine with id ${id}: ${ids.length ? `your routines are ${ids.join(', ')}` : 'you have no routines'}`,
      { cause: 404 },
    );
  }

  private change(
    agentId: string,
    input: RoutineCommand | (RoutineUpdate & { action: RoutineCommand['action'] }),
  ): { text: string; target: string; id: string } {
    const now = this.host.clock.now();
    const book = this.book(agentId);
    const check = (schedule: string, timezone: string | undefined, anchor: number): Schedule => {
      try {
        return parseSchedule(schedule, timezone, {
          defaultTimeZone: this.host.defaultTimeZone,
          minIntervalS: this.host.minIntervalS,
          anchor,
        });
      } catch (error) {
        if (error instanceof ScheduleError) throw new StateError(`schedule: ${error.message}`);
        throw error;
      }
    };
    const when = (at: number | null, zone: string): string =>
      at === null ? 'never' : `${new Date(at).toISOString()} (${localTime(at, zone)} ${zone})`;
    if (input.action === 'create') {
      const schedule = check(input.schedule!, input.timezone, now);
      const routine: RoutineRecord = {
        id: `r-${randomBytes(4).toString('hex')}`,
        name: input.name!.trim(),
        schedule: schedule.text,
        timezone: schedule.timezone,
        prompt: input.prompt!,
        silent: input.silent ?? false,
        paused: false,
        anchor: now,
        lastInstant: null,
        createdAt: now,
        updatedAt: now,
      };
      book.put(routine);
      this.arm(agentId, routine);
      this.rearm();
      this.changed(agentId);
      return {
        text: `Created routine "${routine.name}" (id ${routine.id}), ${schedule.text} in ${schedule.timezone}. Next run: ${when(schedule.next(now), schedule.timezone)}.`,
        target: routine.name,
        id: routine.id,
      };
    }
    const routine = this.existing(agentId, book, input.id);
    let next: RoutineRecord = { ...routine, updatedAt: now };
    let said: string;
    switch (input.action) {
      case 'delete':
        book.delete(routine.id);
        this.armed.delete(`${agentId}/${routine.id}`);
        this.schedules.delete(`${agentId}/${routine.id}`);
        this.rearm();
        this.changed(agentId);
        return {
          text: `Deleted routine "${routine.name}" (id ${routine.id}).`,
          target: routine.name,
          id: routine.id,
        };
      case 'pause':
        next.paused = true;
        said = `Paused routine "${routine.name}"; it will not run until it is resumed.`;
        break;
      case 'resume':
        // Instants while it was paused are not missed runs: it counts from now.
        next = { ...next, paused: false, lastInstant: routine.paused ? now : routine.lastInstant };
        said = `Resumed routine "${routine.name}".`;
        break;
      case 'update': {
        const changesSchedule = input.schedule !== undefined || input.timezone !== undefined;
        if (changesSchedule) {
          const schedule = check(
            input.schedule ?? routine.schedule,
            input.timezone ?? (input.schedule?.startsWith('CRON_TZ=') ? undefined : routine.timezone),
            now,
          );
          next = {
            ...next,
            schedule: schedule.text,
            timezone: schedule.timezone,
            anchor: now,
            lastInstant: now,
          };
        }
        if (input.name !== undefined) next.name = input.name.trim();
        if (input.prompt !== undefined) next.prompt = input.prompt;
        if (input.silent !== undefined) next.silent = input.silent;
        said = `Updated routine "${next.name}".`;
      }
    }
    book.put(next);
    this.arm(agentId, next);
    this.rearm();
    this.changed(agentId);
    const upcoming = this.armed.get(`${agentId}/${next.id}`)?.at ?? null;
    return {
      text: next.paused ? said : `${said} Next run: ${when(upcoming, next.timezone)}.`,
      target: next.name,
      id: next.id,
    };
  }
}

function isRoutineMark(value: unknown): value is { id: string; instant: number } {
  if (typeof value !== 'object' || value === null) return false;
  const mark = value as Record<string, unknown>;
  return typeof mark.id === 'string' && typeof mark.instant === 'number';
}

function localTime(at: number, zone: string): string {
  return new Intl.DateTimeFormat('en-CA', {
    timeZone: zone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  })
    .format(at)
    .replace(',', '');
}
