import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CW_ACCOUNT,
  CW_BROKEN,
  CW_CWD,
  CW_MAIN_ID,
  CW_OLD_ID,
  CW_OLD_TITLE,
  CW_OLD_WORD,
  CW_ORG,
  CW_TITLE,
  CW_WORD,
  writeCoworkHome,
} from '../../../test/fixtures/cowork/generate.ts';
import { blockSignature, sampleConversation } from '../claude-code/conversation.fixture.ts';
import { checkHome } from '../harness-home.fixture.ts';
import { repairToolPairing } from '../orphans.ts';
import {
  cliSessionIdFor,
  coworkCodec,
  coworkRoot,
  coworkSession,
  coworkStore,
  coworkText,
  resumeCommand,
} from './index.ts';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'txcript-cowork-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const env = (): NodeJS.ProcessEnv => ({ HOME: dir });

describe('cowork', () => {
  it('finds the app’s sessions folder per platform or in COWORK_SESSIONS_DIR; opens the app', () => {
    expect(coworkRoot({ HOME: '/h' }, 'linux')).toBe('/h/.config/Claude/local-agent-mode-sessions');
    expect(coworkRoot({ HOME: '/h' }, 'darwin')).toBe(
      '/h/Library/Application Support/Claude/local-agent-mode-sessions',
    );
    expect(coworkRoot({ HOME: '/h', COWORK_SESSIONS_DIR: '/s' }, 'linux')).toBe('/s');
    expect(resumeCommand(CW_MAIN_ID, {}, 'darwin')).toEqual(['open', '-a', 'Claude']);
    expect(resumeCommand(CW_MAIN_ID, { TXCRIPT_COWORK_RESUME: 'x {id}' }, 'linux')).toEqual([
      'x',
      CW_MAIN_ID,
    ]);
  });

  it('lists the records of every account tree and its agent folder; a record that is not JSON is a warning', async () => {
    writeCoworkHome(dir);
    const { sessions, warnings } = await coworkStore(env()).discover();
    expect(sessions.map((s) => [s.id, s.title, s.messageCount]).sort()).toEqual([
      [CW_MAIN_ID, CW_TITLE, 7],
      [CW_OLD_ID, CW_OLD_TITLE, 2],
    ]);
    expect(warnings).toEqual([
      expect.objectContaining({ source: expect.stringContaining(CW_BROKEN) as string }),
    ]);
  });

  it('reads the Claude Code transcript under the record, with the record’s title, folder, model and start', async () => {
    writeCoworkHome(dir);
    const { transcript: t } = await coworkStore(env()).load(CW_MAIN_ID);
    expect(t.meta).toMatchObject({
      id: CW_MAIN_ID,
      title: CW_TITLE,
      cwd: CW_CWD,
      model: 'claude-opus-4-1',
      timestamp: '2026-08-20T13:59:58.500Z',
      cli_version: '2.1.200',
    });
    expect(blockSignature(t)).toEqual([
      `user:text:<uploaded_files>\nmars.pdf\n</uploaded_files>\nLance la ${CW_WORD} et trie-les par date.`,
      'user:image:image/png',
      'assistant:thinking:Je lis d’abord le PDF.',
      'assistant:text:Je regarde les fichiers.',
      'assistant:tool_use:toolu_ls:Bash',
      'user:tool_result:toolu_ls:error',
      'assistant:tool_use:toolu_read:Read',
      'user:tool_result:toolu_read',
      'assistant:text:Voilà : 12 factures triées. ✅',
    ]);
  });

  it('round-trips its document byte for byte; a document without a header is kept and reported', () => {
    const text = coworkText.render(coworkCodec.fromCommon(repairToolPairing(sampleConversation())));
    expect(coworkText.render(coworkText.parse(text).records)).toBe(text);
    const odd = '{"header": {"sessionId": "local_x"},  "transcript": []}';
    expect(coworkText.render(coworkText.parse(odd).records)).toBe(odd);
    expect(coworkText.parse('{"transcript": []}', 'c.json').warnings[0]!.message).toContain(
      'needs a "header"',
    );
  });

  it('writes a record the app takes (every field its validator needs) and the transcript under it, into the live account tree', async () => {
    const root = writeCoworkHome(dir);
    const input = repairToolPairing(sampleConversation());
    const saved = await coworkStore(env()).save(input);
    expect(saved.id).toMatch(/^local_[0-9a-f-]{36}$/);
    expect(saved.locator).toBe(path.join(root, CW_ORG, CW_ACCOUNT, `${saved.id}.json`));
    const record = JSON.parse(await fs.readFile(saved.locator, 'utf8')) as Record<string, unknown>;
    expect(record).toMatchObject({
      sessionId: saved.id,
      cliSessionId: cliSessionIdFor(saved.id),
      cwd: '/home/dev/app',
      title: 'Fix the parser',
      hostLoopMode: true,
      initialMessage: 'Fix the parser\nplease',
    });
    for (const k of ['processName', 'createdAt', 'lastActivityAt']) expect(record[k], k).toBeDefined();
    const storage = saved.locator.slice(0, -'.json'.length);
    expect(existsSync(path.join(storage, 'outputs'))).toBe(true);
    expect(
      existsSync(
        path.join(storage, '.claude', 'projects', '-home-dev-app', `${cliSessionIdFor(saved.id)}.jsonl`),
      ),
    ).toBe(true);
    const { transcript: back } = await coworkStore(env()).load(saved.id);
    expect(blockSignature(back)).toEqual(blockSignature(input));
    expect(coworkSession(coworkCodec.fromCommon(back))?.header.sessionId).toBe(saved.id);
  });

  it('refuses to write where the app has never run, and says how to get a session there', async () => {
    await expect(coworkStore(env()).save(sampleConversation())).rejects.toThrow(
      /has not run Cowork here.*--out/,
    );
  });

  it('fixture home: lists, views, exports, converts, searches, and continues into a new session', async () => {
    writeCoworkHome(dir);
    await fs.mkdir(path.join(dir, 'scratch'));
    await checkHome({
      harness: 'cowork',
      env: { ...env(), XDG_CACHE_HOME: path.join(dir, 'cache') },
      sessions: [
        { id: CW_MAIN_ID, title: CW_TITLE, word: CW_WORD },
        { id: CW_OLD_ID, title: CW_OLD_TITLE, word: CW_OLD_WORD },
      ],
      malformed: CW_BROKEN,
      scratch: path.join(dir, 'scratch'),
      continueInto: {
        outEnv: (out) => ({
          COWORK_SESSIONS_DIR: out,
          TXCRIPT_COWORK_ACCOUNT: '00000000-0000-0000-0000-000000000000/00000000-0000-0000-0000-000000000000',
        }),
      },
    });
  });
});
