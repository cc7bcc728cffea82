/**
 * Runs one confined command (a `LaunchSpec` from confinement.ts) as the tools that start processes
 * need it: in its own process group, killed whole (SIGKILL to the group) when its time is up or
 * the turn is stopped, its output handed over chunk by chunk. `shell` and `grep` both run this way.
 */
import type { LaunchSpec } from './confinement.ts';
import { spawnConfined } from './supervisor.ts';

export interface ConfinedRunOptions {
  cwd: string;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  onStdout: (chunk: Buffer) => void;
  onStderr: (chunk: Buffer) => void;
}

export interface ConfinedRun {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  durationMs: number;
  /** The process could not be started (`spawn` failed); nothing ran. */
  spawnError?: string;
}

/** After the process exits, how long its pipes may stay open (an unconfined detached child holding them). */
const PIPE_GRACE_MS = 250;

export function runConfined(spec: LaunchSpec, options: ConfinedRunOptions): Promise<ConfinedRun> {
  const started = Date.now();
  // Stopped already (a Stop between the model's step and this call): nothing starts. Its abort event
  // has fired, so a process started now would never hear it and would run its whole course.
  if (options.signal?.aborted) {
    return Promise.resolve({ exitCode: null, signal: 'SIGKILL', timedOut: false, durationMs: 0 });
  }
  return new Promise((resolve) => {
    // Through the supervisor: the command's processes die with the box (supervisor.ts).
    const { child } = spawnConfined(spec, { cwd: options.cwd });
    child.stdout.on('data', options.onStdout);
    child.stderr.on('data', options.onStderr);
    let timedOut = false;
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    options.signal?.addEventListener('abort', killGroup, { once: true });
    let spawnError: string | undefined;
    child.on('error', (error) => {
      spawnError = error.message;
    });
    // Confined, the sandbox dies with its first process and the pipes close with it. Unconfined, a
    // detached child can hold them open forever: the command is over when its process is.
    let grace: NodeJS.Timeout | undefined;
    child.on('exit', () => {
      grace = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, PIPE_GRACE_MS);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(grace);
      options.signal?.removeEventListener('abort', killGroup);
      resolve({
        exitCode: code,
        signal,
        timedOut,
        durationMs: Date.now() - started,
        ...(spawnError ? { spawnError } : {}),
      });
    });
  });
}
