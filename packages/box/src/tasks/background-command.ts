/**
 * One background command: the confined launch the shell tool prepared
 * (sandbox/confinement.ts), started in its own process group with its output
 * going to a TaskOutput, and ended by its exit, by `stop` or by its
 * wall-clock limit. Ending kills the whole group; under bubblewrap that is the
 * sandbox's PID namespace, so every process the command started dies with it.
 */
import { spawnConfined } from '../sandbox/supervisor.ts';
import type { LaunchSpec } from '../sandbox/confinement.ts';
import type { TaskOutput } from './task-output.ts';

/** How a background command ended. */
export interface CommandEnd {
  exitCode: number | null;
  signal: string | null;
  /** `exited`: on its own; `stopped`: Stop, deleteAgent, shutdown or the stop button; `timed-out`: its wall-clock limit. */
  reason: 'exited' | 'stopped' | 'timed-out' | 'spawn-error';
  /** Why it could not start (reason `spawn-error`). */
  error?: string;
  endedAt: number;
}

export interface BackgroundCommand {
  readonly pid: number | undefined;
  /** Settles once the command is over and its output is in the file. */
  readonly ended: Promise<CommandEnd>;
  /** Kills the command's whole process group (idempotent); `why` becomes the end's reason. */
  stop(why?: 'stopped' | 'timed-out'): void;
}

/** After the command's process exits, how long its pipes may stay open (an unconfined detached child holding them). */
const PIPE_GRACE_MS = 250;

export function startBackgroundCommand(
  spec: LaunchSpec & { cwd: string },
  output: TaskOutput,
  options: { maxRuntimeMs: number; now(): number },
): BackgroundCommand {
  // Through the supervisor, as every confined launch (sandbox/supervisor.ts): the lifeline and
  // the keyring filter come on fds 3 and 4, and the command dies with the box.
  const { child } = spawnConfined(spec, { cwd: spec.cwd });
  let stopReason: 'stopped' | 'timed-out' | null = null;
  let exited = false;
  const killGroup = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  };
  const stop = (why: 'stopped' | 'timed-out' = 'stopped') => {
    if (exited && stopReason === null) {
      // The command is over; only a confined-less straggler may hold the group: kill it quietly.
      killGroup();
      return;
    }
    stopReason ??= why;
    killGroup();
  };
  const timer = setTimeout(() => stop('timed-out'), options.maxRuntimeMs);
  timer.unref();
  child.stdout.on('data', (chunk: Buffer) => output.add(chunk));
  child.stderr.on('data', (chunk: Buffer) => output.add(chunk));
  let spawnError: string | undefined;
  child.on('error', (error) => {
    spawnError = error.message;
  });
  let grace: NodeJS.Timeout | undefined;
  child.on('exit', () => {
    exited = true;
    grace = setTimeout(() => {
      child.stdout.destroy();
      child.stderr.destroy();
    }, PIPE_GRACE_MS);
  });
  const ended = new Promise<CommandEnd>((resolve) => {
    child.on('close', (code, signal) => {
      exited = true;
      clearTimeout(timer);
      clearTimeout(grace);
      const endedAt = options.now();
      void output
        .flushed()
        .then(() =>
          resolve(
            spawnError !== undefined
              ? { exitCode: null, signal: null, reason: 'spawn-error', error: spawnError, endedAt }
              : { exitCode: code, signal, reason: stopReason ?? 'exited', endedAt },
          ),
        );
    });
  });
  return { pid: child.pid, ended, stop };
}
