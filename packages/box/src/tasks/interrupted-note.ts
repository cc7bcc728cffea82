/**
 * What the model reads, on the first turn after a crash, about the background work the crash
 * cut: a hidden prompt (`[SAND_HIDDEN_PROMPT]`, the host's words, not the user's) naming each
 * task, so it neither waits on nor trusts a command or a subagent that is gone.
 */
import { hiddenPrompt } from '@sendbox/protocol';
import type { TaskRecord } from './task-book.ts';

export function interruptedNote(tasks: readonly TaskRecord[]): string | null {
  if (tasks.length === 0) return null;
  const lines = tasks.map((task) =>
    task.worker
      ? `- ${task.kind === 'command' ? 'background command' : 'subagent'} ${task.id} (${task.label}): it ran on cluster worker ${task.worker}, which stopped; ${task.kind === 'command' ? `its output up to that worker's last snapshot of your sandbox is in ${task.outputPath ?? 'its file'}` : 'its transcript ends where it was cut'}`
      : task.kind === 'command'
        ? `- background command ${task.id} (${task.label}): its output up to the stop is in ${task.outputPath ?? 'its file'}`
        : `- subagent ${task.id} (${task.label}): its transcript ends where it was cut`,
  );
  return hiddenPrompt(
    `[event]\nThe box stopped while this background work ran, so it was interrupted and is not running any more:\n${lines.join('\n')}\nCheck what it did before you rely on it; start it again if it is still needed.`,
  );
}
