/**
 * RFC 3339 timestamps. Common stores them in UTC (`…Z`); a timestamp already
 * in UTC is kept byte for byte so a Simple → Common → Simple trip does not
 * rewrite it, and an offset one is converted (`+02:00` → `Z`).
 */

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** The instant an RFC 3339 timestamp names, or undefined when it is not one. */
export function parseRfc3339(text: string): Date | undefined {
  const m = RFC3339.exec(text);
  if (m === null) return undefined;
  const [, y, mo, d, h, mi, s] = m.map(Number) as [number, number, number, number, number, number, number];
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return undefined;
  const date = new Date(text.replace(' ', 'T'));
  if (Number.isNaN(date.getTime())) return undefined;
  // Date accepts 2026-02-31 by rolling over; refuse it (a day past the month's end).
  const localDay = new Date(Date.UTC(y, mo - 1, d));
  if (localDay.getUTCDate() !== d) return undefined;
  return date;
}

export function isRfc3339(text: string): boolean {
  return parseRfc3339(text) !== undefined;
}

/** The same instant in UTC RFC 3339; kept verbatim (bar case) when it is already UTC. */
export function toUtcRfc3339(text: string): string | undefined {
  const date = parseRfc3339(text);
  if (date === undefined) return undefined;
  if (/[Zz]$/.test(text)) return text.replace(' ', 'T').replace(/[tz]/g, (c) => c.toUpperCase());
  return formatUtc(date);
}

/** A Date as UTC RFC 3339, without a `.000` when the milliseconds are zero. */
export function formatUtc(date: Date): string {
  return date.toISOString().replace('.000Z', 'Z');
}
