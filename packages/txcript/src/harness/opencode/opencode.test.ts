import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  OC_ARCHIVED_ID,
  OC_BAD_PART,
  OC_CWD,
  OC_MAIN_ID,
  OC_OLD_ID,
  OC_OLD_TITLE,
  OC_OLD_WORD,
  OC_TITLE,
  OC_WORD,
  writeOpenCodeDb,
} from '../../../test/fixtures/opencode/generate.ts';
import { runCli } from '../../../test/run-cli.ts';
import { blockSignature, sampleConversation } from '../claude-code/conversation.fixture.ts';
import { checkHome } from '../harness-home.fixture.ts';
import { repairToolPairing } from '../orphans.ts';
import type { Tool } from '../../model/common.ts';
import {
  commonToolToOpenCode,
  openCodeCodec,
  openCodeDbPath,
  openCodeSessionId,
  openCodeStore,
  openCodeText,
  openCodeToolToCommon,
  resumeCommand,
} from './index.ts';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'txcript-opencode-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('opencode', () => {
  it('finds the database under OPENCODE_DB, XDG_DATA_HOME or ~/.local/share; resumes with --session', () => {
    expect(openCodeDbPath({ HOME: '/h' })).toBe('/h/.local/share/opencode/opencode.db');
    expect(openCodeDbPath({ HOME: '/h', XDG_DATA_HOME: '/x' })).toBe('/x/opencode/opencode.db');
    expect(openCodeDbPath({ HOME: '/h', OPENCODE_DB: '/d.db' })).toBe('/d.db');
    expect(resumeCommand('ses_1', {})).toEqual(['opencode', '--session', 'ses_1']);
  });

  it('lists live sessions (not the archived one), placeholder titles replaced by the first prompt, and reads nothing it may not', async () => {
    const db = path.join(dir, 'opencode.db');
    writeOpenCodeDb(db);
    const before = readFileSync(db);
    const { sessions } = await openCodeStore({ OPENCODE_DB: db }).discover();
    expect(sessions.map((s) => [s.id, s.title, s.messageCount]).sort()).toEqual([
      [OC_OLD_ID, OC_OLD_TITLE, 2],
      [OC_MAIN_ID, OC_TITLE, 7], // the messages view shows: 3 OpenCode messages split at each run of tool calls,
    ]);
    expect(sessions.map((s) => s.id)).not.toContain(OC_ARCHIVED_ID);
    await openCodeStore({ OPENCODE_DB: db }).load(OC_MAIN_ID);
    expect(readFileSync(db).equals(before)).toBe(true);
  });

  it('assembles a session from its rows: tool parts split into call and result, the bad part row skipped and reported', async () => {
    const db = path.join(dir, 'opencode.db');
    writeOpenCodeDb(db);
    const { transcript: t, warnings } = await openCodeStore({ OPENCODE_DB: db }).load(OC_MAIN_ID);
    expect(t.meta).toMatchObject({
      id: OC_MAIN_ID,
      title: OC_TITLE,
      cwd: OC_CWD,
      cli_version: '1.14.2',
      model: 'claude-sonnet-4-5',
    });
    expect(blockSignature(t)).toEqual([
      `user:text:Ajoute un mode sombre, vérifie le ${OC_WORD}`,
      'user:image:image/png',
      'assistant:thinking:Il faut d’abord lire le thème.',
      // Tool parts one after another are calls made together: all the calls, then all the results.
      'assistant:tool_use:toolu_r1:Read',
      'assistant:tool_use:toolu_b1:Bash',
      'user:tool_result:toolu_r1',
      'user:tool_result:toolu_b1:error',
      'assistant:tool_use:toolu_e1:Edit',
      'user:tool_result:toolu_e1',
      'assistant:text:Le mode sombre est prêt. ✨',
    ]);
    expect(warnings).toEqual([
      expect.objectContaining({ source: db, message: expect.stringContaining(OC_BAD_PART) as string }),
    ]);
    expect(t.messages[2]).toMatchObject({
      stop_reason: 'tool_use',
      usage: { input_tokens: 30, cache_read_input_tokens: 900 },
    });
    expect(t.messages.at(-1)).toMatchObject({ stop_reason: 'end_turn' });
    // Value-exact: the export document of the rows reads back to the same conversation.
    const text = openCodeText.render(openCodeCodec.fromCommon(t));
    const again = openCodeCodec.toCommon(openCodeText.parse(text).records, { sessionId: 'x' });
    expect(again).toEqual({ ...t, messages: t.messages.map((m) => ({ ...m })) });
  });

  it('round-trips an export document byte for byte; a broken one is kept and reported', () => {
    const text = openCodeText.render(openCodeCodec.fromCommon(sampleConversation()));
    expect(openCodeText.render(openCodeText.parse(text).records)).toBe(text);
    const odd = '{ "info": {"id":"ses_x"},\n  "messages": [] }';
    expect(openCodeText.render(openCodeText.parse(odd).records)).toBe(odd);
    const bad = openCodeText.parse('{"info":', 'x.json');
    expect(openCodeText.render(bad.records)).toBe('{"info":');
    expect(bad.warnings[0]!.source).toBe('x.json');
  });

  it('maps tools exactly, both ways', () => {
    const cases: [string, object, Tool['name']][] = [
      ['bash', { command: 'ls', timeout: 5000, description: 'List' }, 'Bash'],
      ['read', { filePath: '/a', offset: 2, limit: 3 }, 'Read'],
      ['write', { filePath: '/a', content: 'x' }, 'Write'],
      ['edit', { filePath: '/a', oldString: 'x', newString: 'y', replaceAll: true }, 'Edit'],
      ['read', { filePath: '/a', extra: 1 }, 'Raw'],
      ['webfetch', { url: 'https://x.test' }, 'Raw'],
    ];
    for (const [name, input, kind] of cases) {
      const tool = openCodeToolToCommon(name, input as never);
      expect(tool.name, name).toBe(kind);
      expect(commonToolToOpenCode(tool)).toEqual({ name, input });
    }
  });

  it('writes documents opencode import takes: ses_ ids, the result folded into its tool part', () => {
    const input = repairToolPairing(sampleConversation());
    const doc = openCodeCodec.fromCommon(input);
    const json = doc.kind === 'object' ? doc.json : {};
    expect(json.info).toMatchObject({
      id: openCodeSessionId(input.meta.id),
      directory: '/home/dev/app',
      title: 'Fix the parser',
    });
    expect(openCodeSessionId(input.meta.id)).toMatch(/^ses_[0-9a-f]{26}$/);
    expect(JSON.stringify(json)).toContain('"status":"error","input":{"command":"npm test","timeout":60000}');
    const back = openCodeCodec.toCommon(doc, { sessionId: 'x' });
    expect(blockSignature(back)).toEqual(blockSignature(input));
  });

  it('continuing without opencode installed says how to get the session in, and writes nothing', async () => {
    const db = path.join(dir, 'opencode.db');
    writeOpenCodeDb(db);
    const r = await runCli(
      ['continue', OC_OLD_ID, '--from', 'opencode', '--with', 'opencode', '--no-resume'],
      {
        env: { OPENCODE_DB: db, HOME: dir, PATH: path.join(dir, 'no-bin') },
      },
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('opencode is not installed');
    expect(r.stderr).toContain('--out');
    const conn = new Database(db, { readonly: true });
    expect((conn.prepare('SELECT COUNT(*) AS n FROM session').get() as { n: number }).n).toBe(3);
    conn.close();
  });

  it('fixture home: lists, views, exports, converts, searches, and continues into an export document', async () => {
    const home = path.join(dir, 'home');
    writeOpenCodeDb(path.join(home, '.local', 'share', 'opencode', 'opencode.db'));
    await checkHome({
      harness: 'opencode',
      env: { HOME: home, XDG_CACHE_HOME: path.join(dir, 'cache') },
      sessions: [
        { id: OC_MAIN_ID, title: OC_TITLE, word: OC_WORD },
        { id: OC_OLD_ID, title: OC_OLD_TITLE, word: OC_OLD_WORD },
      ],
      malformed: OC_BAD_PART,
      malformedOn: 'view',
      scratch: dir,
      continueInto: {
        outEnv: (out) => ({ TXCRIPT_OPENCODE_EXPORT_DIR: out }),
        reread: async (file) =>
          openCodeCodec.toCommon(openCodeText.parse(await fs.readFile(file, 'utf8')).records, {
            sessionId: 'x',
          }),
      },
    });
  });
});
