/**
 * The open agent's background tasks, live (the `task` events) and on load (`listTasks`), and
 * the steps of its subagents: what tool rows read to show a running command's tail, its stop
 * button, and a subagent's steps.
 */
import { createContext } from 'react';
import type { TaskView, TranscriptEntry } from './api/types.ts';

export interface TasksContextValue {
  /** By the id of the tool call that started each task. */
  byToolCall: ReadonlyMap<string, TaskView>;
  /** Steps of subagents seen live, by subagent id. */
  childSteps: ReadonlyMap<string, readonly TranscriptEntry[]>;
  stopTask(taskId: string): Promise<void>;
  /** A subagent's steps from its transcript (for one that ran before the page opened). */
  loadChild(subagentId: string): Promise<readonly TranscriptEntry[]>;
}

export const TasksContext = createContext<TasksContextValue | null>(null);
