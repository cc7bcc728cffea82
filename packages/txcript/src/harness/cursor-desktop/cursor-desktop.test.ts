import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CD_BAD_BUBBLE,
  CD_CWD,
  CD_DRAFT_ID,
  CD_MAIN_ID,
  CD_OLD_ID,
  CD_OLD_TITLE,
  CD_OLD_WORD,
  CD_TITLE,
  CD_IMAGE,
  CD_WORD,
  writeCursorDesktopHome,
} from '../../../test/fixtures/cursor-desktop/generate.ts';
import type { Tool } from '../../model/common.ts';
import { blockSignature, sampleConversation } from '../claude-code/conversation.fixture.ts';
import { checkHome } from '../harness-home.fixture.ts';
import { repairToolPairing } from '../orphans.ts';
import { openReadOnly } from '../sqlite-file.ts';
import {
  commonToolToDesktop,
  cursorDesktopStore,
  cursorDesktopUserDir,
  desktopCodec,
  desktopDocument,
  desktopSession,
  desktopText,
  desktopToolToCommon,
  readDesktopSession,
  resumeCommand,
  writeDesktopSession,
} from './index.ts';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'txcript-cursor-desktop-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const env = (): NodeJS.ProcessEnv => ({ CURSOR_DESKTOP_USER_DIR: path.join(dir, 'User') });

describe('cursor_desktop', () => {
  it('finds the editor User folder per platform or in CURSOR_DESKTOP_USER_DIR; opens the editor in the folder', () => {
    expect(cursorDesktopUserDir({ HOME: '/h' }, 'linux')).toBe('/h/.config/Cursor/User');
    expect(cursorDesktopUserDir({ HOME: '/h', XDG_CONFIG_HOME: '/x' }, 'linux')).toBe('/x/Cursor/User');
    expect(cursorDesktopUserDir({ HOME: '/h' }, 'darwin')).toBe('/h/Library/Application Support/Cursor/User');
    expect(cursorDesktopUserDir({ HOME: '/h', CURSOR_DESKTOP_USER_DIR: '/u' }, 'linux')).toBe('/u');
    expect(resumeCommand(CD_MAIN_ID, {})).toEqual(['cursor', '.']);
    expect(resumeCommand(CD_MAIN_ID, { TXCRIPT_CURSOR_DESKTOP_RESUME: 'open-it {id}' })).toEqual([
      'open-it',
      CD_MAIN_ID,
    ]);
  });

  it('lists sessions with bubbles (headed, or with composerData alone), not drafts, and changes nothing', async () => {
    const file = writeCursorDesktopHome(path.join(dir, 'User'));
    const before = readFileSync(file);
    const { sessions, warnings } = await cursorDesktopStore(env()).discover();
    expect(warnings).toEqual([]);
    expect(sessions.map((s) => [s.id, s.title, s.messageCount])).toEqual([
      [CD_MAIN_ID, CD_TITLE, 8], // the messages view shows, not the 9 bubbles,
      [CD_OLD_ID, CD_OLD_TITLE, 2],
    ]);
    expect(sessions.map((s) => s.id)).not.toContain(CD_DRAFT_ID);
    // No header row: the last bubble dates it.
    expect(sessions[1]!.lastActivity).toBe('2026-08-01T10:00:10.000Z');
    await cursorDesktopStore(env()).load(CD_MAIN_ID);
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it('reads bubbles in the header list order: calls made together as one message, their results after, the bad bubble reported', async () => {
    writeCursorDesktopHome(path.join(dir, 'User'));
    const { transcript: t, warnings } = await cursorDesktopStore(env()).load(CD_MAIN_ID);
    expect(t.meta).toMatchObject({ id: CD_MAIN_ID, title: CD_TITLE, cwd: CD_CWD });
    expect(t.meta.model).toBeUndefined(); // "default" is the picker's placeholder
    expect(blockSignature(t)).toEqual([
      // The image, named once though both fields name it: the database holds its file, not its data.
      `user:text:Le ${CD_WORD} ne change pas de couleur.\n\n[image: ${CD_IMAGE}]`,
      'assistant:thinking:Le CSS du sélecteur, sans doute.',
      'assistant:tool_use:tool_1_fc_1:Bash',
      'assistant:tool_use:tool_2:Read',
      'user:tool_result:tool_1_fc_1:error',
      'user:tool_result:tool_2',
      // A call at another time is the next step, not one made with those.
      'assistant:tool_use:tool_3:Raw(ripgrep_raw_search)',
      'user:tool_result:tool_3',
      'assistant:text:Corrigé : la couleur vient maintenant du thème. ✔',
      'user:text:Parfait, merci !',
      'assistant:text:Avec plaisir.',
    ]);
    expect(t.messages[1]).toMatchObject({ model: 'gpt-5', usage: { input_tokens: 120, output_tokens: 30 } });
    // The results carry their calls' time, not the time of what came after.
    expect(t.messages[2]!.timestamp).toBe('2026-08-02T10:00:04.000Z');
    expect(t.messages[1]!.content[1]).toMatchObject({
      tool: { name: 'Bash', command: 'npm test', workdir: CD_CWD, timeout_ms: 30000 },
    });
    expect(warnings).toEqual([
      expect.objectContaining({ message: expect.stringContaining(CD_BAD_BUBBLE) as string }),
    ]);
  });

  it('keeps a session value-exact through its text and through a database it writes', async () => {
    const file = writeCursorDesktopHome(path.join(dir, 'User'));
    const db = await openReadOnly(file);
    const rows = readDesktopSession(db, CD_MAIN_ID)!;
    db.close();
    expect(rows.aux).toEqual([{ key: `checkpointId:${CD_MAIN_ID}:b3`, value: '{"files":[]}' }]);
    const text = desktopText.render(desktopDocument(rows));
    const parsed = desktopText.parse(text);
    expect(parsed.warnings).toEqual([]);
    expect(desktopText.render(parsed.records)).toBe(text);
    expect(desktopSession(parsed.records, 'x').session).toEqual(rows);
    const other = path.join(dir, 'other.vscdb');
    await writeDesktopSession(other, CD_MAIN_ID, rows);
    const again = await openReadOnly(other);
    expect(readDesktopSession(again, CD_MAIN_ID)).toEqual(rows);
    again.close();
    await expect(writeDesktopSession(other, CD_MAIN_ID, rows)).rejects.toThrow(/existing/);
    const odd = '{"header": "{}",  "bubbles": []}';
    expect(desktopText.render(desktopText.parse(odd).records)).toBe(odd);
    expect(desktopText.parse('{"bubbles": 1}', 'w.json').warnings[0]!.message).toContain('needs "header"');
  });

  it('maps tools exactly, both ways', () => {
    const cases: [string, object, string][] = [
      ['run_terminal_command_v2', { command: 'ls', cwd: '/w', options: { timeout: 5 } }, 'Bash'],
      ['run_terminal_command_v2', { command: 'ls', cwd: '' }, 'Bash'],
      ['run_terminal_command_v2', { command: 'ls', cwd: '/w', isBackground: true }, 'Raw'],
      ['read_file_v2', { targetFile: '/a', offset: 2, limit: 3 }, 'Read'],
      ['Edit', { file_path: '/a', old_string: 'x', new_string: 'y' }, 'Edit'],
      ['edit_file_v2', { relativeWorkspacePath: 'a' }, 'Raw'],
    ];
    for (const [name, params, kind] of cases) {
      const tool: Tool = desktopToolToCommon(name, params as never);
      expect(tool.name, `${name} ${JSON.stringify(params)}`).toBe(kind);
      expect(commonToolToDesktop(tool)).toEqual({ name, params });
    }
  });

  it('writes a new session into the shared database in one transaction and shows it in the sidebar', async () => {
    const file = writeCursorDesktopHome(path.join(dir, 'User'));
    const input = repairToolPairing(sampleConversation());
    const saved = await cursorDesktopStore(env()).save(input);
    expect(saved.locator).toBe(file);
    const { transcript: back } = await cursorDesktopStore(env()).load(saved.id);
    expect(blockSignature(back)).toEqual(blockSignature(input));
    expect(back.meta).toMatchObject({ title: 'Fix the parser', cwd: '/home/dev/app' });
    const db = new Database(file, { readonly: true });
    const item = (key: string): unknown =>
      JSON.parse(
        (db.prepare('SELECT value FROM ItemTable WHERE key = ?').get(key) as { value: string }).value,
      );
    const membership = item('glass.localAgentProjectMembership.v1') as Record<string, string>;
    const projects = item('glass.localAgentProjects.v1') as {
      id: string;
      workspace: { uri: { fsPath: string } };
    }[];
    expect(projects.find((p) => p.id === membership[saved.id])?.workspace.uri.fsPath).toBe('/home/dev/app');
    // Everything that was there is still there.
    expect(db.prepare("SELECT value FROM ItemTable WHERE key = 'workbench.panel.height'").get()).toEqual({
      value: '300',
    });
    db.close();
    expect((await cursorDesktopStore(env()).discover()).sessions.map((s) => s.id)).toContain(CD_MAIN_ID);
    await expect(
      cursorDesktopStore(env()).save({ ...input, meta: { ...input.meta, id: saved.id } }),
    ).rejects.toThrow(/existing/);
  });

  it('codec: a conversation written and read back keeps its blocks', () => {
    const input = repairToolPairing(sampleConversation());
    const back = desktopCodec.toCommon(desktopCodec.fromCommon(input), { sessionId: 'x' });
    expect(blockSignature(back)).toEqual(blockSignature(input));
  });

  it('fixture home: lists, views, exports, converts, searches, and continues into a new state database', async () => {
    writeCursorDesktopHome(path.join(dir, 'User'));
    await fs.mkdir(path.join(dir, 'scratch'));
    await checkHome({
      harness: 'cursor_desktop',
      env: { ...env(), HOME: dir, XDG_CACHE_HOME: path.join(dir, 'cache') },
      sessions: [
        { id: CD_MAIN_ID, title: CD_TITLE, word: CD_WORD },
        { id: CD_OLD_ID, title: CD_OLD_TITLE, word: CD_OLD_WORD },
      ],
      malformed: CD_BAD_BUBBLE,
      malformedOn: 'view',
      scratch: path.join(dir, 'scratch'),
      continueInto: { outEnv: (out) => ({ CURSOR_DESKTOP_USER_DIR: out }) },
    });
  });
});
