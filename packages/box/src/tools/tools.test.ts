import { mkdir, mkdtemp, readdir, readFile, rm, symlink, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { detectConfinement, type Confinement } from '../sandbox/confinement.ts';
import { noScrub, scrubberFor } from '../secrets/scrub.ts';
import { readTool } from './read.ts';
import { shellTool as makeShellTool, type ShellOptions } from './shell.ts';
import type { TodoItem, ToolContext, ToolEnvelope } from './types.ts';

function errorText(envelope: ToolEnvelope): string {
  if (!('error' in envelope)) throw new Error(`expected an error envelope, got ${JSON.stringify(envelope)}`);
  return 'error' in envelope.error ? envelope.error.error : envelope.error.errorMessage;
}
import { updateTodosTool } from './update-todos.ts';
import { writeTool } from './write.ts';

let root: string;
let sandbox: string;
let ctx: ToolContext;
let confinement: Confinement;
const shellTool = (options: Omit<ShellOptions, 'confinement'> = {}) =>
  makeShellTool({ ...options, confinement });
beforeAll(async () => {
  confinement = await detectConfinement();
});
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'sendbox-tools-'));
  sandbox = path.join(root, 'sandbox');
  await mkdir(sandbox);
  await confinement.prepare(sandbox);
  ctx = {
    sandboxDir: sandbox,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    scrub: noScrub,
    todos: [] as TodoItem[],
    now: () => 1000,
  };
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('shell', () => {
  it('runs in the sandbox and returns {stdout, exitCode} on success', async () => {
    const out = await shellTool().run({ command: 'pwd' }, ctx);
    expect(out.envelope).toEqual({ success: { stdout: `${sandbox}\n`, exitCode: 0 }, isBackground: false });
  });

  it('returns the failure envelope on a non-zero exit', async () => {
    const out = await shellTool().run({ command: 'echo out; echo err >&2; exit 3' }, ctx);
    expect(out.envelope).toMatchObject({
      failure: {
        command: 'echo out; echo err >&2; exit 3',
        exitCode: 3,
        stdout: 'out\n',
        stderr: 'err\n',
        // As the agent sees it (real files: absolute), and isBackground beside the envelope.
        workingDirectory: sandbox,
      },
      isBackground: false,
    });
  });

  it('kills a command at its timeout', async () => {
    const out = await shellTool().run({ command: 'sleep 20', timeout: 200 }, ctx);
    expect(out.envelope).toMatchObject({ failure: { timedOut: true } });
  });

  it('unconfined (--unsafe-host-tools), ends when the command exits even if a detached child holds its output', async () => {
    const unsafe = await detectConfinement({ bwrap: '/nonexistent/bwrap', unsafeHostTools: true });
    const started = Date.now();
    const out = await makeShellTool({ confinement: unsafe }).run(
      { command: 'setsid sleep 27.18 & echo started' },
      ctx,
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
      ctx,
    );
    const stdout = (out.envelope as { success: { stdout: string } }).success.stdout;
    expect(stdout.startsWith('x'.repeat(100))).toBe(true);
    expect(stdout).toContain('[output truncated: 100000 bytes');
    expect(stdout.length).toBeLessThan(200);
  });

  it('gives secrets as environment variables and scrubs them from the output', async () => {
    const secretCtx = {
      ...ctx,
      env: { ...ctx.env, API_TOKEN: 'tok-0123456789' },
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
    const out = await shellTool().run({ command: 'ls', workingDirectory: '..' }, ctx);
    expect(errorText(out.envelope)).toContain('outside your sandbox');
  });
});

describe('read and write', () => {
  it('writes then reads a file, with a line window', async () => {
    const wrote = await writeTool.run({ path: 'notes/a.txt', content: 'one\ntwo\nthree' }, ctx);
    expect(wrote.envelope).toEqual({ success: { path: 'notes/a.txt', fileSize: 13 } });
    expect(await readFile(path.join(sandbox, 'notes/a.txt'), 'utf8')).toBe('one\ntwo\nthree');
    expect((await readTool.run({ path: 'notes/a.txt' }, ctx)).envelope).toEqual({
      success: { content: 'one\ntwo\nthree' },
    });
    expect((await readTool.run({ path: 'notes/a.txt', offset: 2, limit: 1 }, ctx)).envelope).toEqual({
      success: { content: 'two' },
    });
  });

  it('reads a window near the start of a file too big to hold in memory without reading the rest', async () => {
    const big = path.join(sandbox, 'huge.log');
    await writeFile(big, 'first\nsecond\nthird\n');
    await truncate(big, 3 * 1024 ** 3); // sparse: 3 GiB on paper, a few bytes on disk
    expect((await readTool.run({ path: 'huge.log', offset: 2, limit: 1 }, ctx)).envelope).toEqual({
      success: { content: 'second' },
    });
    const whole = await readTool.run({ path: 'huge.log' }, ctx);
    expect(errorText(whole.envelope)).toMatch(/more than the 262144-byte read limit/);
    const tooWide = await readTool.run({ path: 'huge.log', offset: 3 }, ctx);
    expect(errorText(tooWide.envelope)).toMatch(/window of huge\.log is over 262144 bytes/);
  });

  it('refuses paths that leave the sandbox, by .. or by symlink', async () => {
    await writeFile(path.join(root, 'outside.txt'), 'secret');
    await symlink(path.join(root, 'outside.txt'), path.join(sandbox, 'link.txt'));
    await symlink(root, path.join(sandbox, 'dirlink'));
    for (const p of ['../outside.txt', path.join(root, 'outside.txt')]) {
      const out = await readTool.run({ path: p }, ctx);
      expect(errorText(out.envelope), p).toMatch(/outside/);
    }
    expect(errorText((await readTool.run({ path: 'link.txt' }, ctx)).envelope)).toMatch(/symbolic link/);
    const out = await writeTool.run({ path: 'dirlink/new.txt', content: 'x' }, ctx);
    expect(errorText(out.envelope)).toMatch(/inside a symbolic link \(dirlink\)/);
    expect(await readFile(path.join(root, 'new.txt')).catch(() => null)).toBeNull();
  });

  it('reports a missing file as an error envelope with the real key, errorMessage', async () => {
    const { envelope } = await readTool.run({ path: 'nope.txt' }, ctx);
    expect(envelope).toEqual({ error: { errorMessage: expect.stringContaining('No file') as unknown } });
  });
});

describe('update_todos', () => {
  it('replaces, then merges by id', async () => {
    await updateTodosTool.run(
      {
        todos: [
          { id: '1', content: 'a', status: 'pending' },
          { id: '2', content: 'b', status: 'pending' },
        ],
      },
      ctx,
    );
    const out = await updateTodosTool.run(
      { merge: true, todos: [{ id: '1', content: 'a', status: 'completed' }] },
      ctx,
    );
    expect(out.envelope).toMatchObject({ success: { wasMerge: true, totalCount: 2 } });
    expect(ctx.todos.map((t) => t.status)).toEqual(['completed', 'pending']);
    expect(out.summary).toBe('1/2 done');
  });

  it('puts the todo times on the recorded input, not on the result (real files)', async () => {
    ctx.todos.push({ id: '1', content: 'a', status: 'pending', createdAt: 500, updatedAt: 500 });
    const input = {
      merge: true,
      todos: [
        { id: '1', content: 'a', status: 'completed' as const },
        { id: '2', content: 'b', status: 'pending' as const },
      ],
    };
    expect(updateTodosTool.recordedInput!(input, ctx)).toEqual({
      merge: true,
      todos: [
        { id: '1', content: 'a', status: 'completed', createdAt: 500, updatedAt: 1000 },
        { id: '2', content: 'b', status: 'pending', createdAt: 1000, updatedAt: 1000 },
      ],
    });
    const out = await updateTodosTool.run(input, ctx);
    expect(out.envelope).toEqual({
      success: {
        wasMerge: true,
        totalCount: 2,
        todos: [
          { id: '1', content: 'a', status: 'completed' },
          { id: '2', content: 'b', status: 'pending' },
        ],
      },
    });
    expect(ctx.todos[0]).toMatchObject({ createdAt: 500, updatedAt: 1000 });
  });
});
