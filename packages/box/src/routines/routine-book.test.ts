/**
 * The routine book's durability: a change of a routine is on disk when update_state answers (an
 * fdatasync of the book's WAL), while a fire and a run's rows take no fsync of their own (a burst
 * of fires would wait on hundreds; the inbox's nonce is what keeps a fire once).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { ensurePrivateDir } from '../fs/atomic.ts';
import { agentPaths } from '../stores/files/layout.ts';
import { WritePoints } from '../stores/write-points.ts';
import type { RoutineBook } from './routine-book.ts';
import { Routines, systemClock } from './routines.ts';

let dir = '';
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = '';
});

it('makes a routine change durable before it answers; a fire and its run rows add no fdatasync', async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-routine-book-'));
  await ensurePrivateDir(agentPaths(dir, 'agent-1').agentDir);
  const routines = new Routines({
    dataDir: dir,
    clock: systemClock,
    minIntervalS: 60,
    defaultTimeZone: 'UTC',
    deliver: () => Promise.resolve(true),
    exists: () => Promise.resolve(true),
    emit: () => undefined,
    writePoints: new WritePoints(),
  });
  await routines.start([]);
  const handler = routines.for({ id: 'agent-1' }).toolServices!({ turn: 0, toolCallId: 'x' }).routines!;
  const answer = await handler.apply({
    action: 'create',
    name: 'Tick',
    schedule: '@hourly',
    prompt: 'tick',
  });
  const created = { id: /\(id (r-[0-9a-f]+)\)/.exec(answer.text)![1]! };
  const book = (routines as unknown as { books: Map<string, RoutineBook> }).books.get('agent-1')!;
  expect(book.syncs).toBe(1);
  await handler.apply({ action: 'pause', id: created.id });
  expect(book.syncs).toBe(2);

  const at = Date.now();
  book.fired({ routineId: created.id, instant: at, firedAt: at, missed: 1, missedSince: null });
  book.started(created.id, at, 0, at);
  book.ended(0, at, true);
  expect(book.runs(created.id)).toEqual([expect.objectContaining({ instant: at, status: 'ok', turn: 0 })]);
  expect(book.syncs).toBe(2);
  routines.hostClosed();
});
