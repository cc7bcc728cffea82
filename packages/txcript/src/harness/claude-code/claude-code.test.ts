import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Transcript } from '../../model/common.ts';
import { repairToolPairing } from '../orphans.ts';
import { blockSignature, ORPHAN_ID, sampleConversation } from './conversation.fixture.ts';
import {
  claudeCodeStore,
  claudeCodeCodec,
  claudeCodeText,
  claudeProjectDirName,
  resumeCommand,
} from './index.ts';
import { renderJsonl } from '../jsonl.ts';
import { topLevelString } from '../jsonl-scan.ts';

const SID = '0b9f7a52-3c1e-4d6a-9f00-7e2d1c4b5a69';
const env0 = `"isSidechain":false,"userType":"external","cwd":"/home/dev/app","sessionId":"${SID}","version":"2.0.14","gitBranch":"main"`;

/** A small native session in the shape Claude Code writes. */
const NATIVE =
  [
    `{"type":"summary","summary":"Parser fix","leafUuid":"u4"}`,
    `{"parentUuid":null,${env0},"type":"user","message":{"role":"user","content":"Fix the parser"},"uuid":"u1","timestamp":"2026-01-02T03:04:01.000Z"}`,
    `{"parentUuid":"u1",${env0},"message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":"Tests first.","signature":"sig1"},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"npm test","description":"Run tests","timeout":60000}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":7,"cache_read_input_tokens":100,"cache_creation_input_tokens":5}},"type":"assistant","uuid":"u2","timestamp":"2026-01-02T03:04:02.000Z"}`,
    `{"parentUuid":"u2",${env0},"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"1 failing","is_error":true}]},"uuid":"u3","timestamp":"2026-01-02T03:04:03.000Z","toolUseResult":{"stdout":"1 failing","stderr":"","interrupted":false}}`,
    `{"type":"file-history-snapshot","messageId":"u3","snapshot":{}}`,
    `{"parentUuid":"u3",${env0},"message":{"id":"msg_2","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_2","name":"Read","input":{"file_path":"/home/dev/app/p.ts"}},{"type":"tool_use","id":"toolu_3","name":"Bash","input":{"command":"ls","timeout_ms":5}}],"stop_reason":"tool_use","usage":{"input_tokens":3,"output_tokens":2}},"type":"assistant","uuid":"u4","timestamp":"2026-01-02T03:04:04.000Z"}`,
    `{"parentUuid":"u4",${env0},"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_2","type":"tool_result","content":[{"type":"text","text":"file body"}]},{"tool_use_id":"toolu_3","type":"tool_result","content":"a b"}]},"uuid":"u5","timestamp":"2026-01-02T03:04:05.000Z"}`,
    `{"parentUuid":"u5",${env0},"message":{"id":"msg_3","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Done."}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}},"type":"assistant","uuid":"u6","timestamp":"2026-01-02T03:04:06.000Z"}`,
  ].join('\n') + '\n';

const ctx = { sessionId: 'fallback' };

describe('claude_code text codec', () => {
  it('renders a parsed file byte for byte', () => {
    expect(claudeCodeText.render(claudeCodeText.parse(NATIVE).records)).toBe(NATIVE);
  });

  it('keeps CRLF, blank lines, malformed lines and a missing final newline, warning per bad line', () => {
    const lines = NATIVE.trimEnd().split('\n');
    const text = `${lines[1]}\r\n\r\n   \n{not json\n[1,2]\n${lines[2]}`;
    const parsed = claudeCodeText.parse(text, '/tmp/s.jsonl');
    expect(claudeCodeText.render(parsed.records)).toBe(text);
    expect(parsed.warnings.map((w) => [w.source, w.line])).toEqual([
      ['/tmp/s.jsonl', 4],
      ['/tmp/s.jsonl', 5],
    ]);
    // The good lines still make a conversation.
    expect(claudeCodeCodec.toCommon(parsed.records, ctx).messages).toHaveLength(2);
  });

  it('keeps a user record that fails the envelope schema, with a warning naming the field', () => {
    const bad = `{"type":"user","message":{"role":"user","content":"x"}}`;
    const parsed = claudeCodeText.parse(bad, 'f.jsonl');
    expect(parsed.records[0]!.kind === 'record' && parsed.records[0]!.shape).toBe('other');
    expect(parsed.warnings[0]!.message).toContain('uuid');
    expect(claudeCodeText.render(parsed.records)).toBe(bad);
  });

  it('round-trips generated JSONL byte for byte', () => {
    const jsonLine = fc.jsonValue().map((v) => JSON.stringify({ type: 'user', v }));
    const line = fc.oneof(
      jsonLine,
      fc.constantFrom('', '  ', '{', 'null', '"s"', '{"type":"assistant"}'),
      fc.string().filter((s) => !s.includes('\n')),
      fc.constantFrom(...NATIVE.trimEnd().split('\n')),
    );
    const eol = fc.constantFrom('\n', '\r\n');
    fc.assert(
      fc.property(fc.array(fc.tuple(line, eol)), fc.boolean(), (pairs, finalNewline) => {
        let text = pairs.map(([l, e]) => l + e).join('');
        if (!finalNewline && text.endsWith('\n')) text = text.replace(/\r?\n$/, '');
        expect(claudeCodeText.render(claudeCodeText.parse(text).records)).toBe(text);
      }),
      { numRuns: 300 },
    );
  });

  it('finds a top-level string without parsing, and ignores nested or escaped keys', () => {
    expect(topLevelString('{"message":{"type":"x"},"type":"user"}', 'type')).toBe('user');
    expect(topLevelString('{"a":"\\"type\\":\\"no\\"","type":"a\\"b"}', 'type')).toBe('a"b');
    expect(topLevelString('{"a":[{"type":"x"}]}', 'type')).toBeUndefined();
    expect(topLevelString('[1]', 'type')).toBeUndefined();
  });

  it('stringifies built records', () => {
    expect(renderJsonl([{ kind: 'record', json: { a: 1 }, end: '\n' }])).toBe('{"a":1}\n');
  });
});

describe('claude_code codec', () => {
  const common = (): Transcript => claudeCodeCodec.toCommon(claudeCodeText.parse(NATIVE).records, ctx);

  it('reads meta from the envelope and the summary', () => {
    expect(common().meta).toEqual({
      id: SID,
      timestamp: '2026-01-02T03:04:01.000Z',
      cwd: '/home/dev/app',
      git_branch: 'main',
      cli_version: '2.0.14',
      model: 'claude-sonnet-4-5',
      title: 'Parser fix',
    });
  });

  it('maps blocks, tools, usage and stop reasons', () => {
    const [, a1, r1, a2, r2] = common().messages;
    expect(a1!.content[0]).toEqual({ type: 'thinking', text: 'Tests first.', signature: 'sig1' });
    // Claude's `timeout` is Common's `timeout_ms`.
    expect(a1!.content[1]).toEqual({
      type: 'tool_use',
      id: 'toolu_1',
      tool: { name: 'Bash', command: 'npm test', description: 'Run tests', timeout_ms: 60000 },
    });
    expect(a1!.usage).toEqual({
      input_tokens: 12,
      output_tokens: 7,
      cache_read_input_tokens: 100,
      cache_creation_input_tokens: 5,
    });
    expect(a1!.stop_reason).toBe('tool_use');
    expect(r1!.content[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_1',
      content: '1 failing',
      is_error: true,
    });
    expect(a2!.content[0]).toMatchObject({ tool: { name: 'Read', file_path: '/home/dev/app/p.ts' } });
    // A Bash input that already says timeout_ms cannot be renamed back exactly: Raw.
    expect(a2!.content[1]).toMatchObject({
      tool: { name: 'Raw', tool_name: 'Bash', input: { command: 'ls', timeout_ms: 5 } },
    });
    expect(r2!.content[0]).toMatchObject({ content: [{ type: 'text', text: 'file body' }] });
  });

  it('titles a session by its first prompt when it has no summary', () => {
    const text = NATIVE.split('\n').slice(1).join('\n');
    expect(claudeCodeCodec.toCommon(claudeCodeText.parse(text).records, ctx).meta.title).toBe(
      'Fix the parser',
    );
  });

  it('is a fixpoint: toCommon(fromCommon(c)) equals c for a native session', () => {
    const c1 = common();
    const c2 = claudeCodeCodec.toCommon(claudeCodeCodec.fromCommon(c1), ctx);
    expect(c2).toEqual(c1);
  });

  it('keeps the block signature Common -> native -> Common, after repairing the orphan', () => {
    const input = sampleConversation();
    const native = claudeCodeCodec.fromCommon(input);
    const back = claudeCodeCodec.toCommon(claudeCodeText.parse(claudeCodeText.render(native)).records, ctx);
    expect(blockSignature(back)).toEqual(blockSignature(repairToolPairing(input)));
    expect(blockSignature(back)).toContain(
      `user:text:[tool result for unknown call ${ORPHAN_ID}]\nstray output`,
    );
    expect(blockSignature(back)).toContain('user:tool_result:toolu_bash:error');
    expect(back.messages[1]!.content[0]).toEqual({
      type: 'thinking',
      text: 'Look at the tests first.',
      signature: 'sig-abc',
    });
    expect(back.meta).toMatchObject({ id: input.meta.id, title: 'Fix the parser', cwd: '/home/dev/app' });
  });

  it('writes a resumable session: summary anchored to a real record, a parentUuid chain, fresh uuids', () => {
    const native = claudeCodeCodec.fromCommon(sampleConversation());
    const json = native.map((l) => (l.kind === 'record' ? (l.json as Record<string, unknown>) : {}));
    const [summary, ...entries] = json;
    expect(summary).toMatchObject({ type: 'summary', summary: 'Fix the parser' });
    const uuids = entries.map((e) => e.uuid);
    expect(new Set(uuids).size).toBe(entries.length);
    expect(summary!.leafUuid).toBe(uuids.at(-1));
    entries.forEach((e, i) => {
      expect(e.parentUuid).toBe(i === 0 ? null : uuids[i - 1]);
      expect(e).toMatchObject({
        sessionId: sampleConversation().meta.id,
        cwd: '/home/dev/app',
        version: '2.0.14',
        userType: 'external',
        isSidechain: false,
      });
      expect(typeof e.timestamp).toBe('string');
    });
    expect(entries[0]!.message).toEqual({ role: 'user', content: 'Fix the parser\nplease' });
    expect(entries[1]!.message).toMatchObject({
      role: 'assistant',
      type: 'message',
      stop_reason: 'tool_use',
    });
    // Bash goes back to Claude's `timeout` key.
    const bash = (entries[1]!.message as { content: Record<string, unknown>[] }).content[2];
    expect(bash).toEqual({
      type: 'tool_use',
      id: 'toolu_bash',
      name: 'Bash',
      input: { command: 'npm test', timeout: 60000 },
    });
  });

  it('wraps a non-object tool input and makes foreign ids API-safe', () => {
    const t: Transcript = {
      meta: { id: 'not-a-uuid', timestamp: '2026-01-01T00:00:00.000Z' },
      messages: [
        {
          role: 'assistant',
          timestamp: '2026-01-01T00:00:00.000Z',
          content: [
            {
              type: 'tool_use',
              id: 'call:1',
              tool: { name: 'Raw', tool_name: 'apply_patch', input: '*** Begin Patch' },
            },
          ],
        },
        {
          role: 'user',
          timestamp: '2026-01-01T00:00:00.000Z',
          content: [{ type: 'tool_result', tool_use_id: 'call:1', content: 'Done' }],
        },
      ],
    };
    const back = claudeCodeCodec.toCommon(claudeCodeCodec.fromCommon(t), ctx);
    expect(back.messages[0]!.content[0]).toEqual({
      type: 'tool_use',
      id: 'call_1',
      tool: { name: 'Raw', tool_name: 'apply_patch', input: { input: '*** Begin Patch' } },
    });
    expect(back.messages[1]!.content[0]).toMatchObject({ tool_use_id: 'call_1' });
    expect(back.meta.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('reports a malformed known block through the warning sink and skips it', () => {
    const line = `{"parentUuid":null,${env0},"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":7},{"type":"text","text":"ok"}]},"uuid":"x","timestamp":"2026-01-02T03:04:01.000Z"}`;
    const warnings: string[] = [];
    const t = claudeCodeCodec.toCommon(claudeCodeText.parse(line).records, {
      ...ctx,
      onWarning: (w) => warnings.push(`${w.line}:${w.message}`),
    });
    expect(t.messages[0]!.content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(warnings[0]).toMatch(/^1:line 1 content\[0\]: tool_use block/);
  });
});

describe('claude_code store', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'txcript-cc-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('finds sessions under CLAUDE_CONFIG_DIR, loads them, and lists subagents with their parent', async () => {
    const project = path.join(dir, 'cfg', 'projects', claudeProjectDirName('/home/dev/app'));
    await fs.mkdir(path.join(project, SID, 'subagents'), { recursive: true });
    await fs.writeFile(path.join(project, `${SID}.jsonl`), NATIVE);
    await fs.writeFile(
      path.join(project, SID, 'subagents', 'agent-1.jsonl'),
      NATIVE.split('\n').slice(1, 3).join('\n'),
    );
    const store = claudeCodeStore({
      HOME: path.join(dir, 'home'),
      CLAUDE_CONFIG_DIR: path.join(dir, 'cfg'),
    });
    const { sessions } = await store.discover();
    const main = sessions.find((s) => s.id === SID);
    expect(main).toMatchObject({
      title: 'Parser fix',
      messageCount: 6,
      lastActivity: '2026-01-02T03:04:06.000Z',
      harness: 'claude_code',
    });
    expect(sessions.find((s) => s.id === 'agent-1')).toMatchObject({ parentId: SID, messageCount: 2 });
    const loaded = await store.load(SID);
    expect(loaded.source).toBe(path.join(project, `${SID}.jsonl`));
    expect(loaded.transcript.messages).toHaveLength(6);
  });

  it('prefers TXCRIPT_CLAUDE_CODE_ROOT and defaults to ~/.claude/projects', async () => {
    const a = claudeCodeStore({ HOME: dir, TXCRIPT_CLAUDE_CODE_ROOT: path.join(dir, 'x') });
    const b = claudeCodeStore({ HOME: dir });
    const saved = await a.save(sampleConversation());
    expect(saved.locator).toBe(path.join(dir, 'x', '-home-dev-app', `${saved.id}.jsonl`));
    const saved2 = await b.save(sampleConversation());
    expect(saved2.locator).toBe(path.join(dir, '.claude', 'projects', '-home-dev-app', `${saved2.id}.jsonl`));
  });

  it('saves atomically, loads back the same blocks, and never overwrites', async () => {
    const store = claudeCodeStore({ HOME: dir });
    const t = sampleConversation();
    const saved = await store.save(t);
    expect(saved.id).toBe(t.meta.id);
    const loaded = await store.load(saved.id);
    expect(blockSignature(loaded.transcript)).toEqual(blockSignature(repairToolPairing(t)));
    const before = await fs.readFile(saved.locator, 'utf8');
    await expect(store.save({ ...t, meta: { ...t.meta, cwd: '/elsewhere' } })).rejects.toThrow(
      /refusing to overwrite/,
    );
    expect(await fs.readFile(saved.locator, 'utf8')).toBe(before);
    const leftovers = (await fs.readdir(path.dirname(saved.locator))).filter((f) => f.endsWith('.tmp'));
    expect(leftovers).toEqual([]);
  });

  it('refuses unsafe ids and a transcript without cwd', async () => {
    const store = claudeCodeStore({ HOME: dir });
    for (const id of ['../x', 'a/b', 'a\\b', 'a\0b', ''])
      await expect(store.load(id)).rejects.toThrow(/refusing session id/);
    const t = sampleConversation();
    delete t.meta.cwd;
    await expect(store.save(t)).rejects.toThrow(/no cwd/);
    await expect(store.load('missing')).rejects.toThrow(/no session missing/);
  });

  it('maps a cwd to its project folder name', () => {
    expect(claudeProjectDirName('/Users/a.b/my_app')).toBe('-Users-a-b-my-app');
  });
});

describe('claude_code resume command', () => {
  it('defaults to claude --resume <id>', () => {
    expect(resumeCommand(SID, {})).toEqual(['claude', '--resume', SID]);
  });
  it('fills an {id} template into argv without a shell', () => {
    expect(
      resumeCommand('abc', {
        TXCRIPT_CLAUDE_CODE_RESUME: `mytool --open {id} "two words" 'lit $HOME' x\\ y --s={id}`,
      }),
    ).toEqual(['mytool', '--open', 'abc', 'two words', 'lit $HOME', 'x y', '--s=abc']);
  });
  it('appends the id to a template without {id}, and rejects bad templates and ids', () => {
    expect(resumeCommand('abc', { TXCRIPT_CLAUDE_CODE_RESUME: 'claude -r' })).toEqual([
      'claude',
      '-r',
      'abc',
    ]);
    expect(() => resumeCommand('abc', { TXCRIPT_CLAUDE_CODE_RESUME: 'x "open' })).toThrow(
      /TXCRIPT_CLAUDE_CODE_RESUME: unterminated/,
    );
    expect(() => resumeCommand('../etc', {})).toThrow(/refusing session id/);
  });
});
