/**
 * `--since` / `--until` values: an RFC 3339 timestamp, a bare date
 * (`2026-09-10`: local midnight for --since, the end of that local day for
 * --until), or an age relative to now (`90s`, `30m`, `2h`, `3d`, `1w`).
 */
import { parseRfc3339 } from '../harness/simple/timestamp.ts';
import { usageError } from './errors.ts';

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

export function parseWhen(text: string, option: '--since' | '--until', now: Date): Date {
  const value = text.trim();
  const relative = /^(\d+)\s*([smhdw])$/i.exec(value);
  if (relative !== null) {
    const ms = Number(relative[1]) * UNIT_MS[relative[2]!.toLowerCase()]!;
    return new Date(now.getTime() - ms);
  }
  const day = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (day !== null) {
    const [y, m, d] = [Number(day[1]), Number(day[2]), Number(day[3])];
    const date = option === '--since' ? new Date(y, m - 1, d) : new Date(y, m - 1, d, 23, 59, 59, 999);
    if (date.getMonth() === m - 1 && date.getDate() === d) return date;
  }
  const instant = parseRfc3339(value);
  if (instant !== undefined) return instant;
  throw usageError({
    what: `${option} "${text}" is not a time`,
    todo: 'give an RFC 3339 timestamp (2026-09-10T14:00:00Z), a date (2026-09-10) or an age (30m, 2h, 3d, 1w)',
  });
}
