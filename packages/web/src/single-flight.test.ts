import { describe, expect, it } from 'vitest';
import { createSingleFlight } from './single-flight.ts';

describe('createSingleFlight', () => {
  it('runs one action while one is in flight (a double click sends once)', async () => {
    const flight = createSingleFlight();
    let calls = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = flight.run(async () => {
      calls++;
      await gate;
    });
    const second = flight.run(() => {
      calls++;
      return Promise.resolve();
    });
    release();
    expect(await Promise.all([first, second])).toEqual([true, false]);
    expect(calls).toBe(1);
  });

  it('refuses after a success, allows a retry after a failure', async () => {
    const flight = createSingleFlight();
    await expect(flight.run(() => Promise.reject(new Error('offline')))).rejects.toThrow('offline');
    expect(flight.done).toBe(false);
    expect(await flight.run(() => Promise.resolve())).toBe(true);
    expect(flight.done).toBe(true);
    expect(await flight.run(() => Promise.resolve())).toBe(false);
  });
});
