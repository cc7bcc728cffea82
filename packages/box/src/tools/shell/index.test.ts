import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { detectConfinement } from '../../sandbox/confinement.ts';
import { scrubberFor } from '../../secrets/scrub.ts';
import { errorText, useToolSandbox } from '../test-context.ts';
import { shellTool as makeShellTool, type ShellOptions } from './index.ts';

const box = useToolSandbox();
const shellTool = (options: Omit<ShellOptions, 'confinement'> = {}) =>
  makeShellTool({ ...options, confinement: box.confinement });

describe('shell', () => {
  it('runs in the sandbox and returns {stdout, exitCode} on success', async () => {
    const out = await shellTool().run({ command: 'pwd' }, box.ctx);
    expect(out.envelope).toEqual({
      success: { stdout: `${box.sandbox}\n`, exitCode: 0 },
      isBackground: false,
    });
  });

  it('returns the failure envelope on a non-zero exit', async () => {
    const out = await shellTool().run({ command: 'echo out; echo err >&2; exit 3' }, box.ctx);
    expect(out.envelope).toMatchObject({
      failure: {
        command: 'echo out; echo err >&2; exit 3',
        exitCode: 3,
        stdout: 'out\n',
        stderr: 'err\n',
        // As the agent sees it (real files: absolute), and isBackground beside the envelope.
        workingDirectory: box.sandbox,
      },
      isBackground: false,
    });
  });

  it('kills a command at its timeout', async () => {
    const out = await shellTool().run({ command: 'sleep 20', timeout: 200 }, box.ctx);
    expect(out.envelope).toMatchObject({ failure: { timedOut: true } });
  });

  it('runs nothing long when the turn was stopped before the command started (its signal already aborted)', async () => {
    const stopped = new AbortController();
    stopped.abort(new Error('Stop'));
    const started = Date.now();
    const out = await shellTool().run({ command: 'sleep 20' }, { ...box.ctx, signal: stopped.signal });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(out.envelope).toMatchObject({ failure: { exitCode: null } });
  });

  it('unconfined (--unsafe-host-tools), ends when the command exits even if a detached child holds its output', async () => {
    const unsafe = await detectConfinement({ bwrap: '/nonexistent/bwrap', unsafeHostTools: true });
    const started = Date.now();
    const out = await makeShellTool({ confinement: unsafe }).run(
      { command: 'setsid sleep 27.18 & echo started' },
      box.ctx,
    );
    expect(out.envelope).toMatchObject({ success: { stdout: 'started\n' } });
    expect(Date.now() - started).toBeLessThan(5_000);
    // The child outlives the call here (no PID namespace); end it.
    for (const pid of await readdir('/proc')) {
      const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
      if (cmdline === 'sleep\u000027.18\u0000') process.kill(Number(pid), 'SIGKILL');
    }
  });

  it('caps output', async () => {
    const out = await shellTool({ outputCapBytes: 100 }).run(
      { command: 'head -c 100000 /dev/zero | tr "\\0" x' },
      box.ctx,
    );
    const stdout = (out.envelope as { success: { stdout: string } }).success.stdout;
    expect(stdout.startsWith('x'.repeat(100))).toBe(true);
    expect(stdout).toContain('[output truncated: 100000 bytes');
    expect(stdout.length).toBeLessThan(200);
  });

  it('gives secrets as environment variables and scrubs them from the output', async () => {
    const secretCtx = {
      ...box.ctx,
      env: { ...box.ctx.env, API_TOKEN: 'tok-0123456789' },
      scrub: scrubberFor(new Map([['API_TOKEN', 'tok-0123456789']])),
    };
    const out = await shellTool().run(
      { command: 'echo "token=$API_TOKEN"; echo "$API_TOKEN" >&2; exit 1' },
      secretCtx,
    );
    const text = JSON.stringify(out);
    expect(text).not.toContain('tok-0123456789');
    expect(text).toContain('token=[secret API_TOKEN redacted]');
  });

  it('refuses a working directory outside the sandbox', async () => {
    const out = await shellTool().run({ command: 'ls', workingDirectory: '..' }, box.ctx);
    expect(errorText(out.envelope)).toContain('outside your sandbox');
  });
});
