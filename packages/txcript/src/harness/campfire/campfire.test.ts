/**
 * Campfire on its own fixture home (test/fixtures/campfire): where its
 * sessions live, its files byte for byte, its conversations read, every CLI
 * check (list, view, export, search, convert, continue), and its sessions
 * kept apart from pi's, whose layers it shares.
 */
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CF_BROKEN_LINE,
  CF_CWD,
  CF_GARBAGE,
  CF_MAIN_ID,
  CF_OLD_ID,
  CF_OLD_TITLE,
  CF_OLD_WORD,
  CF_TITLE,
  CF_WORD,
  writeCampfireHome,
} from '../../../test/fixtures/campfire/generate.ts';
import { PI_MAIN_ID, writePiHome } from '../../../test/fixtures/pi/generate.ts';
import { runCli } from '../../../test/run-cli.ts';
import { blockSignature } from '../claude-code/conversation.fixture.ts';
import { checkHome } from '../harness-home.fixture.ts';
import { piSessionsDir } from '../pi/index.ts';
import { campfire, CAMPFIRE_RESUME_ENV, resumeCommand } from './index.ts';
import { CAMPFIRE_BRAND, campfireStore } from './store.ts';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'txcript-campfire-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const sessions = (home: string) => path.join(home, '.campfire', 'agent', 'sessions');

describe('Campfire sessions folder and resume', () => {
  it('follows CAMPFIRE_CODING_AGENT_SESSION_DIR, then CAMPFIRE_CODING_AGENT_DIR, then ~/.campfire/agent', () => {
    expect(piSessionsDir(CAMPFIRE_BRAND, { HOME: '/h' })).toBe('/h/.campfire/agent/sessions');
    expect(piSessionsDir(CAMPFIRE_BRAND, { HOME: '/h', CAMPFIRE_CODING_AGENT_DIR: '~/cf' })).toBe(
      '/h/cf/sessions',
    );
    expect(
      piSessionsDir(CAMPFIRE_BRAND, {
        HOME: '/h',
        CAMPFIRE_CODING_AGENT_DIR: '/a',
        CAMPFIRE_CODING_AGENT_SESSION_DIR: '/s',
      }),
    ).toBe('/s');
    // pi's variables are pi's alone.
    expect(piSessionsDir(CAMPFIRE_BRAND, { HOME: '/h', PI_CODING_AGENT_SESSION_DIR: '/p' })).toBe(
      '/h/.campfire/agent/sessions',
    );
  });

  it('resumes with `campfire --session <id>`, or the template in TXCRIPT_CAMPFIRE_RESUME', () => {
    expect(resumeCommand(CF_MAIN_ID, {})).toEqual(['campfire', '--session', CF_MAIN_ID]);
    expect(resumeCommand('abc', { [CAMPFIRE_RESUME_ENV]: 'cf open {id}' })).toEqual(['cf', 'open', 'abc']);
  });
});

describe('Campfire files', () => {
  it('round-trip byte for byte; the line a crash cut short is kept and reported with its line', () => {
    const home = writeCampfireHome(sessions(dir));
    for (const file of [home.main, home.old, home.garbage]) {
      const text = readFileSync(file, 'utf8');
      expect(campfire.text.render(campfire.text.parse(text, file).records)).toBe(text);
    }
    const parsed = campfire.text.parse(readFileSync(home.main, 'utf8'), home.main);
    expect(parsed.warnings).toEqual([expect.objectContaining({ source: home.main, line: CF_BROKEN_LINE })]);
  });

  it('read as the conversation Campfire shows: title, folder, model, thinking, image, tools and their error', async () => {
    writeCampfireHome(sessions(dir));
    const store = campfireStore({ HOME: dir });
    const { sessions: listed, warnings } = await store.discover();
    expect(listed.map((s) => [s.id, s.harness, s.title]).sort()).toEqual(
      [
        [CF_MAIN_ID, 'campfire', CF_TITLE],
        [CF_OLD_ID, 'campfire', CF_OLD_TITLE],
      ].sort(),
    );
    expect(warnings).toEqual([
      expect.objectContaining({ source: expect.stringContaining(CF_GARBAGE) as string }),
    ]);
    const { transcript: t } = await store.load(CF_MAIN_ID);
    expect(t.meta).toMatchObject({ id: CF_MAIN_ID, cwd: CF_CWD, title: CF_TITLE, model: 'gpt-5' });
    expect(blockSignature(t)).toEqual([
      `user:text:The ${CF_WORD} is off by one — see the sketch. テントが傾く`,
      'user:image:image/png',
      'assistant:thinking:The pole count must include both ends.',
      'assistant:tool_use:call_read:Read',
      'user:tool_result:call_read',
      'assistant:tool_use:call_test:Bash',
      'user:tool_result:call_test:error',
      'user:text:Both ends count, please fix it.',
      'assistant:text:Counting both ends.',
      'assistant:tool_use:call_edit:Edit',
      'user:tool_result:call_edit',
      'assistant:text:Fixed: the tests pass. 🔥',
    ]);
  });

  it('are Campfire’s alone: pi’s sessions in the same HOME are not listed as Campfire’s, nor the reverse', async () => {
    writeCampfireHome(sessions(dir));
    writePiHome(path.join(dir, '.pi', 'agent', 'sessions'));
    const env = { HOME: dir, XDG_CACHE_HOME: path.join(dir, 'cache') };
    const ids = async (from: string) => {
      const r = await runCli(['list', '--from', from, '--json', '--no-cache'], { env });
      expect(r.code, r.stderr).toBe(0);
      return (JSON.parse(r.stdout) as Array<{ id: string; harness: string }>).map(
        (s) => `${s.harness} ${s.id}`,
      );
    };
    expect((await ids('campfire')).sort()).toEqual(
      [`campfire ${CF_MAIN_ID}`, `campfire ${CF_OLD_ID}`].sort(),
    );
    const pi = await ids('pi');
    expect(pi).toContain(`pi ${PI_MAIN_ID}`);
    expect(pi.some((s) => s.includes(CF_MAIN_ID) || s.includes(CF_OLD_ID))).toBe(false);
  });
});

describe('Campfire fixture home', () => {
  it('lists, views, exports, converts, searches and continues every session', async () => {
    const home = path.join(dir, 'home');
    writeCampfireHome(sessions(home));
    await checkHome({
      harness: 'campfire',
      env: { HOME: home, XDG_CACHE_HOME: path.join(dir, 'cache') },
      sessions: [
        { id: CF_MAIN_ID, title: CF_TITLE, word: CF_WORD },
        { id: CF_OLD_ID, title: CF_OLD_TITLE, word: CF_OLD_WORD },
      ],
      malformed: CF_GARBAGE,
      scratch: dir,
      continueInto: { outEnv: (out) => ({ CAMPFIRE_CODING_AGENT_DIR: out }) },
    });
  });
});
