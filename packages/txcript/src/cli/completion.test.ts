/**
 * `txcript completion`: the bash script run by a real bash (its completion
 * function called as bash would, with a stand-in `txcript` on PATH for the
 * session ids), and the zsh and fish scripts checked to name every command
 * and option of the program.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../test/run-cli.ts';
import { harnessCatalog } from '../harness/catalog.ts';

let dir: string;

function txcript(args: string[]) {
  return runCli(args, { env: { HOME: dir } });
}

/** The long options of every command, from `--help` (so a new option must reach the scripts). */
async function everyOption(): Promise<Map<string, string[]>> {
  const commands = ['list', 'view', 'export', 'convert', 'continue', 'search', 'pick', 'mcp', 'completion'];
  const out = new Map<string, string[]>();
  for (const c of commands) {
    const help = (await txcript([c, '--help'])).stdout;
    out.set(c, [...new Set(help.match(/--[a-z][a-z-]+/g) ?? [])]);
  }
  return out;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'txcript-completion-'));
  // A stand-in for `txcript list`: the table, a subagent row among it.
  const fake = join(dir, 'txcript');
  writeFileSync(
    fake,
    `#!/bin/sh
printf 'ID  HARNESS  MSGS  LAST ACTIVITY  TITLE\\nabc123  claude_code  4  2026-09-01 10:00  Fix\\n└ sub-1  claude_code  2  2026-09-01 10:00  Sub\\nabd999  codex  3  2026-09-01 09:00  Other\\n'
`,
  );
  chmodSync(fake, 0o755);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('bash', () => {
  let script: string;
  beforeAll(async () => {
    const r = await txcript(['completion', 'bash']);
    expect(r.code).toBe(0);
    script = join(dir, 'txcript.bash');
    writeFileSync(script, r.stdout);
  });

  /** What bash offers for the command line `words` (the last word is the one being completed). */
  function complete(...words: string[]): string[] {
    const quoted = words.map((w) => `'${w}'`).join(' ');
    const r = spawnSync(
      'bash',
      [
        '-c',
        `source '${script}'; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _txcript; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ],
      { env: { PATH: `${dir}:${process.env.PATH ?? ''}`, HOME: dir }, encoding: 'utf8' },
    );
    expect(r.stderr).toBe('');
    return r.stdout.split('\n').filter((l) => l !== '');
  }

  it('completes commands, options, harnesses and shells', () => {
    expect(complete('txcript', 'se')).toEqual(['search']);
    expect(complete('txcript', 'c')).toEqual(['convert', 'continue', 'completion']);
    expect(complete('txcript', 'search', '--n')).toEqual(['--no-index']);
    expect(complete('txcript', 'pick', '--w')).toEqual(['--with']);
    expect(complete('txcript', 'list', '--from', 'c')).toEqual(
      harnessCatalog.map((h) => h.id).filter((id) => id.startsWith('c')),
    );
    expect(complete('txcript', 'completion', '')).toEqual(['bash', 'zsh', 'fish']);
    expect(complete('txcript', 'search', '--since', '')).toEqual([]);
  });

  it('completes session ids for view, export and continue, without subagent rows', () => {
    expect(complete('txcript', 'view', 'ab')).toEqual(['abc123', 'abd999']);
    expect(complete('txcript', 'continue', 'abc')).toEqual(['abc123']);
    expect(complete('txcript', 'export', '')).not.toContain('└');
  });

  it('offers every option of every command', async () => {
    for (const [command, options] of await everyOption()) {
      const offered = complete('txcript', command, '--');
      for (const o of options) expect(offered, `${command} ${o}`).toContain(o);
    }
  });
});

describe('zsh and fish', () => {
  it('name every command and option', async () => {
    const zsh = (await txcript(['completion', 'zsh'])).stdout;
    const fish = (await txcript(['completion', 'fish'])).stdout;
    expect(zsh.startsWith('#compdef txcript\n')).toBe(true);
    for (const [command, options] of await everyOption()) {
      expect(zsh).toContain(`    '${command}:`);
      expect(zsh).toContain(`    ${command})\n      _arguments`);
      expect(fish).toContain(`-n __fish_use_subcommand -a ${command} `);
      for (const o of options) {
        expect(zsh).toMatch(new RegExp(`'${o}\\[|,${o}\\}`));
        expect(fish).toContain(`-n '__fish_seen_subcommand_from ${command}'`);
        expect(fish).toMatch(new RegExp(`__fish_seen_subcommand_from ${command}'.* -l ${o.slice(2)} `));
      }
    }
    expect(zsh).toContain("'1:session:_txcript_sessions'");
    expect(fish).toContain(`-l from -r -a '${harnessCatalog.map((h) => h.id).join(' ')}'`);
  });

  it('refuses a shell it does not know', async () => {
    const r = await txcript(['completion', 'tcsh']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('no completion for the shell "tcsh" — use one of: bash, zsh, fish');
  });
});
