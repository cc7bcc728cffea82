/**
 * A box that dies right after starting a sandbox (tests only): it starts one
 * confined command the way the shell tool does (`launch`, then
 * `spawnConfined`), spins for `killAfterMs`, then SIGKILLs itself: no handler,
 * no cleanup, as a crashed or OOM-killed box. Run with `node --import tsx`.
 *
 *   dying-box.ts '{"sandbox": "/data/sandboxes/<id>", "command": "sleep 60", "killAfterMs": 3}'
 */
import { detectConfinement } from '../sandbox/confinement.ts';
import { spawnConfined } from '../sandbox/supervisor.ts';

const { sandbox, command, killAfterMs } = JSON.parse(process.argv[2] ?? '{}') as {
  sandbox: string;
  command: string;
  killAfterMs: number;
};
const confinement = await detectConfinement();
if (!confinement.status.confined) throw new Error(confinement.status.detail);
await confinement.prepare(sandbox);
const spec = confinement.launch({
  command,
  sandboxDir: sandbox,
  cwd: sandbox,
  env: { PATH: '/usr/bin:/bin' },
});
if ('refused' in spec) throw new Error(spec.refused);
spawnConfined(spec, { cwd: sandbox });
// bubblewrap has been exec'd when spawn returns; busy-wait, so no event-loop turn runs in between.
const until = performance.now() + killAfterMs;
while (performance.now() < until);
process.kill(process.pid, 'SIGKILL');
