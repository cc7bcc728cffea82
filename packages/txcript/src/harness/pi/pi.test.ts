import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  PI_CWD,
  PI_GARBAGE,
  PI_HIDDEN,
  PI_MAIN_ID,
  PI_OLD_ID,
  PI_OLD_TITLE,
  PI_OLD_WORD,
  PI_TITLE,
  PI_WORD,
  writePiHome,
} from '../../../test/fixtures/pi/generate.ts';
import { blockSignature, sampleConversation } from '../claude-code/conversation.fixture.ts';
import { checkHome } from '../harness-home.fixture.ts';
import { repairToolPairing } from '../orphans.ts';
import {
  commonToolToPi,
  piCodec,
  piFileName,
  piProjectFolder,
  piSessionsDir,
  piStore,
  piText,
  piToolToCommon,
  resumeCommand,
} from './index.ts';
import { resumeCommand as campfireResume } from '../campfire/index.ts';
import type { Tool } from '../../model/common.ts';
import { FileExistsError } from '../../fs/atomic.ts';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'txcript-pi-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const read = (text: string) => piCodec.toCommon(piText.parse(text).records, { sessionId: 'x' });

describe('pi sessions folder', () => {
  it('follows PI_CODING_AGENT_SESSION_DIR, then PI_CODING_AGENT_DIR, then ~/.pi/agent, ~ expanded', () => {
    const brand = { harness: 'pi', configDir: '.pi', envPrefix: 'PI' };
    expect(piSessionsDir(brand, { HOME: '/h' })).toBe('/h/.pi/agent/sessions');
    expect(piSessionsDir(brand, { HOME: '/h', PI_CODING_AGENT_DIR: '~/agent' })).toBe('/h/agent/sessions');
    expect(
      piSessionsDir(brand, { HOME: '/h', PI_CODING_AGENT_DIR: '/a', PI_CODING_AGENT_SESSION_DIR: '/s' }),
    ).toBe('/s');
    const campfire = { harness: 'campfire', configDir: '.campfire', envPrefix: 'CAMPFIRE' };
    expect(piSessionsDir(campfire, { HOME: '/h', PI_CODING_AGENT_DIR: '/a' })).toBe(
      '/h/.campfire/agent/sessions',
    );
    expect(piSessionsDir(campfire, { HOME: '/h', CAMPFIRE_CODING_AGENT_DIR: '/c' })).toBe('/c/sessions');
  });

  it('names folders and files as pi does', () => {
    expect(piProjectFolder('/Users/alice/src/my:proj')).toBe('--Users-alice-src-my-proj--');
    expect(piFileName('2026-01-02T03:04:05.006Z', 'abc')).toBe('2026-01-02T03-04-05-006Z_abc.jsonl');
  });

  it('resumes with --session, or a template', () => {
    expect(resumeCommand('abc', {})).toEqual(['pi', '--session', 'abc']);
    expect(campfireResume('abc', {})).toEqual(['campfire', '--session', 'abc']);
    expect(resumeCommand('abc', { TXCRIPT_PI_RESUME: 'mypi -s {id}' })).toEqual(['mypi', '-s', 'abc']);
  });
});

describe('pi codec', () => {
  it('round-trips every file byte for byte, the malformed line kept and reported with its line', () => {
    const home = writePiHome(path.join(dir, 's'));
    for (const file of [home.main, home.old, home.garbage]) {
      const text = readFileSync(file, 'utf8');
      const parsed = piText.parse(text, file);
      expect(piText.render(parsed.records)).toBe(text);
    }
    const parsed = piText.parse(readFileSync(home.main, 'utf8'), home.main);
    expect(parsed.warnings).toEqual([expect.objectContaining({ source: home.main, line: 7 })]);
    const crlf = 'x\r\n{"type":"session","id":"s"}\r\n\r\n  \n{"type":1}';
    expect(piText.render(piText.parse(crlf).records)).toBe(crlf);
  });

  it('reads the path to the last entry: the abandoned branch is not conversation', () => {
    const home = writePiHome(path.join(dir, 's'));
    const t = read(readFileSync(home.main, 'utf8'));
    expect(t.meta).toMatchObject({
      id: PI_MAIN_ID,
      cwd: PI_CWD,
      title: PI_TITLE,
      model: 'claude-sonnet-4-5',
    });
    expect(JSON.stringify(t)).not.toContain(PI_HIDDEN);
    expect(blockSignature(t)).toEqual([
      `user:text:Le parseur casse sur « ${PI_WORD} » — voici la capture`,
      'user:image:image/png',
      'assistant:thinking:Lire le fichier du parseur d’abord.',
      'assistant:text:Je lis le parseur.',
      'assistant:tool_use:toolu_read1:Read',
      'user:tool_result:toolu_read1',
      'assistant:tool_use:toolu_bash1:Bash',
      'user:tool_result:toolu_bash1:error',
      'assistant:tool_use:toolu_edit1:Edit',
      'user:tool_result:toolu_edit1',
      expect.stringMatching(/^assistant:tool_use:[0-9a-f-]{36}:Bash$/),
      expect.stringMatching(/^user:tool_result:[0-9a-f-]{36}$/),
      'assistant:text:Corrigé : les tests passent. 🎉',
    ]);
    const thinking = t.messages[1]!.content[0]!;
    expect(thinking).toEqual({
      type: 'thinking',
      text: 'Lire le fichier du parseur d’abord.',
      signature: 'sig-pi-1',
    });
    expect(t.messages[1]).toMatchObject({
      stop_reason: 'tool_use',
      usage: { input_tokens: 120, output_tokens: 40 },
    });
    expect(t.messages.at(-1)!.stop_reason).toBe('end_turn');
    const bash = t.messages.find(
      (m) => m.content[0]?.type === 'tool_use' && m.content[0].id === 'toolu_bash1',
    )!;
    expect(bash.content[0]).toMatchObject({ tool: { name: 'Bash', command: 'npm test', timeout_ms: 60000 } });
  });

  it('reads a file with a broken tree in file order, with a warning naming it', () => {
    const text = [
      '{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}',
      '{"type":"message","id":"m1","parentId":"gone","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"one"}}',
      '{"type":"message","id":"m2","parentId":"m1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"two"}}',
    ].join('\n');
    const warnings: string[] = [];
    const t = piCodec.toCommon(piText.parse(text).records, {
      sessionId: 's1',
      source: 'f.jsonl',
      onWarning: (w) => warnings.push(`${w.source}: ${w.message}`),
    });
    expect(blockSignature(t)).toEqual(['user:text:one', 'user:text:two']);
    expect(warnings).toEqual([expect.stringContaining('f.jsonl: entry m1 names parent gone')]);
  });

  it('maps pi tools to typed tools only when they map back exactly', () => {
    const cases: [string, object, Tool['name']][] = [
      ['read', { path: '/a', offset: 2, limit: 3 }, 'Read'],
      ['write', { path: '/a', content: 'x' }, 'Write'],
      ['edit', { path: '/a', edits: [{ oldText: 'a', newText: 'b' }] }, 'Edit'],
      [
        'edit',
        {
          path: '/a',
          edits: [
            { oldText: 'a', newText: 'b' },
            { oldText: 'c', newText: 'd' },
          ],
        },
        'MultiEdit',
      ],
      ['bash', { command: 'ls' }, 'Bash'],
      ['bash', { command: 'ls', timeout: 5 }, 'Bash'],
      ['bash', { command: 'ls', cwd: '/x' }, 'Raw'],
      ['read', { path: '/a', extra: 1 }, 'Raw'],
      ['grep', { pattern: 'x' }, 'Raw'],
    ];
    for (const [name, args, kind] of cases) {
      const tool = piToolToCommon(name, args as never);
      expect(tool.name, `${name} ${JSON.stringify(args)}`).toBe(kind);
      expect(commonToolToPi(tool)).toEqual({ name, arguments: args });
    }
    // The flat edit of older pi releases is read, and written in today's form.
    expect(piToolToCommon('edit', { path: '/a', oldText: 'a', newText: 'b' })).toEqual({
      name: 'Edit',
      file_path: '/a',
      old_string: 'a',
      new_string: 'b',
    });
    // What pi cannot say keeps its canonical name, and comes back the same.
    const bash: Tool = { name: 'Bash', command: 'ls', workdir: '/w', timeout_ms: 1500 };
    const written = commonToolToPi(bash);
    expect(written.name).toBe('Bash');
    expect(piToolToCommon(written.name, written.arguments)).toEqual(bash);
  });

  it('writes a session pi can resume: header, title entry, a parent chain, tool results answering calls', () => {
    const input = repairToolPairing(sampleConversation());
    const lines = piCodec.fromCommon(input).flatMap((l) => (l.kind === 'record' ? [l.json] : []));
    expect(lines[0]).toMatchObject({ type: 'session', version: 3, cwd: '/home/dev/app', id: input.meta.id });
    expect(lines[1]).toMatchObject({ type: 'session_info', name: 'Fix the parser', parentId: null });
    for (let i = 2; i < lines.length; i++) expect(lines[i]!.parentId).toBe(lines[i - 1]!.id);
    expect(lines.every((l, i) => i === 0 || /^[0-9a-f]{8}$/.test(l.id as string))).toBe(true);
    const result = lines.find((l) => (l.message as { role?: string } | undefined)?.role === 'toolResult');
    expect(result!.message).toMatchObject({ toolCallId: 'toolu_bash', toolName: 'bash', isError: true });
    const back = read(piText.render(piCodec.fromCommon(input)));
    expect(blockSignature(back)).toEqual(blockSignature(input));
    expect(back.meta.title).toBe('Fix the parser');
  });
});

describe('pi store', () => {
  it('discovers, skips the file that is not a session with a warning, loads by id, and never overwrites', async () => {
    const sessions = path.join(dir, 'home', '.pi', 'agent', 'sessions');
    const home = writePiHome(sessions);
    const store = piStore({ HOME: path.join(dir, 'home'), TXCRIPT_NO_CACHE: '1' });
    const { sessions: found, warnings } = await store.discover();
    expect(found.map((s) => [s.id, s.title]).sort()).toEqual([
      [PI_OLD_ID, PI_OLD_TITLE],
      [PI_MAIN_ID, PI_TITLE],
    ]);
    expect(found.find((s) => s.id === PI_MAIN_ID)).toMatchObject({
      locator: home.main,
      lastActivity: '2026-03-04T10:00:13.000Z',
    });
    expect(warnings).toEqual([expect.objectContaining({ source: home.garbage })]);
    expect(warnings[0]!.message).toContain('not a pi session header');
    const loaded = await store.load(PI_MAIN_ID);
    expect(loaded.warnings).toEqual(
      expect.arrayContaining([expect.objectContaining({ source: home.main, line: 7 })]),
    );
    expect(await store.locate!(PI_MAIN_ID)).toEqual([home.main]);
    await expect(
      store.save({ ...loaded.transcript, meta: { ...loaded.transcript.meta, id: PI_OLD_ID } }),
    ).rejects.toBeInstanceOf(FileExistsError);
    const copy = await store.save({
      ...loaded.transcript,
      meta: { ...loaded.transcript.meta, id: 'new-copy' },
    });
    expect(path.dirname(copy.locator)).toBe(path.join(sessions, '--home-dev-café-app--'));
    expect(blockSignature((await store.load(copy.id)).transcript)).toEqual(blockSignature(loaded.transcript));
  });
});

describe('pi fixture home', () => {
  it('lists, views, exports, converts, searches and continues every session', async () => {
    const home = path.join(dir, 'home');
    writePiHome(path.join(home, '.pi', 'agent', 'sessions'));
    await checkHome({
      harness: 'pi',
      env: { HOME: home, XDG_CACHE_HOME: path.join(dir, 'cache') },
      sessions: [
        { id: PI_MAIN_ID, title: PI_TITLE, word: PI_WORD, hidden: PI_HIDDEN },
        { id: PI_OLD_ID, title: PI_OLD_TITLE, word: PI_OLD_WORD },
      ],
      malformed: PI_GARBAGE,
      scratch: dir,
      continueInto: { outEnv: (out) => ({ PI_CODING_AGENT_DIR: out }) },
    });
  });
});
