/** "now", "5 min", "3 h", "Tue", "12 Mar": the sidebar's age of an agent's last entry. */
const weekday = new Intl.DateTimeFormat(undefined, { weekday: 'short' });
const dayMonth = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short' });
const full = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export function relativeTime(ms: number, now: number): string {
  const seconds = Math.max(0, Math.round((now - ms) / 1000));
  if (seconds < 60) return 'now';
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h`;
  const days = Math.floor(hours / 24);
  if (days < 7) return weekday.format(ms);
  return dayMonth.format(ms);
}

/** The exact time, for the hover text and the `<time dateTime>` of a relative one. */
export function fullTime(ms: number): string {
  return full.format(ms);
}
