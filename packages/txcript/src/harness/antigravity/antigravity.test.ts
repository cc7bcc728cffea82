import { existsSync, promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  AG_BROKEN_ID,
  AG_CWD,
  AG_MAIN_ID,
  AG_MODEL,
  AG_OLD_ID,
  AG_OLD_TITLE,
  AG_OLD_WORD,
  AG_TITLE,
  AG_WORD,
  pb,
  writeAntigravityHome,
} from '../../../test/fixtures/antigravity/generate.ts';
import type { Tool } from '../../model/common.ts';
import { blockSignature, sampleConversation } from '../claude-code/conversation.fixture.ts';
import { checkHome } from '../harness-home.fixture.ts';
import { repairToolPairing } from '../orphans.ts';
import { pbBytes, pbFields, pbMessage, pbString, pbUint } from '../protobuf.ts';
import {
  antigravityCodec,
  antigravityDb,
  antigravityDocument,
  antigravityRoot,
  antigravityStore,
  antigravityText,
  antigravityToolToCommon,
  commonToolToAntigravity,
  readAntigravityDb,
  resumeCommand,
  STEP,
  trajectoryRows,
  writeAntigravityConversation,
} from './index.ts';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'txcript-antigravity-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

const env = (): NodeJS.ProcessEnv => ({ HOME: dir });

describe('antigravity', () => {
  it("the fixture's protobuf writer gives the protobuf documentation's encodings", () => {
    // protobuf.dev/programming-guides/encoding: 150 in field 1, "testing" in field 2, a nested 150 in field 3.
    expect(pb([[1, 150]]).toString('hex')).toBe('089601');
    expect(pb([[2, 'testing']]).toString('hex')).toBe('120774657374696e67');
    expect(pb([[3, [[1, 150]]]]).toString('hex')).toBe('1a03089601');
  });

  it('reads ~/.gemini/antigravity-cli or TXCRIPT_ANTIGRAVITY_ROOT; resumes with agy --conversation <id>', () => {
    expect(antigravityRoot({ HOME: '/h' })).toBe('/h/.gemini/antigravity-cli');
    expect(antigravityRoot({ HOME: '/h', TXCRIPT_ANTIGRAVITY_ROOT: '/r' })).toBe('/r');
    expect(resumeCommand(AG_MAIN_ID, {})).toEqual(['agy', '--conversation', AG_MAIN_ID]);
    expect(resumeCommand(AG_MAIN_ID, { TXCRIPT_ANTIGRAVITY_RESUME: 'agy-dev -c {id}' })).toEqual([
      'agy-dev',
      '-c',
      AG_MAIN_ID,
    ]);
    expect(() => resumeCommand('../x', {})).toThrow();
  });

  it('lists each conversation with its title and message count, warns about a file that is not a database, and changes nothing', async () => {
    const root = writeAntigravityHome(dir);
    const db = path.join(root, 'conversations', `${AG_MAIN_ID}.db`);
    const before = readFileSync(db);
    const { sessions, warnings } = await antigravityStore(env()).discover();
    expect(sessions.map((s) => [s.id, s.title, s.messageCount]).sort()).toEqual([
      [AG_MAIN_ID, AG_TITLE, 11],
      [AG_OLD_ID, AG_OLD_TITLE, 2],
    ]);
    expect(sessions.find((s) => s.id === AG_MAIN_ID)?.lastActivity).toBe('2026-08-03T09:15:25.000Z');
    expect(warnings).toEqual([
      expect.objectContaining({ source: expect.stringContaining(AG_BROKEN_ID) as string }),
    ]);
    expect(warnings[0]!.message).toContain('Move the file out of the conversations folder');
    await antigravityStore(env()).load(AG_MAIN_ID);
    expect(readFileSync(db).equals(before)).toBe(true);
  });

  it('reads the steps in order: user input, planner responses, tool results by kind; bookkeeping left out', async () => {
    writeAntigravityHome(dir);
    const { transcript: t, warnings } = await antigravityStore(env()).load(AG_MAIN_ID);
    expect(warnings).toEqual([]);
    expect(t.meta).toMatchObject({
      id: AG_MAIN_ID,
      title: AG_TITLE,
      cwd: AG_CWD,
      git_branch: 'feature/contrast',
      model: AG_MODEL,
      timestamp: '2026-08-03T09:15:00.000Z',
    });
    expect(blockSignature(t)).toEqual([
      `user:text:Le contraste est trop faible : lance la ${AG_WORD}, s’il te plaît.`,
      'user:image:image/png',
      'assistant:thinking:Vérifions d’abord les couleurs du thème.',
      'assistant:text:Je regarde le fichier du thème.',
      'assistant:tool_use:call_view1:Read',
      'assistant:tool_use:call_cmd1:Bash',
      'user:tool_result:call_view1',
      'user:tool_result:call_cmd1:error',
      'assistant:tool_use:call_edit1:Edit',
      'user:tool_result:call_edit1',
      'assistant:text:Je cherche les autres couleurs.',
      'assistant:tool_use:call_grep1:Raw(grep_search)',
      'user:tool_result:call_grep1:error',
      'assistant:text:Contraste corrigé : 7.1 ✅',
      'user:text:Merci ! Et le mode clair ?',
      'assistant:text:Le mode clair passe déjà (ratio 12.6).',
    ]);
    const [, first, view, cmd, , edit, , grep] = t.messages;
    expect(first).toMatchObject({
      model: AG_MODEL,
      stop_reason: 'tool_use',
      timestamp: '2026-08-03T09:15:05.000Z',
      usage: { input_tokens: 1200, output_tokens: 340, cache_read_input_tokens: 800 },
    });
    expect(first!.content[0]).toMatchObject({ signature: 'c2lnbmF0dXJl' });
    expect(first!.content[2]).toMatchObject({
      tool: { name: 'Read', file_path: `${AG_CWD}/theme.css`, offset: 1, limit: 40 },
    });
    expect(first!.content[3]).toMatchObject({
      tool: { name: 'Bash', command: 'npm run contrast', workdir: AG_CWD },
    });
    expect(view!.content[0]).toMatchObject({ content: ':root { --fg: #777; --bg: #888; }' });
    expect(cmd!.content[0]).toMatchObject({ content: 'contrast ratio 1.2 < 4.5 ✗', is_error: true });
    expect(edit!.content[0]).toMatchObject({ content: { file: `${AG_CWD}/theme.css`, edited: true } });
    expect(grep!.content[0]).toMatchObject({ content: 'grep: the search path is outside the workspace' });
  });

  it('skips a step whose payload is cut short with a warning naming the file and the step', async () => {
    writeAntigravityHome(dir);
    const { transcript: t, warnings } = await antigravityStore(env()).load(AG_OLD_ID);
    expect(blockSignature(t)).toEqual([
      `user:text:${AG_OLD_TITLE}`,
      'assistant:text:Done: the Makefile has one target per step now.',
    ]);
    expect(t.meta).toMatchObject({ title: AG_OLD_TITLE, cwd: '/home/dev/tools' });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.source).toContain(`${AG_OLD_ID}.db`);
    expect(warnings[0]!.message).toMatch(/^step 1 \(kind 15\) skipped: its step_payload is cut short/);
  });

  it('keeps the rows value-exact through its text and through a database it writes', async () => {
    const root = writeAntigravityHome(dir);
    const rows = await readAntigravityDb(root, AG_MAIN_ID);
    expect(rows.gen_metadata).toEqual([{ idx: 0, data: Buffer.from([1, 2, 3]), size: 3 }]);
    expect(rows.transcript).toContain('USER_INPUT');
    const text = antigravityText.render(antigravityDocument(rows));
    const parsed = antigravityText.parse(text);
    expect(parsed.warnings).toEqual([]);
    expect(antigravityText.render(parsed.records)).toBe(text);
    expect(antigravityDb(parsed.records, 'x').db).toEqual(rows);
    const other = path.join(dir, 'other');
    await writeAntigravityConversation(other, AG_MAIN_ID, rows);
    expect(await readAntigravityDb(other, AG_MAIN_ID)).toEqual(rows);
    await expect(writeAntigravityConversation(other, AG_MAIN_ID, rows)).rejects.toThrow(/exist/);
  });

  it('keeps odd and broken text as it was, and says what a document lacks', () => {
    const odd = '{ "trajectory_meta": [], "steps": [ ] }';
    expect(antigravityText.render(antigravityText.parse(odd).records)).toBe(odd);
    const bad = antigravityText.parse('{"steps": [', 's.json');
    expect(antigravityText.render(bad.records)).toBe('{"steps": [');
    expect(bad.warnings[0]!.source).toBe('s.json');
    const wrong = antigravityText.parse(
      '{"trajectory_meta": [], "steps": [{"idx": 0, "step_type": 14, "status": 3, "metadata": "zz", "step_payload": ""}]}',
      'w.json',
    );
    expect(wrong.warnings[0]!.message).toContain('steps[0].metadata: expected hex bytes');
  });

  it('maps tools exactly, both ways', () => {
    const cases: [string, object, string][] = [
      ['run_command', { CommandLine: 'ls', Cwd: '/w', WaitMsBeforeAsync: 2000 }, 'Bash'],
      ['run_command', { CommandLine: 'ls', WaitMsBeforeAsync: 500 }, 'Raw'],
      ['run_command', { CommandLine: 'ls', WaitMsBeforeAsync: 2000, toolSummary: 'list' }, 'Raw'],
      ['view_file', { AbsolutePath: '/a', StartLine: 3, EndLine: 7 }, 'Read'],
      ['view_file', { AbsolutePath: '/a', EndLine: 7 }, 'Read'],
      ['view_file', { AbsolutePath: '/a', StartLine: 9, EndLine: 7 }, 'Raw'],
      ['write_to_file', { TargetFile: '/a', CodeContent: 'x', Overwrite: true }, 'Write'],
      ['write_to_file', { TargetFile: '/a', CodeContent: 'x' }, 'Raw'],
      [
        'replace_file_content',
        { TargetFile: '/a', TargetContent: 'x', ReplacementContent: 'y', AllowMultiple: true },
        'Edit',
      ],
      ['grep_search', { Query: 'x' }, 'Raw'],
    ];
    for (const [name, args, kind] of cases) {
      const tool = antigravityToolToCommon(name, args as never);
      expect(tool.name, `${name} ${JSON.stringify(args)}`).toBe(kind);
      expect(commonToolToAntigravity(tool)).toEqual({ name, args });
    }
    expect(antigravityToolToCommon('view_file', { AbsolutePath: '/a', StartLine: 3, EndLine: 7 })).toEqual({
      name: 'Read',
      file_path: '/a',
      offset: 3,
      limit: 5,
    });
    // A canonical tool with no exact native form keeps its canonical name and input, and reads back the same.
    const bash: Tool = { name: 'Bash', command: 'npm test', timeout_ms: 60000 };
    const native = commonToolToAntigravity(bash);
    expect(native).toEqual({ name: 'Bash', args: { command: 'npm test', timeout_ms: 60000 } });
    expect(antigravityToolToCommon(native.name, native.args)).toEqual(bash);
  });

  it('splits an assistant message a planner step cannot hold, without merging or reordering blocks', () => {
    const at = '2026-01-01T00:00:00.000Z';
    const t = {
      meta: { id: 's', timestamp: at },
      messages: [
        {
          role: 'user' as const,
          timestamp: at,
          content: [
            { type: 'text' as const, text: 'a' },
            { type: 'text' as const, text: 'b' },
          ],
        },
        {
          role: 'assistant' as const,
          timestamp: at,
          content: [
            { type: 'text' as const, text: 'one' },
            { type: 'text' as const, text: 'two' },
            { type: 'thinking' as const, text: 'hmm' },
          ],
        },
      ],
    };
    const back = antigravityCodec.toCommon(antigravityCodec.fromCommon(t), { sessionId: 's' });
    expect(blockSignature(back)).toEqual(blockSignature(t));
    expect(back.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'assistant', 'assistant']);
  });

  it('writes a conversation the CLI can resume: its tables, user_version 1, steps with their calls, and the brain folder', async () => {
    const input = repairToolPairing(sampleConversation());
    const saved = await antigravityStore({ TXCRIPT_ANTIGRAVITY_ROOT: dir }).save(input);
    expect(saved.locator).toBe(path.join(dir, 'conversations', `${saved.id}.db`));
    expect(
      existsSync(path.join(dir, 'brain', saved.id, '.system_generated', 'logs', 'transcript.jsonl')),
    ).toBe(true);
    const db = new Database(saved.locator, { readonly: true });
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(1);
      const steps = db
        .prepare('SELECT idx, step_type, status, metadata, step_payload FROM steps ORDER BY idx')
        .all() as {
        idx: number;
        step_type: number;
        status: number;
        metadata: Buffer;
        step_payload: Buffer;
      }[];
      expect(steps.map((s) => s.step_type)).toEqual([
        STEP.USER_INPUT,
        STEP.PLANNER_RESPONSE,
        STEP.GENERIC, // Bash with a timeout has no exact run_command form
        STEP.PLANNER_RESPONSE,
        STEP.GENERIC,
        STEP.GENERIC,
        STEP.USER_INPUT,
        STEP.PLANNER_RESPONSE,
      ]);
      for (const s of steps) {
        const payload = pbFields(s.step_payload);
        expect(pbUint(payload, 1)).toBe(s.step_type);
        expect(pbUint(payload, 4)).toBe(s.status);
        // The metadata column mirrors the payload's envelope (field 5).
        expect(Buffer.from(pbBytes(payload, 5)!).equals(s.metadata)).toBe(true);
      }
      // The tool step names its call in its metadata.
      const call = pbMessage(pbFields(steps[2]!.metadata), 4);
      expect(pbString(call, 1)).toBe('toolu_bash');
      const meta = db.prepare('SELECT cascade_id FROM trajectory_meta').get() as { cascade_id: string };
      expect(meta.cascade_id).toBe(saved.id);
    } finally {
      db.close();
    }
    const { transcript: back } = await antigravityStore({ TXCRIPT_ANTIGRAVITY_ROOT: dir }).load(saved.id);
    expect(blockSignature(back)).toEqual(blockSignature(input));
    expect(back.meta).toMatchObject({ title: 'Fix the parser', cwd: '/home/dev/app', git_branch: 'main' });
    await expect(antigravityStore({ TXCRIPT_ANTIGRAVITY_ROOT: dir }).save(input)).rejects.toThrow(/exist/);
  });

  it('writes Bash and Read calls as the CLI’s own command and view-file steps', () => {
    const at = '2026-01-01T00:00:00.000Z';
    const rows = trajectoryRows({
      meta: { id: 's', timestamp: at },
      messages: [
        {
          role: 'assistant',
          timestamp: at,
          content: [
            { type: 'tool_use', id: 'b', tool: { name: 'Bash', command: 'make', workdir: '/w' } },
            { type: 'tool_use', id: 'r', tool: { name: 'Read', file_path: '/w/a', offset: 2, limit: 3 } },
          ],
        },
        {
          role: 'user',
          timestamp: at,
          content: [
            { type: 'tool_result', tool_use_id: 'b', content: 'boom', is_error: true },
            { type: 'tool_result', tool_use_id: 'r', content: 'x\ny' },
          ],
        },
      ],
    });
    expect(rows.steps.map((s) => s.step_type)).toEqual([
      STEP.PLANNER_RESPONSE,
      STEP.RUN_COMMAND,
      STEP.VIEW_FILE,
    ]);
    const command = pbMessage(pbFields(rows.steps[1]!.step_payload), 28);
    expect([pbString(command, 23), pbUint(command, 6), pbString(pbMessage(command, 21), 1)]).toEqual([
      'make',
      1,
      'boom',
    ]);
    const view = pbMessage(pbFields(rows.steps[2]!.step_payload), 14);
    expect([pbString(view, 1), pbUint(view, 2), pbUint(view, 3), pbString(view, 4)]).toEqual([
      'file:///w/a',
      2,
      4,
      'x\ny',
    ]);
    const back = antigravityCodec.toCommon(antigravityDocument(rows), { sessionId: 's' });
    expect(blockSignature(back)).toEqual([
      'assistant:tool_use:b:Bash',
      'assistant:tool_use:r:Read',
      'user:tool_result:b:error',
      'user:tool_result:r',
    ]);
  });

  it('fixture home: lists, views, exports, converts, searches, and continues into a new data folder', async () => {
    writeAntigravityHome(dir);
    await fs.mkdir(path.join(dir, 'scratch'));
    await checkHome({
      harness: 'antigravity',
      env: { HOME: dir, XDG_CACHE_HOME: path.join(dir, 'cache') },
      sessions: [
        { id: AG_MAIN_ID, title: AG_TITLE, word: AG_WORD },
        { id: AG_OLD_ID, title: AG_OLD_TITLE, word: AG_OLD_WORD },
      ],
      malformed: AG_BROKEN_ID,
      scratch: path.join(dir, 'scratch'),
      continueInto: { outEnv: (out) => ({ TXCRIPT_ANTIGRAVITY_ROOT: out }) },
    });
  });
});
