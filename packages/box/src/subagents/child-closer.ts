/**
 * After a crash, children are closed the way the turn closer closes their parent's turn
 * (agent/turn-closer.ts): every call in a child's transcript gets a result (interrupted), and the
 * parent's interrupted `task` call names the child it started, from the task book, so the
 * parent → child link (C7) holds after a crash too.
 */
import { readFile } from 'node:fs/promises';
import { grokBot, type JsonObject } from '@sendbox/txcript';
import { agentPaths } from '../stores/files/layout.ts';
import { repairOf } from '../agent/turn-closer.ts';
import type { WritePoints } from '../stores/write-points.ts';
import { isNotFound } from '../sandbox/paths.ts';
import type { Scrubber } from '../secrets/scrub.ts';
import type { TaskRecord, TaskStore } from '../tasks/task-book.ts';
import { TranscriptWriter } from '../stores/transcript-writer.ts';
import { JsonlFile } from '../stores/files/jsonl.ts';
import { ChildLedger } from './child-ledger.ts';

/** For the parent's closer: an interrupted `task` call of turn `turn` names its child. */
export function interruptedTaskDetail(
  book: TaskStore,
  turn: number,
): (name: string, input: JsonObject) => JsonObject | undefined {
  return (name, input) => {
    if (name !== 'task' || typeof input.toolCallId !== 'string') return undefined;
    const task = book.byToolCall(turn, input.toolCallId);
    return task?.agentId ? { agentId: task.agentId } : undefined;
  };
}

/** Gives every open call in the transcripts of the interrupted children its result. */
export async function closeInterruptedChildren(
  dataDir: string,
  interrupted: readonly TaskRecord[],
  scrubber: Scrubber,
  points: WritePoints,
): Promise<void> {
  for (const task of interrupted) {
    if (task.kind !== 'subagent' || !task.agentId) continue;
    const file = agentPaths(dataDir, task.agentId).jsonl;
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if (isNotFound(error)) continue; // the crash came before its first record
      throw error;
    }
    const records = grokBot.text
      .parse(text, file)
      .records.flatMap((line) => (line.kind === 'record' ? [line.json] : []));
    if (records.length === 0) continue;
    const repair = repairOf(0, records, [], () => []);
    const log = new JsonlFile(file);
    try {
      new TranscriptWriter(
        log,
        new ChildLedger(),
        () => scrubber,
        () => undefined,
        points,
      ).appendRecords(repair.records);
    } finally {
      log.close();
    }
  }
}
