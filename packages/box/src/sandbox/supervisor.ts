/**
 * No sandbox outlives the box (docs/sandbox.md). bubblewrap's own
 * `--die-with-parent` is armed only after it has started: a box killed in
 * those first milliseconds left a sandbox running with no timeout. So every
 * sandbox runs a tiny supervisor as its PID 1 (bubblewrap's `--as-pid-1`),
 * tied to the box by a lifeline: a socket on fd 3 whose other end only the
 * box holds and never writes to. The kernel closes that end whenever the box
 * ends, however it ends, and the supervisor then reads end-of-file.
 *
 * The supervisor starts watching the lifeline, then checks it is still open
 * (the box may already be gone), and only then starts the command. When the
 * lifeline ends first, it exits, and the kernel kills every process of the
 * sandbox with its PID 1. As root it runs as uid 0 with only the capabilities
 * to switch uid, which an agent's processes (another uid, no capabilities)
 * can neither signal nor trace; the command runs under `setpriv` as the
 * agent's uid. It also reaps orphans, as an init must.
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { SUPERVISOR_MARK } from './leftovers.ts';

/**
 * `bash -c SUPERVISOR <mark> <inner script> [setpriv args...]`: the inner
 * script runs with `bash -c` under `setpriv ARGS --` when args are given, with
 * the lifeline (fd 3) closed. The watcher signals PID 1 when the lifeline ends:
 * a trapped signal ends `wait` at once, whenever it comes (`wait -n` would miss
 * a watcher that ended before it was called). Only PID 1's own uid may signal
 * it, and only with a trap set.
 */
const SUPERVISOR = [
  // The command gets the real stderr (fd 5 here); the supervisor's own words (bash's job reports) go nowhere.
  'exec 5>&2 2>/dev/null',
  "trap 'exit 125' TERM",
  '{ read -r -u 3 _; kill -TERM $$; } &',
  'if read -r -t 0 -u 3; then exit 125; fi',
  'script=$1; shift',
  // `0<&0`: a background job's stdin would be /dev/null, and an MCP server speaks on its stdin.
  'if [ $# -gt 0 ]; then setpriv "$@" -- bash --norc -c "$script" 0<&0 2>&5 3<&- 5>&- & else bash --norc -c "$script" 0<&0 2>&5 3<&- 5>&- & fi',
  'exec 3<&- 5>&-',
  'wait $!',
].join('\n');

/** The supervisor's argv (after bubblewrap's `--`), running `script` as the sandbox's command. */
export function supervisorArgs(sandboxDir: string, script: string, setpriv: readonly string[]): string[] {
  // --norc: bash reads ~/.bashrc when its stdin is a socket (node's pipes are), even under -c.
  return ['bash', '--norc', '-c', SUPERVISOR, `${SUPERVISOR_MARK}${sandboxDir}`, script, ...setpriv];
}

/** The descriptors a launch needs from 3 on. */
export interface LaunchFds {
  /** fd 3 is the box's lifeline: held open by the box for as long as the sandbox may live. */
  lifeline: boolean;
  /** Bytes the process reads from fd 4 at start (bubblewrap's seccomp program). */
  seccomp?: Buffer;
}

export interface ConfinedChild {
  child: ChildProcess & { stdout: Readable; stderr: Readable };
  /** Ends the lifeline: the sandbox's supervisor exits and the kernel kills the sandbox. */
  cutLifeline: () => void;
}

/**
 * Spawns a launch (`Confinement.launch`) with the descriptors it needs: the
 * lifeline on fd 3 (cut when the process exits, or by `cutLifeline`) and the
 * seccomp program on fd 4. In its own process group, so a timeout can kill
 * it whole; stdin is /dev/null unless asked for.
 */
export function spawnConfined(
  spec: { file: string; args: string[]; env: Record<string, string>; fds?: LaunchFds },
  options: { cwd: string; stdin?: 'ignore' | 'pipe' },
): ConfinedChild {
  const stdio: StdioOptions = [options.stdin ?? 'ignore', 'pipe', 'pipe'];
  if (spec.fds) stdio.push('pipe', spec.fds.seccomp ? 'pipe' : 'ignore');
  const child = spawn(spec.file, spec.args, { cwd: options.cwd, env: spec.env, stdio, detached: true });
  const lifeline = spec.fds?.lifeline ? (child.stdio[3] as Writable | null) : null;
  const cutLifeline = () => lifeline?.destroy();
  if (lifeline) {
    lifeline.on('error', () => {});
    child.once('exit', cutLifeline);
  }
  const seccomp = spec.fds?.seccomp ? (child.stdio[4] as Writable | null) : null;
  if (seccomp) {
    // A bubblewrap that fails before reading it closes the other end: not an error of ours.
    seccomp.on('error', () => {});
    seccomp.end(spec.fds?.seccomp);
  }
  return { child: child as ConfinedChild['child'], cutLifeline };
}
