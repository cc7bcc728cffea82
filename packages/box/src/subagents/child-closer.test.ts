import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { grokBot, type JsonObject } from '@sendbox/txcript';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileChildTranscripts } from '../stores/files/agent-stores.ts';
import { agentPaths } from '../stores/files/layout.ts';
import { INTERRUPTED_CALL_RESULT, repairOf } from '../agent/turn-closer.ts';
import { WritePoints } from '../stores/write-points.ts';
import { noScrub } from '../secrets/scrub.ts';
import { interruptedNote } from '../tasks/interrupted-note.ts';
import { TaskBook } from '../tasks/task-book.ts';
import { closeInterruptedChildren, interruptedTaskDetail } from './child-closer.ts';
import { childTaskStart } from '../testing/child-task.ts';

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'sendbox-child-closer-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

const CHILD = 'sand-subagent-0a0b0c0d-0e0f-4000-8000-000000000001';
const PARENT = 'parent-agent';

const record = (role: string, content: JsonObject[]): JsonObject => ({ role, message: { content } });

async function writeJsonl(id: string, records: JsonObject[]): Promise<string> {
  const file = agentPaths(dataDir, id).jsonl;
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  return file;
}

async function recordsOf(file: string): Promise<JsonObject[]> {
  return grokBot.text
    .parse(await readFile(file, 'utf8'), file)
    .records.flatMap((line) => (line.kind === 'record' ? [line.json] : []));
}

describe('closing after a crash during a child', () => {
  it("closes the child's open call, names the child in the parent's interrupted task call, and txcript links them", async () => {
    // What a kill mid-child leaves: both transcripts with a call and no result, the task `running`.
    const book = new TaskBook(path.join(dataDir, 'tasks.db'));
    book.started(childTaskStart(CHILD, 1));
    const parentRecords = [
      record('user', [{ type: 'text', text: '[t0u]\ncount my files' }]),
      record('assistant', [
        {
          type: 'tool_use',
          name: 'task',
          input: { description: 'count files', prompt: 'p', toolCallId: 'call_task' },
        },
      ]),
    ];
    const childFile = await writeJsonl(CHILD, [
      record('user', [{ type: 'text', text: '[t0u]\np' }]),
      record('assistant', [{ type: 'tool_use', name: 'shell', input: { command: 'ls', toolCallId: 'c1' } }]),
    ]);
    book.close();

    // The next start: the book marks it interrupted; the child and the parent are closed.
    const reopened = new TaskBook(book.file);
    const interrupted = reopened.interruptLeftovers(2);
    expect(interrupted.map((t) => t.id)).toEqual([CHILD]);
    await closeInterruptedChildren(fileChildTranscripts(dataDir), interrupted, noScrub, new WritePoints());
    expect((await recordsOf(childFile)).at(-1)).toEqual(
      record('tool', [
        { type: 'tool_result', name: 'shell', result: { error: { error: INTERRUPTED_CALL_RESULT } } },
      ]),
    );
    const repair = repairOf(0, parentRecords, [], () => [], interruptedTaskDetail(reopened, 0));
    expect(repair.records).toEqual([
      {
        role: 'tool',
        blocks: [
          {
            type: 'tool_result',
            name: 'task',
            result: { error: { error: INTERRUPTED_CALL_RESULT, agentId: CHILD } },
          },
        ],
      },
    ]);
    await writeJsonl(PARENT, [
      ...parentRecords,
      ...repair.records.map((r) => record(r.role, r.blocks as unknown as JsonObject[])),
    ]);
    // Closing again adds nothing (deterministic, repeatable).
    await closeInterruptedChildren(fileChildTranscripts(dataDir), interrupted, noScrub, new WritePoints());
    expect((await recordsOf(childFile)).length).toBe(3);

    const listed = await grokBot.store!({
      HOME: path.join(dataDir, 'home'),
      TXCRIPT_GROK_BOT_ROOT: path.join(dataDir, 'agent-transcripts'),
      TXCRIPT_GROK_BOT_AGENTS: path.join(dataDir, 'agents'),
      TXCRIPT_NO_CACHE: '1',
    }).discover();
    const child = listed.sessions.find((s) => s.id === CHILD);
    expect(child?.parentId).toBe(PARENT);

    // The model is told on its next turn.
    expect(interruptedNote(reopened.unreported())).toMatch(
      /^\[SAND_HIDDEN_PROMPT\]\[event\]\nThe box stopped while this background work ran[\s\S]*subagent sand-subagent-0a0b0c0d[^\n]*count files/,
    );
    reopened.close();
  });

  it('closes a child the previous start marked interrupted but crashed before closing, at the next start, once', async () => {
    const book = new TaskBook(path.join(dataDir, 'tasks.db'));
    book.started(childTaskStart(CHILD, 1));
    const childFile = await writeJsonl(CHILD, [
      record('user', [{ type: 'text', text: '[t0u]\np' }]),
      record('assistant', [{ type: 'tool_use', name: 'shell', input: { command: 'ls', toolCallId: 'c1' } }]),
    ]);
    // A start marks it interrupted, then dies before closing the child.
    expect(book.interruptLeftovers(2).map((t) => t.id)).toEqual([CHILD]);
    book.close();

    const next = new TaskBook(book.file);
    const close = async () =>
      closeInterruptedChildren(
        fileChildTranscripts(dataDir),
        next.interruptLeftovers(3),
        noScrub,
        new WritePoints(),
        (task) => next.childrenClosed([task.id]),
      );
    await close();
    expect((await recordsOf(childFile)).at(-1)).toEqual(
      record('tool', [
        { type: 'tool_result', name: 'shell', result: { error: { error: INTERRUPTED_CALL_RESULT } } },
      ]),
    );
    expect(next.get(CHILD)).toMatchObject({ state: 'interrupted', endedAt: 2 });
    // Recorded closed: a later start hands it to nobody.
    expect(next.interruptLeftovers(4)).toEqual([]);
    next.close();
  });

  it('leaves no folder for a child the crash cut before its first record', async () => {
    const book = new TaskBook(path.join(dataDir, 'tasks.db'));
    book.started(childTaskStart(CHILD, 1));
    const interrupted = book.interruptLeftovers(2);
    book.close();
    await closeInterruptedChildren(fileChildTranscripts(dataDir), interrupted, noScrub, new WritePoints());
    await expect(stat(agentPaths(dataDir, CHILD).transcriptDir)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
