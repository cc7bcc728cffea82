/**
 * A routine's schedule (issue 21 item 2): a 5-field cron expression read in an IANA time zone
 * (`CRON_TZ=<zone>` may lead it), a nickname (`@hourly`, `@daily`, …), or `@every <duration>`
 * ("90s", "15m", "1h30m", "2d"). Cron instants come from croner, which keeps daylight-saving
 * changes to one fire: a skipped local time fires at the first instant after the gap, a repeated
 * one fires at its first occurrence. `@every` counts from the routine's anchor (its creation, or
 * the update that gave it the schedule). Intervals shorter than the minimum (60 s;
 * `SENDBOX_ROUTINE_MIN_INTERVAL_S` lowers it for tests) are refused.
 */
import { Cron } from 'croner';

export interface Schedule {
  /** What the user or model wrote (without a CRON_TZ prefix). */
  readonly text: string;
  readonly timezone: string;
  /** The next instant strictly after `after` (epoch ms), or null when the schedule has no more. */
  next(after: number): number | null;
  /** Two instants are never closer than this (ms): a fire this soon after its instant missed none. */
  readonly minGapMs: number;
}

export class ScheduleError extends Error {}

const NICKNAMES: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export const DEFAULT_MIN_INTERVAL_S = 60;

/** The minimum interval from the environment (tests lower it), else 60 s. */
export function minIntervalFromEnv(env: NodeJS.ProcessEnv): number {
  const value = Number(env.SENDBOX_ROUTINE_MIN_INTERVAL_S);
  return Number.isFinite(value) && value > 0 ? value : DEFAULT_MIN_INTERVAL_S;
}

/** True when `zone` is an IANA zone this runtime knows. */
export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The box's own zone: TZ, else the runtime's, else UTC. */
export function boxTimeZone(env: NodeJS.ProcessEnv = process.env): string {
  const zone = env.TZ?.replace(/^:/, '') || Intl.DateTimeFormat().resolvedOptions().timeZone;
  return zone && isTimeZone(zone) ? zone : 'UTC';
}

/** `"1h30m"` → ms; null when it is not a duration. */
export function parseDuration(text: string): number | null {
  const trimmed = text.trim();
  if (!/^(\d+(\.\d+)?(ms|s|m|h|d))+$/.test(trimmed)) return null;
  let total = 0;
  for (const [, amount, unit] of trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g))
    total += Number(amount) * UNIT_MS[unit!]!;
  return Math.round(total);
}

export interface ScheduleOptions {
  /** The zone when neither `timezone` nor CRON_TZ gives one. */
  defaultTimeZone: string;
  minIntervalS: number;
  /** Where `@every` counts from (epoch ms). */
  anchor: number;
}

/**
 * Reads a schedule; a ScheduleError says what is wrong and how to write it. A CRON_TZ prefix and
 * a `timezone` that disagree are refused rather than one silently winning.
 */
export function parseSchedule(raw: string, timezone: string | undefined, options: ScheduleOptions): Schedule {
  let text = raw.trim().replace(/\s+/g, ' ');
  let zone = timezone?.trim() || undefined;
  const prefixed = /^CRON_TZ=(\S+) (.*)$/.exec(text);
  if (prefixed) {
    if (zone && zone !== prefixed[1])
      throw new ScheduleError(
        `the schedule says CRON_TZ=${prefixed[1]} but timezone is ${zone}: give the zone once`,
      );
    zone = prefixed[1];
    text = prefixed[2]!;
  }
  zone ??= options.defaultTimeZone;
  if (!isTimeZone(zone))
    throw new ScheduleError(
      `unknown time zone ${JSON.stringify(zone)}: use an IANA name such as "America/New_York" or "UTC"`,
    );
  const minMs = options.minIntervalS * 1000;
  const every = /^@every (.+)$/.exec(text);
  if (every) {
    const ms = parseDuration(every[1]!);
    if (ms === null)
      throw new ScheduleError(
        `"${every[1]}" is not a duration: write it as "@every 90s", "@every 15m" or "@every 1h30m"`,
      );
    if (ms < minMs)
      throw new ScheduleError(
        `@every ${every[1]} is too often: the shortest interval is ${options.minIntervalS} s`,
      );
    const anchor = options.anchor;
    return {
      text,
      timezone: zone,
      next: (after) => anchor + (Math.floor((after - anchor) / ms) + 1) * ms,
      minGapMs: ms,
    };
  }
  const pattern = NICKNAMES[text.toLowerCase()] ?? text;
  if (pattern.startsWith('@'))
    throw new ScheduleError(
      `unknown schedule ${JSON.stringify(text)}: use 5 cron fields, @hourly, @daily, @weekly, @monthly or "@every <duration>"`,
    );
  const fields = pattern.split(' ');
  if (fields.length !== 5)
    throw new ScheduleError(
      `a cron schedule has 5 fields (minute hour day-of-month month day-of-week), not ${fields.length}: ` +
        `"${text}". Example: "0 9 * * 1-5" is 09:00 on weekdays`,
    );
  let cron: Cron;
  try {
    cron = new Cron(pattern, { timezone: zone, paused: true });
  } catch (error) {
    throw new ScheduleError(`"${text}" is not a valid cron expression: ${(error as Error).message}`);
  }
  const next = (after: number): number | null => cron.nextRun(new Date(after))?.getTime() ?? null;
  const first = next(options.anchor);
  const second = first === null ? null : next(first);
  if (first === null) throw new ScheduleError(`"${text}" never fires`);
  if (second !== null && second - first < minMs)
    throw new ScheduleError(`"${text}" is too often: the shortest interval is ${options.minIntervalS} s`);
  // Five fields: whole minutes, so two instants are a minute apart at least.
  return { text, timezone: zone, next, minGapMs: 60_000 };
}

/**
 * The instants in (after, until]: how many, the first, the last. Used for the catch-up after
 * downtime (one run for the latest, told how many were missed and since when). Past `cap` the
 * count stops and the last counted instant stands for the latest.
 */
export function instantsBetween(
  schedule: Schedule,
  after: number,
  until: number,
  cap = 100_000,
): { count: number; first: number | null; last: number | null } {
  let count = 0;
  let first: number | null = null;
  let last: number | null = null;
  for (let at = schedule.next(after); at !== null && at <= until && count < cap; at = schedule.next(at)) {
    count += 1;
    first ??= at;
    last = at;
  }
  return { count, first, last };
}
