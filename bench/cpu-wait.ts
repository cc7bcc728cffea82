/**
 * Time this thread has spent runnable but waiting for a CPU (Linux schedstat, ns). On a loaded
 * machine an operation that is preempted waits a whole scheduler slice; subtracting that wait
 * separates an operation's own cost from the machine's load. Undefined where the file does not exist.
 */
import { readFileSync } from 'node:fs';

export const SCHEDSTAT = '/proc/thread-self/schedstat';

export function runQueueWaitNs(): number | undefined {
  try {
    return Number(readFileSync(SCHEDSTAT, 'utf8').split(' ')[1]);
  } catch {
    return undefined;
  }
}
