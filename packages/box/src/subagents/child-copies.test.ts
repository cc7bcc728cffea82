/**
 * The children a duplicated agent takes along (child-copies.ts), on real task books (SQLite) and real
 * JSONL files: only children not running, each under a new id that every copied mention carries.
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { fileChildTranscripts } from '../stores/files/agent-stores.ts';
import { agentPaths } from '../stores/files/layout.ts';
import { TaskBook, type TaskStart } from '../tasks/task-book.ts';
import { ChildCopies } from './child-copies.ts';

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-child-copies-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const ENDED = 'sand-subagent-0a0b0c0d-0e0f-4000-8000-0000000000e1';
const NESTED = 'sand-subagent-0a0b0c0d-0e0f-4000-8000-0000000000e2';
const RUNNING = 'sand-subagent-0a0b0c0d-0e0f-4000-8000-0000000000e3';

const child = (id: string, toolCallId = `call-${id}`): TaskStart => ({
  id,
  kind: 'subagent',
  turn: 0,
  toolCallId,
  label: `job ${id}`,
  outputPath: null,
  agentId: id,
  startedAt: 1,
});

it('copies the children that are not running, each under a new id every copied mention carries, their ends told', async () => {
  const book = new TaskBook(path.join(dataDir, 'from.db'));
  // A background child whose end the original's model was not told yet.
  book.started({ ...child(ENDED), notice: null });
  book.ended(ENDED, 2, { result: `done; see ${NESTED}` });
  expect(book.untold().map((task) => task.id)).toEqual([ENDED]);
  book.started(child(NESTED, `${ENDED}/call-n`));
  book.ended(NESTED, 3, { result: 'nested done' });
  book.started(child(RUNNING));
  book.started({ ...child('task-cmd'), kind: 'command', agentId: null });
  book.ended('task-cmd', 4, { exitCode: 0 });
  const transcripts = fileChildTranscripts(dataDir);
  const log = await transcripts(ENDED);
  log.append(`{"role":"user","message":{"content":[{"type":"text","text":"[t0u]\\nstart ${NESTED}"}]}}\n`);
  log.close();

  const copies = ChildCopies.of(book.recent(100));
  expect([...copies.ids.keys()].sort()).toEqual([ENDED, NESTED].sort());
  const ended = copies.ids.get(ENDED)!;
  const nested = copies.ids.get(NESTED)!;
  expect(new Set([ended, nested, ENDED, NESTED]).size).toBe(4);

  const copyBook = new TaskBook(path.join(dataDir, 'to.db'));
  await copies.copy({ book, transcript: transcripts }, { book: copyBook, transcript: transcripts });
  expect(copyBook.get(ended)).toMatchObject({
    state: 'ended',
    agentId: ended,
    endedAt: 2,
    outcome: { result: `done; see ${nested}` },
    notice: 'told',
  });
  expect(copyBook.get(nested)).toMatchObject({ toolCallId: `${ended}/call-n`, state: 'ended' });
  expect(copyBook.get(RUNNING)).toBeUndefined();
  expect(copyBook.untold()).toEqual([]);
  expect(copyBook.recent(100)).toHaveLength(2);
  // The transcript under the new id, its mention of the nested child renamed; a child that wrote
  // nothing gets no file, and the originals stay as they were.
  expect(await readFile(agentPaths(dataDir, ended).jsonl, 'utf8')).toContain(`start ${nested}`);
  await expect(stat(agentPaths(dataDir, nested).transcriptDir)).rejects.toMatchObject({ code: 'ENOENT' });
  expect(await readFile(agentPaths(dataDir, ENDED).jsonl, 'utf8')).toContain(`start ${NESTED}`);
  expect(book.get(ENDED)).toMatchObject({ agentId: ENDED });

  // A running task is never recorded as a copy.
  expect(() => copyBook.copied(book.get(RUNNING)!)).toThrow(/still running/);
  book.close();
  copyBook.close();
});
