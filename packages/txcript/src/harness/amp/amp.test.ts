import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  AMP_BROKEN,
  AMP_CWD,
  AMP_MAIN_ID,
  AMP_OLD_ID,
  AMP_OLD_TITLE,
  AMP_OLD_WORD,
  AMP_TITLE,
  AMP_WORD,
  writeAmpHome,
} from '../../../test/fixtures/amp/generate.ts';
import { blockSignature, sampleConversation } from '../claude-code/conversation.fixture.ts';
import { checkHome } from '../harness-home.fixture.ts';
import { runCli } from '../../../test/run-cli.ts';
import {
  ampCodec,
  ampStore,
  ampText,
  ampThreadId,
  ampThreadsDir,
  ampToolToCommon,
  commonToolToAmp,
} from './index.ts';
import type { Tool } from '../../model/common.ts';

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'txcript-amp-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('amp', () => {
  it('finds threads under AMP_THREADS_DIR, XDG_DATA_HOME or ~/.local/share', () => {
    expect(ampThreadsDir({ HOME: '/h' })).toBe('/h/.local/share/amp/threads');
    expect(ampThreadsDir({ HOME: '/h', XDG_DATA_HOME: '/x' })).toBe('/x/amp/threads');
    expect(ampThreadsDir({ HOME: '/h', XDG_DATA_HOME: '/x', AMP_THREADS_DIR: '/t' })).toBe('/t');
  });

  it('round-trips thread files byte for byte, the broken one kept and reported with its place', () => {
    const home = writeAmpHome(path.join(dir, 't'));
    for (const f of [home.main, home.old, home.broken]) {
      const text = readFileSync(f, 'utf8');
      expect(ampText.render(ampText.parse(text, f).records)).toBe(text);
    }
    const broken = ampText.parse(readFileSync(home.broken, 'utf8'), home.broken);
    expect(broken.warnings.map((w) => [w.source, w.message.slice(0, 26)])).toEqual([
      [home.broken, 'not JSON at line 3, column'],
    ]);
  });

  it('reads a thread: workspace, branch, both tool eras, errors, cancellations, usage and times', () => {
    const home = writeAmpHome(path.join(dir, 't'));
    const t = ampCodec.toCommon(ampText.parse(readFileSync(home.main, 'utf8')).records, { sessionId: 'x' });
    expect(t.meta).toMatchObject({
      id: AMP_MAIN_ID,
      title: AMP_TITLE,
      cwd: AMP_CWD,
      git_branch: 'fix-loop',
      cli_version: '0.0.1768178000-gaaaaaa',
      model: 'claude-opus-4-5-20251101',
    });
    expect(blockSignature(t)).toEqual([
      `user:text:La boucle saute le dernier élément à ${AMP_WORD} 12`,
      'user:image:image/png',
      'assistant:thinking:Probablement un < au lieu de <=.',
      'assistant:tool_use:toolu_01:Read',
      'user:tool_result:toolu_01',
      'assistant:tool_use:toolu_02:Bash',
      'assistant:tool_use:toolu_03:Raw(finder)',
      'user:tool_result:toolu_02:error',
      'user:tool_result:toolu_03:error',
      'assistant:tool_use:toolu_04:Edit',
      'user:tool_result:toolu_04',
      'assistant:text:Corrigé, la borne inclut maintenant le dernier élément. ✅',
    ]);
    expect(t.messages[1]!.content[1]).toMatchObject({ tool: { name: 'Read', offset: 1, limit: 40 } });
    expect(t.messages[4]!.content[1]).toMatchObject({ content: 'user interrupted' });
    expect(t.messages[6]!.content[0]).toMatchObject({ content: { diff: '-0..n-1\n+0..n' } });
    // The untimed carrier and the assistant without a usage time borrow the last time seen.
    expect(t.messages.map((m) => m.timestamp.slice(17, 19))).toEqual([
      '01',
      '02',
      '02',
      '04',
      '04',
      '04',
      '04',
      '09',
    ]);
    expect(t.messages[1]).toMatchObject({
      stop_reason: 'tool_use',
      usage: { input_tokens: 12, cache_read_input_tokens: 3400 },
    });
  });

  it('maps tools only when they map back exactly, old names read, new ones written', () => {
    const cases: [string, object, Tool['name'], string?][] = [
      ['shell_command', { command: 'ls', workdir: '/w' }, 'Bash'],
      ['Bash', { cmd: 'ls', cwd: '/w' }, 'Bash', 'shell_command'],
      ['Read', { path: '/a', read_range: [3, 5] }, 'Read'],
      ['edit_file', { path: '/a', old_str: 'x', new_str: 'y' }, 'Edit'],
      ['create_file', { path: '/a', content: 'x' }, 'Write'],
      ['Read', { path: '/a', read_range: [5, 3] }, 'Raw'],
      ['edit_file', { path: '/a', old_str: 'x', new_str: 'y', all: true }, 'Raw'],
      ['painter', { prompt: 'x' }, 'Raw'],
    ];
    for (const [name, input, kind, writtenAs] of cases) {
      const tool = ampToolToCommon(name, input as never);
      expect(tool.name, name).toBe(kind);
      const back = commonToolToAmp(tool);
      expect(back.name).toBe(writtenAs ?? name);
      if (writtenAs === undefined) expect(back.input).toEqual(input);
    }
    const claude: Tool = { name: 'Bash', command: 'ls', timeout_ms: 5 };
    const written = commonToolToAmp(claude);
    expect(ampToolToCommon(written.name, written.input)).toEqual(claude);
  });

  it('writes a thread Amp would read: a T- id, file URI, sentAt on prompts only', () => {
    const input = sampleConversation();
    const doc = ampCodec.fromCommon(input);
    expect(doc.kind === 'object' && doc.json).toMatchObject({
      id: ampThreadId(input.meta.id),
      title: 'Fix the parser',
    });
    expect(ampThreadId('T-0199aaaa-bbbb')).toBe('T-0199aaaa-bbbb');
    expect(ampThreadId('../x')).toMatch(/^T-[0-9a-f-]{36}$/);
    const back = ampCodec.toCommon(ampText.parse(ampText.render(doc)).records, { sessionId: 'x' });
    expect(blockSignature(back)).toEqual(blockSignature(input));
    expect(back.meta).toMatchObject({ cwd: '/home/dev/app', git_branch: 'main', title: 'Fix the parser' });
  });

  it('lists a folder with a broken file, and refuses to continue into Amp (its threads are on its server)', async () => {
    const home = writeAmpHome(path.join(dir, 't'));
    const { sessions, warnings } = await ampStore({
      AMP_THREADS_DIR: path.join(dir, 't'),
      TXCRIPT_NO_CACHE: '1',
    }).discover();
    expect(sessions.map((s) => s.id).sort()).toEqual([AMP_OLD_ID, AMP_MAIN_ID].sort());
    expect(warnings).toEqual([expect.objectContaining({ source: home.broken })]);
    const r = await runCli(['continue', AMP_MAIN_ID, '--from', 'amp', '--with', 'amp', '--no-resume'], {
      env: { AMP_THREADS_DIR: path.join(dir, 't'), HOME: dir },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('continuing into amp is not supported');
  });

  it('fixture home: lists, views, exports, converts and searches', async () => {
    writeAmpHome(path.join(dir, 'home', '.local', 'share', 'amp', 'threads'));
    await checkHome({
      harness: 'amp',
      env: { HOME: path.join(dir, 'home'), XDG_CACHE_HOME: path.join(dir, 'cache') },
      sessions: [
        { id: AMP_MAIN_ID, title: AMP_TITLE, word: AMP_WORD },
        { id: AMP_OLD_ID, title: AMP_OLD_TITLE, word: AMP_OLD_WORD },
      ],
      malformed: AMP_BROKEN,
      scratch: dir,
    });
  });
});
