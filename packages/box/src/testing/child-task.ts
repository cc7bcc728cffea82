/** For tests: the task record a parent's `task` call (`call_task`, turn 0) writes for child `childId` as it starts it. */
import type { TaskStart } from '../tasks/task-book.ts';

export function childTaskStart(childId: string, startedAt: number): TaskStart {
  return {
    id: childId,
    kind: 'subagent',
    turn: 0,
    toolCallId: 'call_task',
    label: 'count files',
    outputPath: null,
    agentId: childId,
    startedAt,
  };
}
