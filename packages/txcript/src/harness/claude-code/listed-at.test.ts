/**
 * `load(id, listedAt)`: the Claude Code store reads the file a listing gave
 * (what search does for every session it reads, instead of searching every
 * project folder for the id), and ignores a locator that is not a session
 * file of that id under its root.
 */
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../test/run-cli.ts';
import type { Harness } from '../types.ts';
import { claudeCode } from './index.ts';
import { claudeCodeStore } from './store.ts';

const ID = '7e57ab1e-0000-4000-8000-00000000d0b1';
let home: string;
let older: string;
let newer: string;

function session(project: string, text: string): string {
  const dir = join(home, 'claude', project);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${ID}.jsonl`);
  const record = {
    parentUuid: null,
    isSidechain: false,
    type: 'user',
    sessionId: ID,
    cwd: '/home/dev',
    message: { role: 'user', content: text },
    uuid: '00000000-0000-4000-a000-000000000001',
    timestamp: '2026-04-02T08:00:01.000Z',
  };
  writeFileSync(file, `${JSON.stringify(record)}\n`);
  return file;
}

const text = (t: { messages: Array<{ content: Array<{ type: string; text?: string }> }> }) =>
  t.messages[0]!.content[0]!.text;

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'txcript-listed-at-'));
  older = session('-home-dev-old', 'the older file');
  newer = session('-home-dev-new', 'the newer file');
  const past = new Date(Date.now() - 3_600_000);
  utimesSync(older, past, past);
});

afterAll(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('the Claude Code store, given where a session was listed', () => {
  const store = () => claudeCodeStore({ HOME: home, TXCRIPT_CLAUDE_CODE_ROOT: join(home, 'claude') });

  it('reads that file, without looking the id up', async () => {
    const r = await store().load(ID, older);
    expect(text(r.transcript)).toBe('the older file');
    expect(r.source).toBe(older);
    expect(r.warnings).toEqual([]);
  });

  it('looks the id up when the locator is not a session file of it under the root', async () => {
    const outside = join(home, 'elsewhere', `${ID}.jsonl`);
    mkdirSync(join(home, 'elsewhere'));
    writeFileSync(outside, '{}\n');
    for (const at of [
      outside,
      join(home, 'claude', '-home-dev-old', 'other.jsonl'),
      join(home, 'claude', 'gone', `${ID}.jsonl`),
    ]) {
      const r = await store().load(ID, at);
      // The lookup: the newest file, and a warning that the id is in two folders.
      expect(r.source).toBe(newer);
      expect(r.warnings).toEqual([
        expect.objectContaining({ message: expect.stringContaining('2 project folders') as string }),
      ]);
    }
  });
});

describe('search', () => {
  it('reads each listed file of an id in two project folders, scanning and indexing', async () => {
    const env = {
      HOME: home,
      XDG_CACHE_HOME: join(home, 'cache'),
      TXCRIPT_CLAUDE_CODE_ROOT: join(home, 'claude'),
    };
    const asked: Array<string | undefined> = [];
    const recording: Harness = {
      ...claudeCode,
      store: (e) => {
        const inner = claudeCode.store!(e);
        return {
          ...inner,
          load: (id, listedAt) => {
            asked.push(listedAt);
            return inner.load(id, listedAt);
          },
        };
      },
    };
    for (const args of [['--no-index'], []]) {
      asked.length = 0;
      const r = await runCli(['search', '--json', 'older', ...args], {
        env,
        now: () => new Date(Date.now() + 10_000),
        harnesses: [recording],
      });
      expect(r.code, r.stderr).toBe(0);
      // Search lists both files; each it reads is read where it was listed (a lookup by id read the newer).
      expect(asked).toContain(older);
      expect(asked.every((at) => at === older || at === newer)).toBe(true);
      expect((JSON.parse(r.stdout) as Array<{ locator: string }>).map((h) => h.locator)).toEqual([older]);
    }
  });
});
