/**
 * No sandbox outlives the box (docs/sandbox.md): a box SIGKILLed right after
 * bubblewrap starts (a real box process, `testing/dying-box.ts`), and the
 * start-up sweep of what an earlier box left running. Real bubblewrap, real
 * processes, found in /proc.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { lstat, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentHost } from '../host/agent-host.ts';
import { hostFixture, type HostFixture } from '../testing/host-fixture.ts';
import { detectConfinement } from './confinement.ts';
import { sandboxProcesses } from './leftovers.ts';
import { spawnConfined } from './supervisor.ts';

const DYING_BOX = fileURLToPath(new URL('../testing/dying-box.ts', import.meta.url));
const asRoot = process.getuid?.() === 0;

let fx: HostFixture | undefined;
const started: ChildProcess[] = [];
afterEach(async () => {
  for (const child of started.splice(0)) child.kill('SIGKILL');
  await fx?.dispose();
  fx = undefined;
});

/** Host processes whose command line contains `needle`. */
async function processesWith(needle: string): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const cmdline = (await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '')).split('\0').join(' ');
    if (cmdline.includes(needle)) found.push(Number(name));
  }
  return found;
}

/** Waits (up to `ms`) until nothing of the sandbox and no `needle` process runs; returns what is left. */
async function settle(sandbox: string, needle: string, ms = 10_000): Promise<number[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const left = [...(await sandboxProcesses(sandbox)), ...(await processesWith(needle))];
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function kill(pids: number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone.
    }
  }
}

describe('no sandbox outlives the box', () => {
  it('a box killed (-9) right after bubblewrap starts leaves nothing running: 50 rounds', async () => {
    fx = await hostFixture();
    const { sandbox } = fx;
    const tag = `2718.${process.pid}`;
    const survivors: string[] = [];
    for (let batch = 0; batch < 10; batch++) {
      const rounds = Array.from({ length: 5 }, (_, i) => batch * 5 + i);
      await Promise.all(
        rounds.map(async (round) => {
          const command = `sleep ${tag}${String(round).padStart(2, '0')}`;
          // 0–9 ms between bubblewrap's start and the kill: its own parent-death signal is armed in there.
          const args = JSON.stringify({ sandbox, command, killAfterMs: round % 10 });
          const box = spawn(process.execPath, ['--import', 'tsx', DYING_BOX, args], {
            stdio: ['ignore', 'ignore', 'pipe'],
          });
          started.push(box);
          let stderr = '';
          box.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
          const signal = await new Promise((resolve) => box.once('exit', (_code, s) => resolve(s)));
          expect(signal, stderr).toBe('SIGKILL');
        }),
      );
      const left = await settle(sandbox, `sleep ${tag}`);
      if (left.length > 0) {
        survivors.push(...(await Promise.all(left.map((pid) => readFile(`/proc/${pid}/cmdline`, 'utf8')))));
        kill(left);
      }
    }
    expect(survivors.map((cmdline) => cmdline.split('\0').join(' ').slice(0, 80))).toEqual([]);
  }, 180_000);

  it('a lifeline cut at any moment of a sandbox start (the box gone) ends the sandbox: 60 rounds', async () => {
    fx = await hostFixture([], { provider: null });
    const { sandbox } = fx;
    const confinement = await detectConfinement();
    try {
      await confinement.prepare(sandbox);
      const tag = `2719.${process.pid}`;
      const survivors: number[] = [];
      for (let batch = 0; batch < 6; batch++) {
        await Promise.all(
          Array.from({ length: 10 }, async (_, i) => {
            const round = batch * 10 + i;
            const command = `sleep ${tag}${String(round).padStart(2, '0')}`;
            const spec = confinement.launch({ command, sandboxDir: sandbox, cwd: sandbox, env: {} });
            if ('refused' in spec) throw new Error(spec.refused);
            const { child, cutLifeline } = spawnConfined(spec, { cwd: sandbox });
            started.push(child);
            child.stdout.resume();
            child.stderr.resume();
            // 0 to 59 ms: before, during and after the supervisor starts the command.
            await new Promise((resolve) => setTimeout(resolve, round));
            cutLifeline();
          }),
        );
        const left = await settle(sandbox, `sleep ${tag}`);
        survivors.push(...left);
        kill(left);
      }
      expect(survivors).toEqual([]);
    } finally {
      confinement.close();
    }
  }, 180_000);

  it("kills, at start and before any file work, what an earlier box left in this data dir's sandboxes, and only those", async () => {
    fx = await hostFixture([], { provider: null });
    const { dataDir, sandbox } = fx;
    await fx.host.close();
    const other = await hostFixture([], { provider: null });
    try {
      const confinement = await detectConfinement();
      await confinement.prepare(sandbox);
      await confinement.prepare(other.sandbox);
      // A sandbox whose lifeline is still held (a box hung, or one of an older version).
      const leave = (dir: string, command: string) => {
        const spec = confinement.launch({
          command,
          sandboxDir: dir,
          cwd: dir,
          env: { PATH: '/usr/bin:/bin' },
        });
        if ('refused' in spec) throw new Error(spec.refused);
        started.push(spawnConfined(spec, { cwd: dir }).child);
      };
      leave(sandbox, 'sleep 3141.1');
      leave(other.sandbox, 'sleep 3141.4');
      // A sandbox as the box made them before the supervisor: bubblewrap's init as PID 1.
      started.push(
        spawn(
          'bwrap',
          ['--ro-bind', '/', '/', '--bind', sandbox, sandbox, '--unshare-pid', '--', 'sleep', '3141.2'],
          { stdio: 'ignore' },
        ),
      );
      // A process of the agent's uid outside any sandbox.
      if (asRoot) {
        const uid = (await lstat(sandbox)).uid;
        started.push(
          spawn('setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', 'sleep', '3141.3'], {
            stdio: 'ignore',
          }),
        );
      }
      const expected = asRoot ? 4 : 3;
      for (let tries = 0; (await processesWith('sleep 3141.')).length < expected; tries++) {
        if (tries > 200) throw new Error('the leftovers did not start');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      confinement.close();

      const host = await createAgentHost({ dataDir, provider: null, env: {} });
      try {
        for (const leftover of ['sleep 3141.1', 'sleep 3141.2', 'sleep 3141.3'])
          expect(await processesWith(leftover), leftover).toEqual([]);
        expect(await sandboxProcesses(path.join(dataDir, 'sandboxes'))).toEqual([]);
        // Another data dir's sandbox is not this box's to kill: its command still runs.
        const stillThere = await Promise.all(
          (await processesWith('sleep 3141.4')).map((pid) => readFile(`/proc/${pid}/cmdline`, 'utf8')),
        );
        expect(stillThere).toContain('sleep\x003141.4\x00');
      } finally {
        await host.close();
      }
    } finally {
      kill(await processesWith('sleep 3141.'));
      await other.dispose();
    }
  });
});
