/** RunSlots: at most `limit` held at once, handed on first come first served, and never held for ever. */
import { expect, it } from 'vitest';
import { RunSlots } from './run-slots.ts';

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

it('holds at most limit slots, hands a freed one to the oldest waiter, and a second release does nothing', async () => {
  const slots = new RunSlots(2);
  const order: number[] = [];
  const releases = await Promise.all([slots.acquire(), slots.acquire()]);
  const waiting = [3, 4].map((n) => slots.acquire().then((release) => (order.push(n), release)));
  await tick();
  expect(order).toEqual([]);
  expect(slots.queued).toBe(2);
  releases[0]();
  releases[0](); // twice: still one slot freed
  await tick();
  expect(order).toEqual([3]);
  expect(slots.queued).toBe(1);
  releases[1]();
  await tick();
  expect(order).toEqual([3, 4]);
  for (const release of await Promise.all(waiting)) release();
  // All free again: two at once without waiting.
  const again = await Promise.all([slots.acquire(), slots.acquire()]);
  expect(slots.queued).toBe(0);
  for (const release of again) release();
});

it('gives a slot back by itself after maxHoldMs (a turn that never starts holds no one up)', async () => {
  const slots = new RunSlots(1, 50);
  await slots.acquire(); // never released by hand
  const started = Date.now();
  const release = await slots.acquire();
  expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  release();
});
