/**
 * `txcript pick` in a real pseudo-terminal (node-pty): the list of recent
 * sessions, typing to search, the preview of the hit under the cursor, arrows,
 * Enter continuing the pick in its harness (its resume command replaced by
 * `echo`), and Esc cancelling.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import * as pty from 'node-pty';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeCode } from '../harness/claude-code/index.ts';
import { codex } from '../harness/codex/index.ts';
import { runProcess } from '../../test/run-process.ts';
import {
  type SearchTree,
  codingSession,
  saveSession,
  searchTree,
} from '../../test/fixtures/search/generate.ts';
import { EXIT_CANCELLED } from './pick.ts';

const bin = fileURLToPath(new URL('../../bin/txcript.mjs', import.meta.url));
const CLAUDE = '55555555-5555-4555-8555-555555555555';
const CODEX = '66666666-6666-4666-8666-666666666666';
let tree: SearchTree;

beforeAll(async () => {
  tree = searchTree(await mkdtemp(join(tmpdir(), 'txcript-pick-')));
  await saveSession(
    tree,
    claudeCode,
    codingSession(CLAUDE, {
      start: '2026-09-01T10:00:00Z',
      cwd: tree.home,
      prompt: 'the invoice total drifts by a cent',
      answer: 'Rounding each invoice line was the cause.',
    }),
  );
  await saveSession(
    tree,
    codex,
    codingSession(CODEX, {
      start: '2026-09-02T10:00:00Z',
      cwd: tree.home,
      prompt: 'tidy the release notes',
      answer: 'Done.',
    }),
  );
});

afterAll(async () => {
  await rm(tree.home, { recursive: true, force: true });
});

interface Terminal {
  /** Everything shown so far, without escape codes. */
  screen(): string;
  type(keys: string): void;
  waitFor(text: string | RegExp, after?: number): Promise<number>;
  exited: Promise<number>;
}

function startPick(args: string[] = []): Terminal {
  let out = '';
  const term = pty.spawn(process.execPath, [bin, 'pick', ...args], {
    name: 'xterm-256color',
    cols: 160,
    rows: 40,
    cwd: tree.home,
    env: {
      PATH: process.env.PATH ?? '',
      ...tree.env,
      TERM: 'xterm-256color',
      TXCRIPT_CLAUDE_CODE_RESUME: 'echo resumed-claude {id}',
      TXCRIPT_CODEX_RESUME: 'echo resumed-codex {id}',
    },
  });
  term.onData((d) => (out += d));
  const exited = new Promise<number>((done) => term.onExit(({ exitCode }) => done(exitCode)));
  const screen = () => stripVTControlCharacters(out);
  return {
    screen,
    type: (keys) => term.write(keys),
    exited,
    waitFor: async (text, after = 0) => {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const shown = screen().slice(after);
        const at = typeof text === 'string' ? shown.indexOf(text) : shown.search(text);
        if (at >= 0) return after + at;
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for ${String(text)}; screen:\n${screen()}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

const DOWN = '\x1b[B';
const ENTER = '\r';
const ESC = '\x1b';

describe('txcript pick', () => {
  it('lists recent sessions, filters as you type, previews the hit, and Enter continues it', async () => {
    const t = startPick();
    await t.waitFor('Search sessions:');
    // Before typing: the most recent sessions.
    await t.waitFor(`${CODEX}  codex`);
    await t.waitFor(`${CLAUDE}  claude_code`);
    const typedAt = t.screen().length;
    t.type('invoice');
    await t.waitFor(`${CLAUDE}#1  claude_code  user text`, typedAt);
    // The preview under the list: the snippet of the hit under the cursor.
    await t.waitFor('user text in', typedAt);
    await t.waitFor('the invoice total drifts by a cent', typedAt);
    const movedAt = t.screen().length;
    t.type(DOWN);
    await t.waitFor(`assistant text in ${CLAUDE}#2`, movedAt);
    t.type(ENTER);
    const resumed = await t.waitFor(/resumed-claude [0-9a-f-]{36}/);
    expect(await t.exited).toBe(0);
    // A new Claude Code session was written for the continuation, beside the picked one.
    const newId = /resumed-claude ([0-9a-f-]{36})/.exec(t.screen().slice(resumed))![1]!;
    expect(newId).not.toBe(CLAUDE);
    const projects = join(tree.env.TXCRIPT_CLAUDE_CODE_ROOT!);
    const files = (
      await Promise.all((await readdir(projects)).map((p) => readdir(join(projects, p))))
    ).flat();
    expect(files).toContain(`${newId}.jsonl`);
  });

  it('continues with --with in another harness', async () => {
    const t = startPick(['--with', 'codex']);
    await t.waitFor(`${CLAUDE}  claude_code`);
    t.type('cent');
    await t.waitFor(`${CLAUDE}#1`);
    t.type(ENTER);
    await t.waitFor(/resumed-codex [0-9a-f-]{36}/);
    expect(await t.exited).toBe(0);
  });

  it('Esc cancels without continuing anything', async () => {
    const t = startPick();
    await t.waitFor(`${CLAUDE}  claude_code`);
    t.type('release');
    await t.waitFor(`${CODEX}#1`);
    t.type(ESC);
    expect(await t.exited).toBe(EXIT_CANCELLED);
    expect(t.screen()).toContain('txcript: pick cancelled');
    expect(t.screen()).not.toContain('resumed-');
  });

  it('an unfinished query says why and Enter picks nothing, until it is mended', async () => {
    const t = startPick();
    await t.waitFor(`${CLAUDE}  claude_code`);
    const typedAt = t.screen().length;
    t.type('"invoice tot');
    await t.waitFor(/has an unclosed "/, typedAt);
    const enteredAt = t.screen().length;
    t.type(ENTER);
    // Enter with nothing to pick keeps the prompt: mending the query finds the hit, and Esc leaves.
    t.type('al"');
    await t.waitFor(`${CLAUDE}#1  claude_code  user text`, enteredAt);
    t.type(ESC);
    expect(await t.exited).toBe(EXIT_CANCELLED);
    expect(t.screen()).not.toContain('resumed-');
  });

  it('refuses to run without a terminal', async () => {
    const r = await runProcess(process.execPath, [bin, 'pick'], {
      env: { PATH: process.env.PATH ?? '', ...tree.env },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('pick needs a terminal');
  });
});
