import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  HE_ARCHIVED_ID,
  HE_BAD_ROW,
  HE_CWD,
  HE_MAIN_ID,
  HE_OLD_ID,
  HE_OLD_PROMPT,
  HE_OLD_WORD,
  HE_REWOUND,
  HE_TITLE,
  HE_WORD,
  writeHermesDb,
} from '../../../test/fixtures/hermes/generate.ts';
import { runCli } from '../../../test/run-cli.ts';
import type { Tool } from '../../model/common.ts';
import { blockSignature, sampleConversation } from '../claude-code/conversation.fixture.ts';
import { checkHome } from '../harness-home.fixture.ts';
import { repairToolPairing } from '../orphans.ts';
import { openReadOnly } from '../sqlite-file.ts';
import {
  commonToolToHermes,
  hermesCodec,
  hermesDbPath,
  hermesStore,
  hermesText,
  hermesToolToCommon,
  readHermesExport,
} from './index.ts';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'txcript-hermes-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const home = (): NodeJS.ProcessEnv => ({ HOME: dir });
const db = (): string => path.join(dir, '.hermes', 'state.db');

describe('hermes', () => {
  it('finds state.db under HERMES_HOME or ~/.hermes', () => {
    expect(hermesDbPath({ HOME: '/h' })).toBe('/h/.hermes/state.db');
    expect(hermesDbPath({ HOME: '/h', HERMES_HOME: '/x' })).toBe('/x/state.db');
  });

  it('lists live sessions (not the archived one) with titles, counting conversation rows, and changes nothing', async () => {
    writeHermesDb(db());
    const before = readFileSync(db());
    const { sessions, warnings } = await hermesStore(home()).discover();
    expect(warnings).toEqual([]);
    expect(sessions.map((s) => [s.id, s.title, s.messageCount])).toEqual([
      [HE_MAIN_ID, HE_TITLE, 9],
      [HE_OLD_ID, HE_OLD_PROMPT, 2],
    ]);
    expect(sessions.map((s) => s.id)).not.toContain(HE_ARCHIVED_ID);
    expect(sessions[0]!.lastActivity).toBe('2026-08-03T09:15:10.000Z');
    await hermesStore(home()).load(HE_MAIN_ID);
    expect(readFileSync(db()).equals(before)).toBe(true);
  });

  it('reads the active rows: structured prompt with its image, reasoning, calls, errors from exit code and denial; the cut row reported', async () => {
    writeHermesDb(db());
    const { transcript: t, warnings } = await hermesStore(home()).load(HE_MAIN_ID);
    expect(t.meta).toMatchObject({
      id: HE_MAIN_ID,
      title: HE_TITLE,
      cwd: HE_CWD,
      git_branch: 'main',
      model: 'hermes-4-405b',
      timestamp: '2026-08-03T09:15:00.000Z',
    });
    expect(blockSignature(t)).toEqual([
      `user:text:Bitte den ${HE_WORD} übersetzen.`,
      'user:image:image/png',
      'assistant:thinking:Erst die Quelle lesen, dann die Tests.',
      'assistant:text:Ich sehe mir zuerst die Dateien an.',
      'assistant:tool_use:call_read:Read',
      'assistant:tool_use:call_test:Bash',
      'user:tool_result:call_read',
      'user:tool_result:call_test:error',
      'assistant:text:Ich korrigiere die Datei.',
      'assistant:tool_use:call_patch:Edit',
      'assistant:tool_use:call_rm:Bash',
      'user:tool_result:call_patch',
      'user:tool_result:call_rm:error',
      'assistant:text:Fertig – alle Meldungen übersetzt. ✅',
    ]);
    expect(t.messages[1]!.content[3]).toMatchObject({
      tool: { name: 'Bash', command: 'npm test', timeout_ms: 60000 },
    });
    expect(t.messages[1]!.stop_reason).toBe('tool_use');
    expect(t.messages.at(-1)!.stop_reason).toBe('end_turn');
    expect(JSON.stringify(t)).not.toContain(HE_REWOUND);
    expect(warnings).toEqual([
      expect.objectContaining({
        source: db(),
        message: expect.stringContaining(`message row ${HE_BAD_ROW}`) as string,
      }),
    ]);
  });

  it('round-trips an export document byte for byte; reads back what it writes', async () => {
    writeHermesDb(db());
    const conn = await openReadOnly(db());
    const body = readHermesExport(conn, HE_MAIN_ID, db(), []);
    conn.close();
    const text = `${JSON.stringify(body, null, 2)}\n`;
    expect(hermesText.render(hermesText.parse(text).records)).toBe(text);
    // An export that carries rewound rows (active 0) does not show them either.
    const rewound = hermesText.parse(
      JSON.stringify({
        id: 'r',
        messages: [
          { role: 'user', content: 'kept' },
          { role: 'user', content: HE_REWOUND, active: 0 },
        ],
      }),
    );
    expect(blockSignature(hermesCodec.toCommon(rewound.records, { sessionId: 'r' }))).toEqual([
      'user:text:kept',
    ]);
    const odd = '{"id": "x",\n "messages": []}';
    expect(hermesText.render(hermesText.parse(odd).records)).toBe(odd);
    expect(hermesText.parse('{"id": 1}', 'h.json').warnings[0]!.message).toContain(
      'not a Hermes session export',
    );
    const input = repairToolPairing(sampleConversation());
    const native = hermesText.render(hermesCodec.fromCommon(input));
    const back = hermesCodec.toCommon(hermesText.parse(native).records, { sessionId: 'x' });
    expect(blockSignature(back)).toEqual(blockSignature(input));
    expect(back.meta).toMatchObject({ title: 'Fix the parser', cwd: '/home/dev/app' });
  });

  it('maps tools exactly, both ways', () => {
    const cases: [string, object, Tool['name']][] = [
      ['read_file', { path: '/a', offset: 2, limit: 3 }, 'Read'],
      ['write_file', { path: '/a', content: 'x' }, 'Write'],
      ['patch', { mode: 'replace', path: '/a', old_string: 'x', new_string: 'y' }, 'Edit'],
      ['patch', { mode: 'patch', patch: '*** Begin Patch' }, 'Raw'],
      ['terminal', { command: 'ls', background: true, timeout: 5 }, 'Bash'],
      ['terminal', { command: 'ls', timeout: 1.5 }, 'Raw'],
      ['web_search', { query: 'x' }, 'Raw'],
    ];
    for (const [name, args, kind] of cases) {
      const tool = hermesToolToCommon(name, args as never);
      expect(tool.name, `${name} ${JSON.stringify(args)}`).toBe(kind);
      expect(commonToolToHermes(tool)).toEqual({ name, args });
    }
  });

  it('is not a continue target: Hermes has no import, and its database is the agent’s', async () => {
    writeHermesDb(db());
    const r = await runCli(['continue', HE_OLD_ID, '--from', 'hermes', '--with', 'hermes', '--no-resume'], {
      env: home(),
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('continuing into hermes is not supported');
  });

  it('fixture home: lists, views, exports, converts and searches', async () => {
    writeHermesDb(db());
    await fs.mkdir(path.join(dir, 'scratch'));
    await checkHome({
      harness: 'hermes',
      env: { ...home(), XDG_CACHE_HOME: path.join(dir, 'cache') },
      sessions: [
        { id: HE_MAIN_ID, title: HE_TITLE, word: HE_WORD, hidden: HE_REWOUND },
        { id: HE_OLD_ID, title: HE_OLD_PROMPT, word: HE_OLD_WORD },
      ],
      malformed: `message row ${HE_BAD_ROW}`,
      malformedOn: 'view',
      scratch: path.join(dir, 'scratch'),
    });
  });
});
