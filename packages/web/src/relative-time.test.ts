import { describe, expect, it } from 'vitest';
import { relativeTime } from './relative-time.ts';

describe('relativeTime', () => {
  const now = Date.UTC(2026, 2, 20, 12, 0, 0);
  it('counts minutes and hours, then names the day', () => {
    expect(relativeTime(now - 10_000, now)).toBe('now');
    expect(relativeTime(now - 5 * 60_000, now)).toBe('5 min');
    expect(relativeTime(now - 3 * 3_600_000, now)).toBe('3 h');
    expect(relativeTime(now - 2 * 86_400_000, now)).not.toMatch(/\d+ h/);
  });
  it('never shows a negative age for a clock slightly ahead', () => {
    expect(relativeTime(now + 5_000, now)).toBe('now');
  });
});
