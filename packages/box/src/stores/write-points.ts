/**
 * Write points: every durable write of an agent's stores (a JSONL append, a
 * ledger commit, an inbox commit, an upload's files) passes one first. In
 * production they only count. Tests use them to fail a write as a full disk
 * would (`fail`), and the crash harness to kill the box at its k-th write
 * (`SENDBOX_TEST_CRASH_AT_WRITE=k`, with SIGKILL: no cleanup runs, as in a
 * power cut of the process), which reaches every point between two writes.
 */
/** `agent`: a new agent's folders and files (createAgent, duplicateAgent). */
export type WriteStore = 'jsonl' | 'ledger' | 'inbox' | 'upload' | 'agent' | 'routine';

export interface WritePointOptions {
  /** Kill the process (SIGKILL) just before its `crashAt`-th write (1-based). */
  crashAt?: number;
  /** An error to throw instead of writing (a full disk, EIO), or null to write; `what` names the write. */
  fail?: (store: WriteStore, what: string) => Error | null;
}

export class WritePoints {
  private count = 0;

  constructor(private readonly options: WritePointOptions = {}) {}

  /** The options from the environment of a box started by the crash harness. */
  static fromEnv(env: NodeJS.ProcessEnv): WritePoints {
    const crashAt = Number(env.SENDBOX_TEST_CRASH_AT_WRITE);
    return new WritePoints(Number.isInteger(crashAt) && crashAt > 0 ? { crashAt } : {});
  }

  /** Writes counted so far (the harness reads it to know how many points a run has). */
  get writes(): number {
    return this.count;
  }

  pass(store: WriteStore, what = ''): void {
    this.count += 1;
    if (this.options.crashAt === this.count) process.kill(process.pid, 'SIGKILL');
    const error = this.options.fail?.(store, what);
    if (error) throw error;
  }
}

/** An error shaped like the kernel's ENOSPC, for tests that fill the disk without filling it. */
export function diskFullError(store: WriteStore): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`ENOSPC: no space left on device, write (${store})`);
  error.code = 'ENOSPC';
  error.errno = -28;
  return error;
}
