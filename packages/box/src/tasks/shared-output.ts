/**
 * A background command's output, shared with the other workers of a cluster (issue 25). The process
 * and its output file live on one worker only; an agent's next turn may run on another, whose
 * `await` would otherwise see no output at all and could never match a `regex`. So the worker
 * running a command appends its output, raw as in the file, to a store every worker reads
 * (stores/postgres/task-outputs.ts), at most every SHARE_EVERY_MS and once more before its end is
 * recorded, so a reader that sees the end has every byte before it. The store keeps the last
 * SHARED_OUTPUT_KEEP_BYTES of each task; a reader scrubs what it shows, as for the file. How far
 * the model has read each task's output is kept there too, so no worker shows it twice.
 */
import type { TaskOutput } from './task-output.ts';

/** How often a running command's new output is shared (its chunks coalesced). */
export const SHARE_EVERY_MS = 250;

/** Bytes of a task's output the store keeps (the newest); what `await` shows at most, and a margin. */
export const SHARED_OUTPUT_KEEP_BYTES = 128 * 1024;

/** An agent's shared task output (a cluster's: every worker reads it). */
export interface SharedTaskOutput {
  /** Appends bytes of task `taskId`'s output that start at byte `start` of it. */
  append(taskId: string, start: number, bytes: Buffer): Promise<void>;
  /**
   * The output from byte `from` on, as far as it is kept: `start` is where `bytes` begin (later than
   * `from` when older bytes were dropped), `end` the output's length so far.
   */
  since(taskId: string, from: number): Promise<{ start: number; end: number; bytes: Buffer }>;
  /**
   * The byte of the task's output the model has read up to, through an `await` on any worker (0:
   * none): the agent's next turn may run on a third worker, or back on the one running the command.
   */
  seen(taskId: string): Promise<number>;
  /** Records that the model has read the output up to byte `upTo` (the mark never moves back). */
  markSeen(taskId: string, upTo: number): Promise<void>;
}

/** Longest a command's end waits for its last output to be shared (a database out of reach). */
export const FLUSH_WAIT_MS = 5_000;

/**
 * Shares a command's output as it comes; `flush` shares what is left (before its end is recorded),
 * waiting FLUSH_WAIT_MS at most: the end is recorded then even if the store does not answer.
 */
export function shareOutput(
  output: TaskOutput,
  taskId: string,
  shared: SharedTaskOutput,
  onError: (error: Error) => void,
): { flush(): Promise<void> } {
  let offset = 0;
  let pending: Buffer[] = [];
  let timer: NodeJS.Timeout | null = null;
  let sending: Promise<void> = Promise.resolve();
  const send = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (pending.length === 0) return sending;
    const bytes = Buffer.concat(pending);
    const start = offset;
    pending = [];
    offset += bytes.length;
    // In order, one at a time: a reader never sees a later piece without the earlier ones.
    sending = sending.then(() => shared.append(taskId, start, bytes)).catch(onError);
    return sending;
  };
  const off = output.onChunk((chunk) => {
    pending.push(chunk);
    timer ??= setTimeout(() => void send(), SHARE_EVERY_MS);
  });
  return {
    flush: () => {
      off();
      return settledWithin(send(), FLUSH_WAIT_MS, undefined);
    },
  };
}

/**
 * The store's answer, or `fallback` once `ms` passed or it failed: a database out of reach slows a
 * command's end or an `await`, never holds it.
 */
export function settledWithin<T>(answer: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)));
  return Promise.race([answer.catch(() => fallback), late]).finally(() => clearTimeout(timer));
}
