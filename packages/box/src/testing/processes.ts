/**
 * Test helpers for what runs on this machine: processes found by their exact command line (a
 * marker such as `sleep 307.31` that no other test uses), and polling until a condition holds.
 * Never used outside tests.
 */
import { readdir, readFile } from 'node:fs/promises';

/** Processes whose command line is exactly `args` (bubblewrap's PID namespace hides no /proc entry from the host). */
export async function processesRunning(...args: string[]): Promise<number[]> {
  const wanted = `${args.join('\u0000')}\u0000`;
  const pids: number[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline === wanted) pids.push(Number(pid));
  }
  return pids;
}

/** Polls `check` every 25 ms until it holds; throws naming `what` after `ms`. */
export async function until(
  check: () => Promise<boolean> | boolean,
  what: string,
  ms = 30_000,
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
