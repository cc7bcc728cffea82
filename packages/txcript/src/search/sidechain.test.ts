/**
 * Search finds everything it lists (issue 23 item 2): a Claude Code session
 * whose `Task` sidechain is inline in the same file is listed as a parent and
 * a child sharing one source file, and every message of both is indexed, with
 * the index file and with `--no-index`. Run in-process on a real temp tree.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../test/run-cli.ts';
import type { SearchRow } from '../cli/search.ts';
import { claudeCode } from '../harness/claude-code/index.ts';

const SID = '3c2b1a09-8f7e-4d6c-9b5a-4f3e2d1c0b9a';
const CHILD = `toolu_dark@${SID}`;
const common = `"userType":"external","cwd":"/w/theme","sessionId":"${SID}","version":"2.1.3"`;
let second = 0;
const line = (
  side: boolean,
  type: 'user' | 'assistant',
  uuid: string,
  parent: string | null,
  content: unknown,
) =>
  JSON.stringify({
    parentUuid: parent,
    isSidechain: side,
    ...JSON.parse(`{${common}}`),
    type,
    message:
      type === 'user'
        ? { role: 'user', content }
        : { id: `m_${uuid}`, type: 'message', role: 'assistant', model: 'claude-opus-4-1', content },
    uuid,
    timestamp: new Date(Date.UTC(2026, 2, 1, 10, 0, second++)).toISOString(),
  });

/** Each message of the parent and of its child holds one word found nowhere else. */
const PARENT_WORDS = ['contrast', 'luminance', 'wcagratio'];
const CHILD_WORDS = ['stylesheet', 'darkpalette'];

let home: string;
beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'txcript-sidechain-search-'));
  const project = join(home, 'projects', '-w-theme');
  mkdirSync(project, { recursive: true });
  const lines = [
    line(false, 'user', 'p1', null, 'The dark mode toggle fails the contrast check'),
    line(false, 'assistant', 'p2', 'p1', [
      { type: 'text', text: 'I will measure luminance first.' },
      {
        type: 'tool_use',
        id: 'toolu_dark',
        name: 'Task',
        input: { description: 'Find the palette', prompt: 'Find the dark palette stylesheet' },
      },
    ]),
    line(true, 'user', 's1', null, 'Find the dark palette stylesheet'),
    line(true, 'assistant', 's2', 's1', [{ type: 'text', text: 'darkpalette lives in theme.css' }]),
    line(false, 'user', 'p3', 'p2', [
      { type: 'tool_result', tool_use_id: 'toolu_dark', content: 'found it' },
    ]),
    line(false, 'assistant', 'p4', 'p3', [{ type: 'text', text: 'Raised the wcagratio to 4.5.' }]),
  ];
  writeFileSync(join(project, `${SID}.jsonl`), `${lines.join('\n')}\n`);
});
afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

function txcript(args: string[]) {
  return runCli(args, {
    env: {
      HOME: home,
      XDG_CACHE_HOME: join(home, 'cache'),
      TXCRIPT_CLAUDE_CODE_ROOT: join(home, 'projects'),
      TZ: 'UTC',
    },
    // Past the racy window of the file written just now, so the index vouches for it.
    now: () => new Date(Date.now() + 10_000),
    harnesses: [claudeCode],
  });
}

async function hits(word: string, ...flags: string[]): Promise<Array<[string, number]>> {
  const r = await txcript(['search', '--json', word, ...flags]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return (JSON.parse(r.stdout) as SearchRow[]).map((h) => [h.id, h.message]);
}

describe('search of a session with an inline sidechain', () => {
  it('lists the parent and the child from one file', async () => {
    const r = await txcript(['list', '--json']);
    const ids = (JSON.parse(r.stdout) as Array<{ id: string }>).map((s) => s.id).sort();
    expect(ids).toEqual([SID, CHILD].sort());
  });

  for (const flags of [[], ['--no-index']]) {
    const how = flags.length === 0 ? 'through the index file' : 'with --no-index';
    it(`finds each message of the parent and of the child ${how}`, async () => {
      expect(await hits('contrast', ...flags)).toEqual([[SID, 1]]);
      expect(await hits('luminance', ...flags)).toEqual([[SID, 2]]);
      expect(await hits('wcagratio', ...flags)).toEqual([[SID, 4]]);
      expect(await hits('darkpalette', ...flags)).toEqual([[CHILD, 2]]);
      expect((await hits('stylesheet', ...flags)).map(([id]) => id)).toContain(CHILD);
      for (const word of [...PARENT_WORDS, ...CHILD_WORDS])
        expect(await hits(word, ...flags)).not.toEqual([]);
    });
  }

  it('keeps both on a warm search, reading nothing again', async () => {
    await hits('contrast');
    expect(await hits('contrast')).toEqual([[SID, 1]]);
    expect(await hits('darkpalette')).toEqual([[CHILD, 2]]);
  });
});
