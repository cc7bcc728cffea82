import { createHash } from 'node:crypto';
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CU_BROKEN_ID,
  CU_CWD,
  CU_MAIN_ID,
  CU_MODEL,
  CU_OLD_ID,
  CU_OLD_TITLE,
  CU_OLD_WORD,
  CU_TITLE,
  CU_WORD,
  writeCursorHome,
} from '../../../test/fixtures/cursor/generate.ts';
import type { Tool } from '../../model/common.ts';
import { blockSignature, sampleConversation } from '../claude-code/conversation.fixture.ts';
import { checkHome } from '../harness-home.fixture.ts';
import { repairToolPairing } from '../orphans.ts';
import { pbAllBytes, pbFields, pbMessage, pbString } from '../protobuf.ts';
import {
  agentRecord,
  commonToolToCursor,
  cursorChatsRoots,
  cursorCodec,
  cursorDb,
  cursorDocument,
  cursorStore,
  cursorText,
  cursorToolToCommon,
  readCursorDb,
  resumeCommand,
  workspaceHash,
} from './index.ts';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'txcript-cursor-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const sessionDir = (chats: string, cwd: string, id: string): string =>
  path.join(chats, workspaceHash(cwd), id);

describe('cursor', () => {
  it('reads ~/.cursor/chats (and the XDG config folder), CURSOR_CONFIG_DIR or TXCRIPT_CURSOR_ROOT; resumes with agent --resume=<id>', () => {
    expect(cursorChatsRoots({ HOME: '/h' })).toEqual(['/h/.cursor/chats', '/h/.config/cursor/chats']);
    expect(cursorChatsRoots({ HOME: '/h', XDG_CONFIG_HOME: '/x' })).toEqual([
      '/h/.cursor/chats',
      '/x/cursor/chats',
    ]);
    expect(cursorChatsRoots({ HOME: '/h', CURSOR_CONFIG_DIR: '/c' })).toEqual(['/c/chats']);
    expect(cursorChatsRoots({ HOME: '/h', CURSOR_CONFIG_DIR: '/c', TXCRIPT_CURSOR_ROOT: '/r' })).toEqual([
      '/r',
    ]);
    expect(workspaceHash('/home/dev/app')).toMatch(/^[0-9a-f]{32}$/);
    expect(resumeCommand(CU_MAIN_ID, {})).toEqual(['agent', `--resume=${CU_MAIN_ID}`]);
    expect(resumeCommand(CU_MAIN_ID, { TXCRIPT_CURSOR_RESUME: 'my-agent open {id}' })).toEqual([
      'my-agent',
      'open',
      CU_MAIN_ID,
    ]);
    expect(() => resumeCommand('../x', {})).toThrow();
  });

  it('lists each session with its title and message count, warns about a store that is not a database, and changes nothing', async () => {
    const chats = writeCursorHome(dir);
    const db = path.join(sessionDir(chats, CU_CWD, CU_MAIN_ID), 'store.db');
    const before = readFileSync(db);
    const { sessions, warnings } = await cursorStore({ HOME: dir }).discover();
    expect(sessions.map((s) => [s.id, s.title, s.messageCount]).sort()).toEqual([
      [CU_OLD_ID, CU_OLD_TITLE, 2],
      [CU_MAIN_ID, CU_TITLE, 9],
    ]);
    expect(sessions.find((s) => s.id === CU_MAIN_ID)?.lastActivity).toBe('2026-07-14T08:31:05.000Z');
    expect(warnings).toEqual([
      expect.objectContaining({ source: expect.stringContaining(CU_BROKEN_ID) as string }),
    ]);
    expect(warnings[0]!.message).toContain('Move the folder away');
    await cursorStore({ HOME: dir }).load(CU_MAIN_ID);
    expect(readFileSync(db).equals(before)).toBe(true);
  });

  it('reads the JSON blobs in row order: context, system and graph blobs left out, the cut blob reported', async () => {
    writeCursorHome(dir);
    const { transcript: t, warnings } = await cursorStore({ HOME: dir }).load(CU_MAIN_ID);
    expect(t.meta).toMatchObject({ id: CU_MAIN_ID, title: CU_TITLE, cwd: CU_CWD, model: CU_MODEL });
    expect(t.meta.timestamp).toBe('2026-07-14T08:30:00.000Z');
    expect(blockSignature(t)).toEqual([
      `user:text:Le contraste est trop faible : lance la ${CU_WORD}, s’il te plaît.`,
      'user:image:image/png',
      'assistant:thinking:Vérifions d’abord les couleurs du thème.',
      'assistant:text:Je regarde le fichier du thème.',
      'assistant:tool_use:call_read1:Read',
      'assistant:tool_use:call_sh1:Bash',
      'user:tool_result:call_read1',
      'user:tool_result:call_sh1:error',
      'assistant:tool_use:call_edit1:Edit',
      'user:tool_result:call_edit1',
      'assistant:text:Contraste corrigé : 7.1 ✅',
      'user:text:Merci ! Et le mode clair ?',
      'assistant:text:Le mode clair passe déjà (ratio 12.6).',
    ]);
    expect(t.messages[1]).toMatchObject({ model: CU_MODEL, timestamp: '2026-07-14T08:30:05.000Z' });
    const shell = t.messages[1]!.content.find((b) => b.type === 'tool_use' && b.id === 'call_sh1');
    expect(shell).toMatchObject({ tool: { name: 'Bash', command: 'npm run contrast', workdir: CU_CWD } });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.source).toContain(CU_MAIN_ID);
    expect(warnings[0]!.message).toMatch(/looks like a JSON message but is not one; skipped/);
  });

  it('takes the title from the agent record when there is no meta.json, hex or plain JSON', async () => {
    writeCursorHome(dir);
    const { transcript: t } = await cursorStore({ HOME: dir }).load(CU_OLD_ID);
    expect(t.meta).toMatchObject({ title: CU_OLD_TITLE, cwd: '/home/dev/tools' });
    expect(blockSignature(t)[0]).toBe(`user:text:Tidy the Makefile (${CU_OLD_WORD})`);
    const rows = await readCursorDb(sessionDir(path.join(dir, '.cursor', 'chats'), CU_CWD, CU_MAIN_ID));
    expect(agentRecord(rows)).toMatchObject({ agentId: CU_MAIN_ID, workspacePath: CU_CWD });
  });

  it('keeps the rows value-exact through its text and through a store.db it writes', async () => {
    const chats = writeCursorHome(dir);
    const rows = await readCursorDb(sessionDir(chats, CU_CWD, CU_MAIN_ID));
    const text = cursorText.render(cursorDocument(rows));
    const parsed = cursorText.parse(text);
    expect(parsed.warnings).toEqual([]);
    expect(cursorText.render(parsed.records)).toBe(text);
    expect(cursorDb(parsed.records, 'x').db).toEqual(rows);
    // Written into a new store.db and read back: the same rows, bytes and order.
    const { writeCursorSession } = await import('./store.ts');
    const other = path.join(dir, 'other');
    const written = await writeCursorSession(other, CU_CWD, CU_MAIN_ID, rows, []);
    expect(await readCursorDb(written)).toEqual(rows);
    await expect(writeCursorSession(other, CU_CWD, CU_MAIN_ID, rows, [])).rejects.toThrow(/existing/);
  });

  it('keeps odd and broken text as it was, and says what a document lacks', () => {
    const odd = '{ "blobs": [ {"id": "ab", "data": "7b7d"} ] ,"meta":[] }';
    expect(cursorText.render(cursorText.parse(odd).records)).toBe(odd);
    const bad = cursorText.parse('{"blobs": [', 's.json');
    expect(cursorText.render(bad.records)).toBe('{"blobs": [');
    expect(bad.warnings[0]!.source).toBe('s.json');
    const wrong = cursorText.parse('{"blobs": [{"id": "x", "data": "zz"}]}', 'w.json');
    expect(wrong.warnings[0]!.message).toContain('expected hex bytes');
  });

  it('reads a result without isError as an error when it says so', () => {
    const blob = (json: object): { id: string; data: Buffer } => {
      const data = Buffer.from(JSON.stringify(json));
      return { id: createHash('sha256').update(data).digest('hex'), data };
    };
    const result = (id: string, text: string): object => ({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: id, toolName: 'Shell', result: text }],
    });
    const doc = cursorDocument({
      blobs: [
        blob({ role: 'user', content: 'go' }),
        blob({
          role: 'assistant',
          content: ['a', 'b', 'c'].map((id) => ({
            type: 'tool-call',
            toolCallId: id,
            toolName: 'Shell',
            args: { command: 'x' },
          })),
        }),
        blob(result('a', 'Error: no such file')),
        blob(result('b', 'Command exited with code 2')),
        blob(result('c', 'all fine')),
      ],
      meta: [],
    });
    expect(blockSignature(cursorCodec.toCommon(doc, { sessionId: 's' })).slice(-3)).toEqual([
      'user:tool_result:a:error',
      'user:tool_result:b:error',
      'user:tool_result:c',
    ]);
  });

  it('maps tools exactly, both ways', () => {
    const cases: [string, object, Tool['name']][] = [
      ['Shell', { command: 'ls', cwd: '/w' }, 'Bash'],
      ['Read', { path: '/a', offset: 2, limit: 3 }, 'Read'],
      ['Write', { path: '/a', contents: 'x' }, 'Raw'],
      ['Write', { path: '/a', content: 'x' }, 'Write'],
      ['StrReplace', { path: '/a', old_string: 'x', new_string: 'y' }, 'Edit'],
      // Typed only when writing it back gives these very keys: camelCase ones stay as written.
      ['StrReplace', { path: '/a', oldString: 'x', newString: 'y' }, 'Raw'],
      ['Grep', { pattern: 'x' }, 'Raw'],
    ];
    for (const [name, args, kind] of cases) {
      const tool = cursorToolToCommon(name, args as never);
      expect(tool.name, `${name} ${JSON.stringify(args)}`).toBe(kind);
      expect(commonToolToCursor(tool)).toEqual({ name, args });
    }
  });

  it('writes a session the CLI can resume: message blobs, a turn graph from the root, agent record and meta.json', async () => {
    const input = repairToolPairing(sampleConversation());
    const saved = await cursorStore({ TXCRIPT_CURSOR_ROOT: dir }).save(input);
    expect(saved.locator).toBe(sessionDir(dir, '/home/dev/app', saved.id));
    const rows = await readCursorDb(saved.locator);
    for (const b of rows.blobs) expect(b.id).toBe(createHash('sha256').update(b.data).digest('hex'));
    const agent = agentRecord(rows)!;
    expect(agent).toMatchObject({
      agentId: saved.id,
      name: 'Fix the parser',
      workspacePath: '/home/dev/app',
    });
    // The root lists one turn per user prompt; each turn names its user message and steps by id.
    const byId = new Map(rows.blobs.map((b) => [b.id, b.data]));
    const root = pbFields(byId.get(agent.latestRootBlobId as string)!);
    const turns = pbAllBytes(root, 8).map((id) => pbFields(byId.get(Buffer.from(id).toString('hex'))!));
    expect(turns.length).toBeGreaterThan(0);
    for (const turn of turns) {
      const agentTurn = pbMessage(turn, 1);
      const user = byId.get(Buffer.from(pbAllBytes(agentTurn, 1)[0]!).toString('hex'));
      expect(pbString(pbFields(user!), 1)).toBeTruthy();
      for (const step of pbAllBytes(agentTurn, 2))
        expect(byId.has(Buffer.from(step).toString('hex'))).toBe(true);
    }
    const meta = JSON.parse(await fs.readFile(path.join(saved.locator, 'meta.json'), 'utf8')) as object;
    expect(meta).toMatchObject({ schemaVersion: 1, title: 'Fix the parser', hasConversation: true });
    const { transcript: back } = await cursorStore({ TXCRIPT_CURSOR_ROOT: dir }).load(saved.id);
    expect(blockSignature(back)).toEqual(blockSignature(input));
    await expect(cursorStore({ TXCRIPT_CURSOR_ROOT: dir }).save(input)).rejects.toThrow(/exist/);
  });

  it('fixture home: lists, views, exports, converts, searches, and continues into a new chat folder', async () => {
    writeCursorHome(dir);
    await fs.mkdir(path.join(dir, 'scratch'));
    await checkHome({
      harness: 'cursor',
      env: { HOME: dir, XDG_CACHE_HOME: path.join(dir, 'cache') },
      sessions: [
        { id: CU_MAIN_ID, title: CU_TITLE, word: CU_WORD },
        { id: CU_OLD_ID, title: CU_OLD_TITLE, word: CU_OLD_WORD },
      ],
      malformed: CU_BROKEN_ID,
      scratch: path.join(dir, 'scratch'),
      continueInto: { outEnv: (out) => ({ CURSOR_CONFIG_DIR: out, TXCRIPT_CURSOR_ROOT: '' }) },
    });
  });
});
