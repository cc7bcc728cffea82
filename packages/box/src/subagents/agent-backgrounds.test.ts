/**
 * AgentBackgrounds with several sessions of one agent in one process (a cluster worker: its
 * gateway's and its turn worker's): a stop finds the session whose task runs, whichever session is
 * the latest, and an earlier session is let go only once it closed and none of its tasks runs.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { TurnContext } from '../agent/turn-driver.ts';
import { noScrub } from '../secrets/scrub.ts';
import { WritePoints } from '../stores/write-points.ts';
import type { ChildOutcome } from '../tasks/agent-tasks.ts';
import { TaskBook } from '../tasks/task-book.ts';
import type { AgentBackground } from './agent-background.ts';
import { AgentBackgrounds } from './agent-background.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-backgrounds-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function makeBackgrounds(books: TaskBook[]): AgentBackgrounds {
  return new AgentBackgrounds({
    dataDir: dir,
    provider: () => null,
    tools: () => [],
    writePoints: new WritePoints(),
    emit: () => undefined,
    taskBook: () => {
      const book = new TaskBook(path.join(dir, 'tasks.db'));
      books.push(book);
      return book;
    },
  });
}

const agent = {
  id: 'agent-1',
  profile: {},
  scrubber: () => noScrub,
  now: Date.now,
} as unknown as TurnContext;

/** Starts a background child in `background`'s registry; `stops` counts the stops that reached it. */
function startChild(background: AgentBackground, toolCallId: string) {
  const child = { id: '', stopped: 0 };
  let end: (outcome: ChildOutcome) => void = () => undefined;
  const record = background.tasks.startChild({
    turn: 0,
    toolCallId,
    agentId: `sand-subagent-${toolCallId}`,
    label: 'a long child',
    background: true,
    start: () => ({
      ended: new Promise<ChildOutcome>((resolve) => (end = resolve)),
      stop: () => {
        child.stopped += 1;
        end({ envelope: 'failure', payload: { error: 'stopped' } });
      },
    }),
  });
  if ('refused' in record) throw new Error(record.refused);
  child.id = record.id;
  return child;
}

it('keeps an open session whose task starts after a later session opened: Stop and host close reach the task', async () => {
  const books: TaskBook[] = [];
  const backgrounds = makeBackgrounds(books);
  // A turn worker's kept session, idle between jobs.
  const kept = backgrounds.for(agent);
  // A gateway opens another session of the agent (listAgents) while no task runs.
  const gateway = backgrounds.for(agent);
  expect(backgrounds.of(agent.id)).toBe(gateway);
  // The kept session's next turn starts a task.
  const first = startChild(kept, 'call-1');
  expect(backgrounds.stop(agent.id, first.id)).toBe(true);
  expect(first.stopped).toBe(1);
  await kept.tasks.ended(first.id);

  const second = startChild(kept, 'call-2');
  // Yet another session opening does not drop the kept one either.
  backgrounds.for(agent);
  await backgrounds.hostClosed();
  expect(second.stopped).toBe(1);
  for (const book of books) book.close();
});

it('stops a task in the session that runs it, and lets an earlier session go once it closed and none of its tasks runs', async () => {
  const books: TaskBook[] = [];
  const backgrounds = new AgentBackgrounds({
    dataDir: dir,
    provider: () => null,
    tools: () => [],
    writePoints: new WritePoints(),
    emit: () => undefined,
    taskBook: () => {
      const book = new TaskBook(path.join(dir, 'tasks.db'));
      books.push(book);
      return book;
    },
  });
  const agent = {
    id: 'agent-1',
    profile: {},
    scrubber: () => noScrub,
    now: Date.now,
  } as unknown as TurnContext;
  const first = backgrounds.for(agent);
  let end: (outcome: ChildOutcome) => void = () => undefined;
  let stopped = false;
  const record = first.tasks.startChild({
    turn: 0,
    toolCallId: 'call-1',
    agentId: 'sand-subagent-1',
    label: 'a long child',
    background: true,
    start: () => ({
      ended: new Promise<ChildOutcome>((resolve) => (end = resolve)),
      stop: () => {
        stopped = true;
        end({ envelope: 'failure', payload: { error: 'stopped' } });
      },
    }),
  });
  if ('refused' in record) throw new Error(record.refused);
  const second = backgrounds.for(agent);
  expect(backgrounds.of(agent.id)).toBe(second);
  expect(backgrounds.stop(agent.id, record.id)).toBe(true);
  expect(stopped).toBe(true);
  await first.tasks.ended(record.id);

  // Nothing of the first session runs now and its session closed: it goes, so Stop reaches only the live ones.
  first.closed();
  backgrounds.for(agent);
  let stoppedAll = 0;
  first.stopAll = () => {
    stoppedAll += 1;
    return Promise.resolve();
  };
  await backgrounds.turnCancelled(agent.id);
  expect(stoppedAll).toBe(0);
  await backgrounds.hostClosed();
  for (const book of books) book.close();
});

it('stops here only what a session here runs, asking no other worker', async () => {
  const books: TaskBook[] = [];
  const requested: string[] = [];
  const backgrounds = new AgentBackgrounds({
    dataDir: dir,
    provider: () => null,
    tools: () => [],
    writePoints: new WritePoints(),
    emit: () => undefined,
    taskBook: () => {
      const book = new TaskBook(path.join(dir, 'tasks.db'));
      books.push(book);
      return Object.assign(Object.create(book) as TaskBook, {
        requestStop: (id: string) => {
          requested.push(id);
          return true;
        },
      });
    },
  });
  const session = backgrounds.for(agent);
  const child = startChild(session, 'call-1');
  expect(backgrounds.stopHere(agent.id, 'elsewhere')).toBe(false);
  expect(backgrounds.stopHere('another-agent', child.id)).toBe(false);
  expect(requested).toEqual([]);
  expect(backgrounds.stopHere(agent.id, child.id)).toBe(true);
  expect(child.stopped).toBe(1);
  // The gateway's stop of a task not run here asks the worker that runs it.
  expect(backgrounds.stop(agent.id, 'elsewhere')).toBe(true);
  expect(requested).toEqual(['elsewhere']);
  await backgrounds.hostClosed();
  for (const book of books) book.close();
});

it('gives each session’s task book that session’s lease fence', async () => {
  const fences: unknown[] = [];
  const backgrounds = new AgentBackgrounds({
    dataDir: dir,
    provider: () => null,
    tools: () => [],
    writePoints: new WritePoints(),
    emit: () => undefined,
    taskBook: (_agentId, fence) => {
      fences.push(fence);
      return new TaskBook(path.join(dir, `tasks-${fences.length}.db`));
    },
  });
  const fence = { agentId: agent.id, epoch: 3 };
  backgrounds.for(agent, { fence });
  backgrounds.for(agent);
  expect(fences).toEqual([fence, undefined]);
  await backgrounds.hostClosed();
});

it('tells on open only the lost tasks it marked told: one that ended meanwhile is told as ended instead', async () => {
  const book = new TaskBook(path.join(dir, 'tasks.db'));
  for (const id of ['lost', 'raced']) {
    book.started({
      id,
      kind: 'command',
      turn: 0,
      toolCallId: `call-${id}`,
      label: `sleep ${id}`,
      outputPath: null,
      agentId: null,
      startedAt: Date.now(),
    });
  }
  book.interruptLeftovers(Date.now());
  // "raced" ends between the session's read of the lost tasks and its marking them told.
  const racing = Object.assign(Object.create(book) as TaskBook, {
    unreported: () => {
      const unreported = book.unreported();
      book.ended('raced', Date.now(), { exitCode: 0, reason: 'exited' });
      return unreported;
    },
  });
  const backgrounds = new AgentBackgrounds({
    dataDir: dir,
    provider: () => null,
    tools: () => [],
    writePoints: new WritePoints(),
    emit: () => undefined,
    taskBook: () => racing,
  });
  const note = await backgrounds.for(agent).opened();
  expect(note).toContain('sleep lost');
  expect(note).not.toContain('sleep raced');
  expect(book.get('raced')).toMatchObject({ state: 'ended', reported: false });
  await backgrounds.hostClosed();
  book.close();
});
