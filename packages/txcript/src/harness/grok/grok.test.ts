import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  GROK_CWD,
  GROK_MAIN_ID,
  GROK_NOT_SESSION,
  GROK_OLD_ID,
  GROK_OLD_TITLE,
  GROK_OLD_WORD,
  GROK_TITLE,
  GROK_WORD,
  writeGrokHome,
} from '../../../test/fixtures/grok/generate.ts';
import { blockSignature, sampleConversation } from '../claude-code/conversation.fixture.ts';
import { checkHome } from '../harness-home.fixture.ts';
import { renderJsonDocument } from '../json-document.ts';
import { renderJsonl } from '../jsonl.ts';
import { repairToolPairing } from '../orphans.ts';
import type { Tool } from '../../model/common.ts';
import {
  commonToolToGrok,
  grokSessionsDir,
  grokStore,
  grokToolToCommon,
  grokWorkspaceFolder,
  parseChatHistory,
  parseSummary,
  parseUpdates,
  resumeCommand,
} from './index.ts';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'txcript-grok-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('grok (the Grok CLI)', () => {
  it('finds sessions under GROK_HOME or ~/.grok, workspaces percent-encoded by byte; resumes with --resume', () => {
    expect(grokSessionsDir({ HOME: '/h' })).toBe('/h/.grok/sessions');
    expect(grokSessionsDir({ HOME: '/h', GROK_HOME: '/g' })).toBe('/g/sessions');
    expect(grokWorkspaceFolder('/home/dev/my app~é')).toBe('%2Fhome%2Fdev%2Fmy%20app~%C3%A9');
    expect(resumeCommand('abc', {})).toEqual(['grok', '--resume', 'abc']);
  });

  it('round-trips every file byte for byte; the malformed line is kept and reported', () => {
    const { main } = writeGrokHome(path.join(dir, 's'));
    const chatText = readFileSync(path.join(main, 'chat_history.jsonl'), 'utf8');
    const chat = parseChatHistory(chatText, 'chat');
    expect(renderJsonl(chat.lines)).toBe(chatText);
    expect(chat.warnings).toEqual([expect.objectContaining({ source: 'chat', line: 8 })]);
    const updatesText = readFileSync(path.join(main, 'updates.jsonl'), 'utf8');
    expect(renderJsonl(parseUpdates(updatesText, 'u').lines)).toBe(updatesText);
    const summaryText = readFileSync(path.join(main, 'summary.json'), 'utf8');
    expect(renderJsonDocument(parseSummary(summaryText, 's').doc)).toBe(summaryText);
  });

  it('reads the model log with what the display log adds: times, the image, the failure, the stop', async () => {
    writeGrokHome(path.join(dir, 'sessions'));
    const { transcript: t, warnings } = await grokStore({ GROK_HOME: dir }).load(GROK_MAIN_ID);
    expect(warnings).toEqual([expect.objectContaining({ line: 8 })]);
    expect(t.meta).toMatchObject({
      id: GROK_MAIN_ID,
      title: GROK_TITLE,
      cwd: GROK_CWD,
      git_branch: 'main',
      model: 'grok-code-fast-1',
    });
    expect(blockSignature(t)).toEqual([
      `user:text:La façade tremble près du ${GROK_WORD}, voir la photo`,
      'user:image:image/png',
      'assistant:thinking:Regarder le CSS de la façade.',
      'assistant:text:Je lance les tests.',
      'assistant:tool_use:call_s1:Bash',
      'assistant:tool_use:call_r1:Read',
      'user:tool_result:call_s1:error',
      'user:tool_result:call_r1',
      'assistant:tool_use:call_e1:Edit',
      'user:tool_result:call_e1',
      'assistant:text:La façade ne tremble plus. ✔',
    ]);
    expect(t.messages.map((m) => m.timestamp.slice(17, 19))).toEqual([
      '01',
      '02',
      '03',
      '04',
      '05',
      '06',
      '07',
      '08',
    ]);
    expect(t.messages[2]!.content[1]).toMatchObject({
      tool: { name: 'Bash', command: 'npm test', timeout_ms: 120000 },
    });
    expect(t.messages.at(-1)!.stop_reason).toBe('end_turn');
    expect(t.messages[1]!.content[0]).toMatchObject({ encrypted: 'enc-abc' });
  });

  it('maps Cursor-named tools exactly, both ways', () => {
    const cases: [string, object, Tool['name']][] = [
      ['Shell', { command: 'ls', block_until_ms: 5000 }, 'Bash'],
      ['StrReplace', { path: '/a', old_string: 'x', new_string: 'y' }, 'Edit'],
      ['Read', { path: '/a', offset: 1, limit: 2 }, 'Read'],
      ['Write', { path: '/a', contents: 'x' }, 'Write'],
      ['Shell', { command: 'ls', block_until_ms: 1.5 }, 'Raw'],
      ['Glob', { glob_pattern: '*.ts' }, 'Raw'],
    ];
    for (const [name, args, kind] of cases) {
      const tool = grokToolToCommon(name, args as never);
      expect(tool.name, name).toBe(kind);
      expect(commonToolToGrok(tool)).toEqual({ name, args });
    }
  });

  it('saves a whole session folder (both logs and the summary) that reads back the same, never over one', async () => {
    const store = grokStore({ GROK_HOME: dir });
    const input = repairToolPairing(sampleConversation());
    const saved = await store.save(input);
    expect(saved.locator).toBe(path.join(dir, 'sessions', grokWorkspaceFolder('/home/dev/app'), saved.id));
    expect((await fs.readdir(saved.locator)).sort()).toEqual([
      'chat_history.jsonl',
      'summary.json',
      'updates.jsonl',
    ]);
    const back = (await store.load(saved.id)).transcript;
    expect(blockSignature(back)).toEqual(blockSignature(input));
    expect(back.meta).toMatchObject({ title: 'Fix the parser', cwd: '/home/dev/app', git_branch: 'main' });
    await expect(store.save(input)).rejects.toThrow(/refusing to overwrite/);
  });

  it('fixture home: lists (skipping what is not a session), views, exports, searches and continues', async () => {
    const home = path.join(dir, 'home');
    writeGrokHome(path.join(home, '.grok', 'sessions'));
    await checkHome({
      harness: 'grok',
      env: { HOME: home, XDG_CACHE_HOME: path.join(dir, 'cache') },
      sessions: [
        { id: GROK_MAIN_ID, title: GROK_TITLE, word: GROK_WORD },
        { id: GROK_OLD_ID, title: GROK_OLD_TITLE, word: GROK_OLD_WORD },
      ],
      malformed: GROK_NOT_SESSION,
      scratch: dir,
      convertKeepsAll: false,
      continueInto: { outEnv: (out) => ({ GROK_HOME: out }) },
    });
  });
});
