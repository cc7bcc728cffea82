import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Transcript } from '../../model/common.ts';
import { claudeCodeCodec, claudeCodeText } from '../claude-code/index.ts';
import { blockSignature, ORPHAN_ID, sampleConversation } from '../claude-code/conversation.fixture.ts';
import { repairToolPairing } from '../orphans.ts';
import { codexStore, codexCodec, codexText, resumeCommand, rolloutFileName } from './index.ts';

const SID = '019a2b3c-4d5e-7f60-8a1b-2c3d4e5f6a7b';
const at = (s: number): string => `"timestamp":"2026-02-03T04:05:${String(s).padStart(2, '0')}.000Z"`;
const item = (s: number, payload: object): string =>
  `{${at(s)},"type":"response_item","payload":${JSON.stringify(payload)}}`;
const event = (s: number, payload: object): string =>
  `{${at(s)},"type":"event_msg","payload":${JSON.stringify(payload)}}`;

/** A small rollout in the shape Codex writes. */
const NATIVE =
  [
    `{${at(0)},"type":"session_meta","payload":{"id":"${SID}","timestamp":"2026-02-03T04:05:00.000Z","cwd":"/home/dev/app","originator":"codex_cli_rs","cli_version":"0.46.0","instructions":null,"source":"cli","model_provider":"openai","git":{"commit_hash":"abc","branch":"main"}}}`,
    item(1, {
      type: 'message',
      role: 'user',
      content: [
        {
          type: 'input_text',
          text: '<environment_context>\n  <cwd>/home/dev/app</cwd>\n</environment_context>',
        },
      ],
    }),
    `{${at(1)},"type":"turn_context","payload":{"cwd":"/home/dev/app","approval_policy":"on-request","sandbox_policy":{"type":"workspace-write"},"model":"gpt-5-codex","summary":"auto"}}`,
    item(2, { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'List the files' }] }),
    event(2, { type: 'user_message', message: 'List the files', images: [] }),
    item(3, {
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'Use ls.' }],
      content: null,
      encrypted_content: 'gAAAA-enc',
    }),
    item(4, {
      type: 'function_call',
      name: 'shell',
      arguments: '{"command":["bash","-lc","ls -la"],"workdir":"/home/dev/app","timeout_ms":10000}',
      call_id: 'call_1',
    }),
    event(4, {
      type: 'token_count',
      info: {
        last_token_usage: {
          input_tokens: 100,
          cached_input_tokens: 40,
          output_tokens: 9,
          reasoning_output_tokens: 3,
          total_tokens: 109,
        },
      },
      rate_limits: null,
    }),
    item(5, {
      type: 'function_call_output',
      call_id: 'call_1',
      output: '{"output":"a\\nb\\n","metadata":{"exit_code":0,"duration_seconds":0.1}}',
    }),
    item(6, {
      type: 'function_call',
      name: 'shell',
      arguments: '{"command":["zsh","-c","false"]}',
      call_id: 'call_2',
    }),
    item(7, {
      type: 'function_call_output',
      call_id: 'call_2',
      output: 'Exit code: 1\nWall time: 0 seconds\nOutput:\n',
    }),
    item(8, {
      type: 'custom_tool_call',
      status: 'completed',
      call_id: 'call_3',
      name: 'apply_patch',
      input: '*** Begin Patch\n*** Add File: x.txt\n+hi\n*** End Patch\n',
    }),
    item(9, {
      type: 'custom_tool_call_output',
      call_id: 'call_3',
      output: '{"output":"Success. Updated the following files:\\nA x.txt\\n","metadata":{"exit_code":0}}',
    }),
    item(10, {
      type: 'function_call',
      name: 'exec_command',
      arguments: '{"cmd":"cat x.txt"}',
      call_id: 'call_4',
    }),
    item(11, { type: 'function_call_output', call_id: 'call_4', output: 'hi' }),
    item(12, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Two files.' }] }),
    event(12, { type: 'agent_message', message: 'Two files.' }),
    event(12, {
      type: 'token_count',
      info: { last_token_usage: { input_tokens: 200, cached_input_tokens: 150, output_tokens: 4 } },
    }),
  ].join('\n') + '\n';

const ctx = { sessionId: 'fallback' };
const common = (): Transcript => codexCodec.toCommon(codexText.parse(NATIVE).records, ctx);

describe('codex text codec', () => {
  it('renders a parsed rollout byte for byte', () => {
    expect(codexText.render(codexText.parse(NATIVE).records)).toBe(NATIVE);
  });

  it('keeps malformed and off-schema lines verbatim with a warning naming file and line', () => {
    const lines = NATIVE.trimEnd().split('\n');
    const text = `${lines[0]}\r\n{oops\r\n{"type":"session_meta","payload":{"cwd":"/x"}}\n\n{"no":"type"}\n${lines[3]}`;
    const parsed = codexText.parse(text, '/r.jsonl');
    expect(codexText.render(parsed.records)).toBe(text);
    expect(parsed.warnings.map((w) => `${w.source}:${w.line}`)).toEqual([
      '/r.jsonl:2',
      '/r.jsonl:3',
      '/r.jsonl:5',
    ]);
    expect(parsed.warnings[1]!.message).toContain('payload.id');
    expect(codexCodec.toCommon(parsed.records, ctx).messages).toHaveLength(1);
  });

  it('round-trips generated JSONL byte for byte', () => {
    const line = fc.oneof(
      fc.jsonValue().map((v) => JSON.stringify({ timestamp: 't', type: 'response_item', payload: v })),
      fc.string().filter((s) => !s.includes('\n')),
      fc.constantFrom(...NATIVE.trimEnd().split('\n')),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(line, fc.constantFrom('\n', '\r\n'))),
        fc.boolean(),
        (pairs, finalNewline) => {
          let text = pairs.map(([l, e]) => l + e).join('');
          if (!finalNewline) text = text.replace(/\r?\n$/, '');
          expect(codexText.render(codexText.parse(text).records)).toBe(text);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('codex codec', () => {
  it('reads meta from session_meta and the first turn_context, and titles by the first real prompt', () => {
    expect(common().meta).toEqual({
      id: SID,
      timestamp: '2026-02-03T04:05:00.000Z',
      cwd: '/home/dev/app',
      cli_version: '0.46.0',
      git_branch: 'main',
      model: 'gpt-5-codex',
      title: 'List the files',
    });
  });

  it('maps items to blocks: scaffolding dropped, reasoning kept encrypted, shell typed only when exact', () => {
    const m = common().messages;
    expect(m.map((x) => x.role)).toEqual([
      'user',
      'assistant',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(m[1]!.content[0]).toEqual({ type: 'thinking', text: 'Use ls.', encrypted: 'gAAAA-enc' });
    expect(m[1]!.model).toBe('gpt-5-codex');
    expect(m[2]!.content[0]).toEqual({
      type: 'tool_use',
      id: 'call_1',
      tool: { name: 'Bash', command: 'ls -la', workdir: '/home/dev/app', timeout_ms: 10000 },
    });
    // OpenAI input_tokens include the cached ones; Common counts them apart.
    expect(m[2]!.usage).toEqual({ input_tokens: 60, output_tokens: 9, cache_read_input_tokens: 40 });
    expect(m[3]!.content[0]).toMatchObject({ tool_use_id: 'call_1' });
    expect(m[3]!.content[0]).not.toHaveProperty('is_error');
    expect(m[4]!.content[0]).toMatchObject({
      tool: { name: 'Raw', tool_name: 'shell', input: { command: ['zsh', '-c', 'false'] } },
    });
    expect(m[5]!.content[0]).toMatchObject({ tool_use_id: 'call_2', is_error: true });
    expect(m[6]!.content[0]).toMatchObject({ tool: { name: 'Raw', tool_name: 'apply_patch' } });
    expect(m[8]!.content[0]).toMatchObject({ tool: { name: 'Bash', command: 'cat x.txt' } });
    expect(m[10]!.usage).toEqual({ input_tokens: 50, output_tokens: 4, cache_read_input_tokens: 150 });
  });

  it('is a fixpoint: toCommon(fromCommon(c)) equals c for a native rollout', () => {
    const c1 = common();
    const c2 = codexCodec.toCommon(codexText.parse(codexText.render(codexCodec.fromCommon(c1))).records, ctx);
    expect(c2).toEqual(c1);
  });

  it('keeps the block signature Common -> native -> Common, after repairing the orphan', () => {
    const input = sampleConversation();
    const back = codexCodec.toCommon(
      codexText.parse(codexText.render(codexCodec.fromCommon(input))).records,
      ctx,
    );
    expect(blockSignature(back)).toEqual(blockSignature(repairToolPairing(input)));
    expect(blockSignature(back)).toContain(
      `user:text:[tool result for unknown call ${ORPHAN_ID}]\nstray output`,
    );
    expect(blockSignature(back)).toContain('user:tool_result:toolu_bash:error');
    expect(back.messages.find((m) => m.content[0]?.type === 'tool_use')!.content[0]).toEqual({
      type: 'tool_use',
      id: 'toolu_bash',
      tool: { name: 'Bash', command: 'npm test', timeout_ms: 60000 },
    });
  });

  it('writes a resumable rollout: session_meta first, both logs, the custom call answered in kind', () => {
    const lines = codexCodec
      .fromCommon(common())
      .map((l) =>
        l.kind === 'record' ? (l.json as { type: string; payload: Record<string, unknown> }) : undefined,
      );
    expect(lines[0]).toMatchObject({
      type: 'session_meta',
      payload: {
        id: SID,
        cwd: '/home/dev/app',
        originator: 'codex_cli_rs',
        cli_version: '0.46.0',
        model_provider: 'openai',
        git: { branch: 'main' },
      },
    });
    const payloads = lines.map((l) => l!.payload);
    expect(payloads.some((p) => p.type === 'user_message' && p.message === 'List the files')).toBe(true);
    expect(payloads.some((p) => p.type === 'agent_message' && p.message === 'Two files.')).toBe(true);
    expect(payloads.find((p) => p.call_id === 'call_3' && p.type !== 'custom_tool_call')!.type).toBe(
      'custom_tool_call_output',
    );
    expect(payloads.find((p) => p.type === 'function_call' && p.call_id === 'call_4')).toMatchObject({
      name: 'shell',
      arguments: JSON.stringify({ command: ['bash', '-lc', 'cat x.txt'] }),
    });
  });

  it('carries a conversation Claude Code -> Codex -> Claude Code with its blocks intact', () => {
    const input = repairToolPairing(sampleConversation());
    const viaCodex = codexCodec.toCommon(codexCodec.fromCommon(input), ctx);
    const claude = claudeCodeCodec.toCommon(
      claudeCodeText.parse(claudeCodeText.render(claudeCodeCodec.fromCommon(viaCodex))).records,
      ctx,
    );
    expect(blockSignature(claude)).toEqual(blockSignature(input));
  });
});

describe('codex store', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'txcript-codex-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('discovers dated and archived rollouts under CODEX_HOME and loads by id', async () => {
    const home = path.join(dir, 'codex-home');
    const day = path.join(home, 'sessions', '2026', '02', '03');
    await fs.mkdir(day, { recursive: true });
    await fs.writeFile(path.join(day, `rollout-2026-02-03T04-05-00-${SID}.jsonl`), NATIVE);
    const archivedId = '019a2b3c-0000-7000-8000-000000000001';
    await fs.mkdir(path.join(home, 'archived_sessions'));
    await fs.writeFile(
      path.join(home, 'archived_sessions', `rollout-2026-01-01T00-00-00-${archivedId}.jsonl`),
      NATIVE.replace(SID, archivedId),
    );
    await fs.writeFile(
      path.join(day, 'rollout-2026-02-03T00-00-00-not-a-session.jsonl'),
      '{"type":"event_msg","payload":{"type":"x"}}\n',
    );
    const store = codexStore({ HOME: path.join(dir, 'home'), CODEX_HOME: home });
    const { sessions, warnings } = await store.discover();
    expect(sessions.map((s) => s.id).sort()).toEqual([archivedId, SID].sort());
    expect(sessions.find((s) => s.id === SID)).toMatchObject({
      title: 'List the files',
      messageCount: 12,
      lastActivity: '2026-02-03T04:05:12.000Z',
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.message).toMatch(/no session_meta/);
    const loaded = await store.load(SID);
    expect(loaded.transcript.messages).toHaveLength(11);
    expect((await store.load(archivedId)).transcript.meta.id).toBe(archivedId);
  });

  it('saves into the dated tree under TXCRIPT_CODEX_ROOT, loads back, and never overwrites', async () => {
    const root = path.join(dir, 'root');
    const store = codexStore({ HOME: dir, TXCRIPT_CODEX_ROOT: root });
    const t = sampleConversation();
    const saved = await store.save(t);
    expect(saved.locator).toBe(
      path.join(root, '2026', '01', '02', rolloutFileName(t.meta.timestamp, t.meta.id)),
    );
    expect(path.basename(saved.locator)).toBe(`rollout-2026-01-02T03-04-00-${t.meta.id}.jsonl`);
    const loaded = await store.load(saved.id);
    expect(blockSignature(loaded.transcript)).toEqual(blockSignature(repairToolPairing(t)));
    await expect(store.save(t)).rejects.toThrow(/refusing to overwrite/);
    await expect(store.load('a/b')).rejects.toThrow(/refusing session id/);
    const def = codexStore({ HOME: dir });
    expect((await def.save(t)).locator.startsWith(path.join(dir, '.codex', 'sessions'))).toBe(true);
  });
});

describe('codex resume command', () => {
  it('defaults to codex resume <id> and honours TXCRIPT_CODEX_RESUME', () => {
    expect(resumeCommand(SID, {})).toEqual(['codex', 'resume', SID]);
    expect(resumeCommand(SID, { TXCRIPT_CODEX_RESUME: 'codex --profile "my p" resume {id}' })).toEqual([
      'codex',
      '--profile',
      'my p',
      'resume',
      SID,
    ]);
    expect(() => resumeCommand('..', {})).toThrow(/refusing/);
  });
});
