/**
 * After a crash, children are closed the way the turn closer closes their parent's turn
 * (agent/turn-closer.ts): every call in a child's transcript gets a result (interrupted), and the
 * parent's interrupted `task` call names the child it started, from the task book, so the
 * parent → child link (C7) holds after a crash too.
 */
import type { JsonObject } from '@sendbox/txcript';
import { repairOf } from '../agent/turn-closer.ts';
import { readRecords, type TranscriptLog } from '../stores/transcript.ts';
import type { WritePoints } from '../stores/write-points.ts';
import type { Scrubber } from '../secrets/scrub.ts';
import type { TaskRecord, TaskStore } from '../tasks/task-book.ts';
import { TranscriptWriter } from '../stores/transcript-writer.ts';
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
  transcript: (childId: string) => Promise<TranscriptLog>,
  interrupted: readonly TaskRecord[],
  scrubber: Scrubber,
  points: WritePoints,
  /** Told of each child once its transcript is closed (the book records it: task-book.ts `closing`). */
  closed: (task: TaskRecord) => void | Promise<void> = () => undefined,
): Promise<void> {
  for (const task of interrupted) {
    if (task.kind !== 'subagent' || !task.agentId) continue;
    const log = await transcript(task.agentId);
    try {
      // None when the crash came before its first record.
      const records = await readRecords(log);
      if (records.length > 0) {
        const repair = repairOf(0, records, [], () => []);
        new TranscriptWriter(
          log,
          new ChildLedger(),
          () => scrubber,
          () => undefined,
          points,
        ).appendRecords(repair.records);
      }
    } finally {
      log.close();
    }
    await closed(task);
  }
}
