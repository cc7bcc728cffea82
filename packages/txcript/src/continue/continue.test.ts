/**
 * `continue` without a box: continueSession into the Claude Code and Codex
 * stores on temp dirs (fresh ids, no overwrite, cwd rules, --out layout),
 * the launcher against real child processes, and the command's argument
 * handling run in-process. The live grok_bot mint is tested against the real
 * box in packages/box/test/.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../cli/program.ts';
import { claudeCode } from '../harness/claude-code/index.ts';
import { codex } from '../harness/codex/index.ts';
import { simple, commonToSimple, renderSimple } from '../harness/simple/index.ts';
import type { Transcript } from '../model/common.ts';
import {
  ContinueTargetError,
  assertContinueTarget,
  continueSession,
  resumeCommandFor,
} from './continue-session.ts';
import { launch, shellLine } from './launch.ts';

const T = '2026-09-10T12:00:00Z';
let dir: string;

function conversation(cwd?: string): Transcript {
  return {
    meta: { id: 'source-1', timestamp: T, title: 'Pagination fix', ...(cwd !== undefined ? { cwd } : {}) },
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'fix it' }], timestamp: T },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'u1', tool: { name: 'Bash', command: 'npm test' } }],
        timestamp: T,
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'u1', content: '42 passed' }],
        timestamp: T,
      },
      { role: 'assistant', content: [{ type: 'text', text: 'Fixed.' }], timestamp: T },
    ],
  };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'txcript-continue-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('continueSession', () => {
  it('gives the session a fresh id every time and never overwrites one', async () => {
    const env = { HOME: dir, CLAUDE_CONFIG_DIR: join(dir, 'claude-fresh') };
    const a = await continueSession(conversation(dir), claudeCode, { env });
    const b = await continueSession(conversation(dir), claudeCode, { env });
    expect(a.id).not.toBe('source-1');
    expect(a.id).not.toBe(b.id);
    expect(a.id).toMatch(/^[0-9a-f-]{36}$/);
    const pinned = { env, newId: () => a.id };
    await expect(continueSession(conversation(dir), claudeCode, pinned)).rejects.toThrow(
      /refusing to overwrite/,
    );
  });

  it('files a session with no cwd under the current folder, and takes --metadata name as its title', async () => {
    const env = { HOME: dir, CLAUDE_CONFIG_DIR: join(dir, 'claude-cwd') };
    const here = join(dir, 'here');
    const result = await continueSession(conversation(), claudeCode, {
      env,
      cwd: here,
      metadata: { name: 'Relay' },
    });
    expect(result).toMatchObject({ kind: 'saved', cwd: here });
    if (result.kind !== 'saved') throw new Error('not saved');
    expect(result.locator).toBe(
      join(dir, 'claude-cwd', 'projects', here.replace(/[^A-Za-z0-9]/g, '-'), `${result.id}.jsonl`),
    );
    const loaded = await claudeCode.store!(env).load(result.id);
    expect(loaded.transcript.meta).toMatchObject({ cwd: here, title: 'Relay' });
  });

  it('a cwd missing here moves to the current folder only when the session will be launched', async () => {
    const gone = join(dir, 'gone-away');
    const here = join(dir, 'launch-here');
    const env = { HOME: dir, CODEX_HOME: join(dir, 'codex-cwd') };
    const launched = await continueSession(conversation(gone), codex, { env, cwd: here, willLaunch: true });
    expect(launched).toMatchObject({ cwd: here, movedFrom: gone });
    const exported = await continueSession(conversation(gone), codex, { env, cwd: here });
    expect(exported).toMatchObject({ cwd: gone });
    expect(exported).not.toHaveProperty('movedFrom');
  });

  it('--out lays the session out as the harness root, whatever the env points at', async () => {
    const env = {
      HOME: dir,
      TXCRIPT_CLAUDE_CODE_ROOT: join(dir, 'elsewhere'),
      TXCRIPT_CODEX_ROOT: join(dir, 'nope'),
    };
    const claudeOut = join(dir, 'out-claude');
    const c = await continueSession(conversation(dir), claudeCode, { env, out: claudeOut });
    expect(c).toMatchObject({ out: { dir: claudeOut, variable: 'CLAUDE_CONFIG_DIR' } });
    expect(c.kind === 'saved' && c.locator.startsWith(join(claudeOut, 'projects'))).toBe(true);
    const codexOut = join(dir, 'out-codex');
    const x = await continueSession(conversation(dir), codex, { env, out: codexOut });
    expect(x.kind === 'saved' && x.locator.startsWith(join(codexOut, 'sessions', '2026', '09', '10'))).toBe(
      true,
    );
    expect(
      (await codex.store!({ HOME: dir, CODEX_HOME: codexOut }).discover()).sessions.map((s) => s.id),
    ).toEqual([x.id]);
  });

  it('refuses Simple, and resumes claude_code / codex through their templates', () => {
    expect(() => assertContinueTarget(simple)).toThrow(ContinueTargetError);
    expect(() => assertContinueTarget(simple)).toThrow(/txcript export/);
    expect(resumeCommandFor(claudeCode, 'abc', {})).toEqual(['claude', '--resume', 'abc']);
    expect(resumeCommandFor(codex, 'abc', { TXCRIPT_CODEX_RESUME: "my codex 'open it' {id}" })).toEqual([
      'my',
      'codex',
      'open it',
      'abc',
    ]);
  });
});

describe('launch', () => {
  it('passes the exit code through, and 128 + n for a signal', async () => {
    expect(await launch([process.execPath, '-e', 'process.exit(3)'], dir)).toEqual({
      kind: 'exited',
      code: 3,
    });
    expect(await launch([process.execPath, '-e', "process.kill(process.pid, 'SIGTERM')"], dir)).toEqual({
      kind: 'exited',
      code: 143,
      signal: 'SIGTERM',
    });
  });

  it('runs in the given folder with no shell (metacharacters are plain words)', async () => {
    const out = join(dir, 'argv.json');
    const script = `require('fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify([process.cwd(), process.argv.slice(1)]))`;
    await launch([process.execPath, '-e', script, '$HOME', '; rm -rf x'], dir);
    expect(JSON.parse(await readFile(out, 'utf8'))).toEqual([dir, ['$HOME', '; rm -rf x']]);
  });

  it('reports a program that is not installed instead of throwing', async () => {
    expect(await launch(['txcript-no-such-program-here', 'x'], dir)).toEqual({
      kind: 'not-found',
      program: 'txcript-no-such-program-here',
    });
  });

  it('prints a command a shell reads back as the same words', () => {
    expect(shellLine(['claude', '--resume', 'a-1'])).toBe('claude --resume a-1');
    expect(shellLine(['my tool', "it's", ''])).toBe(`'my tool' 'it'\\''s' ''`);
  });
});

describe('txcript continue (in-process)', () => {
  let doc: string;
  beforeAll(async () => {
    doc = join(dir, 'run.json');
    await writeFile(doc, renderSimple(commonToSimple(conversation(dir))));
  });

  async function txcript(args: string[], env: Record<string, string> = {}, stdin = '') {
    let stdout = '';
    let stderr = '';
    const code = await run(args, {
      stdout: { write: (s: string) => (stdout += s) },
      stderr: { write: (s: string) => (stderr += s) },
      readStdin: () => Promise.resolve(stdin),
      env: { HOME: dir, NO_COLOR: '1', ...env },
      now: () => new Date(T),
    });
    return { code, stdout, stderr };
  }

  it('a Simple document needs --with (exit 2)', async () => {
    const r = await txcript(['continue', doc]);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toBe(
      `txcript: where should ${doc} continue? — add --with and one of: grok_bot, claude_code, codex, pi, campfire, grok, opencode, cursor, cursor_desktop, antigravity, cowork\n`,
    );
  });

  it('refuses bad --metadata and unknown harnesses before reading anything (exit 2)', async () => {
    const missing = join(dir, 'missing.json');
    expect((await txcript(['continue', missing, '--with', 'codex', '--metadata', 'oops'])).stderr).toMatch(
      /--metadata #1 is "oops"/,
    );
    const unknown = await txcript(['continue', missing, '--with', 'nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown harness "nope"/);
  });

  it('a missing file is a runtime error (exit 1) naming it', async () => {
    const r = await txcript(['continue', join(dir, 'nowhere', 'run.json'), '--with', 'codex', '--no-resume']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/could not read the session to continue: ENOENT.*nowhere\/run\.json/);
  });

  it('applies a #range to a file, and refuses one that splits a tool call from its result', async () => {
    const env = { CODEX_HOME: join(dir, 'codex-range') };
    const ok = await txcript(['continue', `${doc}#1-3`, '--with', 'codex', '--no-resume'], env);
    expect(ok.stderr).toBe('');
    expect(ok.stdout).toContain(`continued ${doc} (3 messages) into codex`);
    const bad = await txcript(['continue', `${doc}#3-4`, '--with', 'codex', '--no-resume'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/separates the tool call in #2 from its result in #3/);
  });

  it('a native file read with --from continues into its own harness by default', async () => {
    const claudeRoot = join(dir, 'claude-native');
    const first = await continueSession(conversation(dir), claudeCode, {
      env: { HOME: dir, CLAUDE_CONFIG_DIR: claudeRoot },
    });
    if (first.kind !== 'saved') throw new Error('not saved');
    const copyDir = join(dir, 'loose');
    await mkdir(copyDir, { recursive: true });
    const loose = join(copyDir, 'session.jsonl');
    await writeFile(loose, await readFile(first.locator, 'utf8'));
    const r = await txcript(['continue', loose, '--from', 'claude_code', '--no-resume'], {
      CLAUDE_CONFIG_DIR: claudeRoot,
    });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`continued ${loose} (4 messages) into claude_code as a new session`);
  });

  it('a session read from stdin is saved but not launched (stdin is used up), with the command to run', async () => {
    const record = join(dir, 'stdin-launch.json');
    const r = await txcript(
      ['continue', '-', '--with', 'codex'],
      {
        CODEX_HOME: join(dir, 'codex-stdin'),
        TXCRIPT_CODEX_RESUME: `${process.execPath} -e "require('fs').writeFileSync(process.argv[1], 'ran')" ${record}`,
      },
      await readFile(doc, 'utf8'),
    );
    expect(r.code).toBe(0);
    const id = /session: (\S+)/.exec(r.stdout)?.[1];
    expect(r.stderr).toBe(
      `txcript: not launching (the session came from stdin); to open it, run: cd ${dir} && ${process.execPath} -e ` +
        `'require('\\''fs'\\'').writeFileSync(process.argv[1], '\\''ran'\\'')' ${record} ${id}\n`,
    );
    await expect(readFile(record, 'utf8')).rejects.toThrow(/ENOENT/);
  });
});
