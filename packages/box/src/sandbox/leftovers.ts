/**
 * Finding and killing sandbox processes an earlier box left running (docs/sandbox.md,
 * "No sandbox outlives the box"). A sandbox is recognized from /proc, which
 * every process of the machine appears in, whatever its namespace: by the uids
 * of the data dir's agents (as root), and by the command line of its bubblewrap
 * and supervisor processes, which name the sandbox folder. Killing a
 * sandbox's PID 1 (bubblewrap's init or the supervisor) kills everything in it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

/** `$0` of a sandbox's supervisor: this prefix, then the sandbox folder. */
export const SUPERVISOR_MARK = 'sendbox-sandbox:';

function pids(names: string[]): number[] {
  return names.filter((name) => /^\d+$/.test(name)).map(Number);
}

/** Real, effective, saved and filesystem uids from /proc/<pid>/status text. */
function uidsOf(status: string): number[] {
  const line = /^Uid:\s+(.*)$/m.exec(status)?.[1] ?? '';
  return line.split(/\s+/).filter(Boolean).map(Number);
}

/** Processes running under any of `uids` (any of their real, effective or saved uids). */
export async function processesOfUids(uids: ReadonlySet<number>): Promise<number[]> {
  if (uids.size === 0) return [];
  const found: number[] = [];
  await Promise.all(
    pids(await readdir('/proc')).map(async (pid) => {
      const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
      if (uidsOf(status).some((uid) => uids.has(uid))) found.push(pid);
    }),
  );
  return found;
}

/** The same, synchronously (inside a registry transaction). */
export function processesOfUidsSync(uid: number): number[] {
  return pids(readdirSync('/proc')).filter((pid) => {
    try {
      return uidsOf(readFileSync(`/proc/${pid}/status`, 'utf8')).includes(uid);
    } catch {
      return false;
    }
  });
}

/**
 * bubblewrap and supervisor processes of `root` or the sandboxes below it: bubblewrap's
 * arguments name the sandbox folder it binds, the supervisor's `$0` names it
 * after SUPERVISOR_MARK. Bubblewrap's inner process (its init) is a fork of
 * the outer one and has the same command line.
 */
export async function sandboxProcesses(root: string): Promise<number[]> {
  const dir = path.resolve(root);
  const within = (arg: string) => arg === dir || arg.startsWith(dir + path.sep);
  const found: number[] = [];
  await Promise.all(
    pids(await readdir('/proc')).map(async (pid) => {
      if (pid === process.pid) return;
      const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0');
      const isBwrap = path.basename(argv[0] ?? '') === 'bwrap';
      const named = argv.some(
        (arg) =>
          (arg.startsWith(SUPERVISOR_MARK) && within(arg.slice(SUPERVISOR_MARK.length))) ||
          (isBwrap && within(arg)),
      );
      if (named) found.push(pid);
    }),
  );
  return found;
}

/** SIGKILLs the processes, then waits (up to `waitMs`) until /proc no longer lists them. */
export async function killProcesses(list: readonly number[], waitMs = 5000): Promise<void> {
  for (const pid of list) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already, or not ours to kill.
    }
  }
  const deadline = Date.now() + waitMs;
  let alive = [...list];
  while (alive.length > 0 && Date.now() < deadline) {
    alive = alive.filter((pid) => {
      try {
        // A zombie is dead: it holds no file and runs nothing.
        return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
      } catch {
        return false;
      }
    });
    if (alive.length > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Kills what is left of the sandboxes below `root` (a data dir's `sandboxes/`):
 * their bubblewrap and supervisor processes first (the namespace dies with its
 * PID 1), then every process of the agents' uids. Returns how many it killed.
 */
export async function sweepLeftovers(root: string, uids: ReadonlySet<number>): Promise<number> {
  const sandboxes = await sandboxProcesses(root);
  await killProcesses(sandboxes);
  const stragglers = await processesOfUids(uids);
  await killProcesses(stragglers);
  return sandboxes.length + stragglers.length;
}
