/**
 * A session read line by line, and written in pieces, is the session read
 * and written whole: same transcript, same warnings in the same order, same
 * bytes. Real files in a temp folder.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Transcript } from '../model/common.ts';
import { claudeCode } from './claude-code/index.ts';
import { sampleConversation } from './claude-code/conversation.fixture.ts';
import { codex } from './codex/index.ts';
import { uuidV5 } from '../model/uuid.ts';
import { simple } from './simple/index.ts';
import { readSessionText, renderSessionText } from './session-text.ts';
import type { Harness, Warning, WarningContext } from './types.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'txcript-session-text-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const SID = '3c2b1a09-8f7e-4d6c-9b5a-4f3e2d1c0b9a';
/** The namespace of the ids the Codex codec gives calls without one. */
const SYNTHETIC_CALLS = '8d3b2a61-0f4e-4c7a-9b25-6e1f0c9d4a77';
const env = (side = false): string =>
  `"isSidechain":${side},"userType":"external","cwd":"/w/app","sessionId":"${SID}","version":"2.1.3"`;
const user = (
  uuid: string,
  parent: string | null,
  content: unknown,
  opts: { side?: boolean; ts?: string } = {},
) =>
  `{"parentUuid":${JSON.stringify(parent)},${env(opts.side)},"type":"user","message":{"role":"user","content":${JSON.stringify(content)}},"uuid":"${uuid}"${opts.ts === undefined ? '' : `,"timestamp":"${opts.ts}"`}}`;
const assistant = (
  uuid: string,
  parent: string,
  content: unknown,
  opts: { side?: boolean; ts?: string } = {},
) =>
  `{"parentUuid":"${parent}",${env(opts.side)},"type":"assistant","message":{"id":"m_${uuid}","type":"message","role":"assistant","model":"claude-opus-4-1","content":${JSON.stringify(content)},"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}},"uuid":"${uuid}"${opts.ts === undefined ? '' : `,"timestamp":"${opts.ts}"`}}`;

/** Lines of every kind the Claude Code reader treats apart. */
const POOL = [
  user('u1', null, 'Investigate the crash', { ts: '2026-03-01T10:00:04.000Z' }),
  assistant(
    'a1',
    'u1',
    [
      {
        type: 'tool_use',
        id: 'toolu_A',
        name: 'Task',
        input: { description: 'Logs', prompt: 'Read the logs' },
      },
    ],
    { ts: '2026-03-01T10:00:02.000Z' },
  ),
  user('s1', null, 'Read the logs', { side: true, ts: '2026-03-01T10:00:01.000Z' }),
  assistant(
    's2',
    's1',
    [
      { type: 'thinking', thinking: 7 },
      { type: 'text', text: 'OOM' },
    ],
    { side: true },
  ),
  user('u2', 'a1', [{ type: 'tool_result', tool_use_id: 'toolu_A', content: 'OOM' }]),
  assistant(
    'a2',
    'u2',
    [
      { type: 'thinking', thinking: 7 },
      { type: 'text', text: 'é ✓ 😀 done' },
    ],
    { ts: '2026-03-01T10:00:09.000Z' },
  ),
  `{"parentUuid":"u2",${env()},"type":"system","subtype":"local_command","content":"<command-name>/cost</command-name>","level":"info","isMeta":false,"uuid":"k1","timestamp":"2026-03-01T10:00:03.000Z"}`,
  `{"parentUuid":"k1",${env()},"type":"system","subtype":"local_command","content":"<local-command-stdout>$0.12</local-command-stdout>","level":"info","isMeta":false,"uuid":"k2"}`,
  `{"type":"summary","summary":"Crash found","leafUuid":"a2"}`,
  `{"type":"custom-title","customTitle":"Renamed"}`,
  `{"type":"file-history-snapshot","messageId":"u2","snapshot":{}}`,
  `{"type":"user","message":{"role":"user","content":"no uuid"}}`,
  `{"parentUuid":"a1","type":"user","message":{"role":"user","content":"cut`,
  `{"parentUuid":"a1","type":"us${user('g1', 'a1', 'glued')}`,
  '{not json',
  '[1,2]',
  '',
  '   ',
];

/** What reading `text` whole gives: text.parse, then codec.toCommon, warnings in that order. */
function readWhole(
  harness: Harness,
  text: string,
  source: string,
): { transcript: Transcript; warnings: Warning[] } {
  const parsed = harness.text.parse(text, source);
  const codecWarnings: Warning[] = [];
  const ctx: WarningContext = { sessionId: 'fallback', source, onWarning: (w) => codecWarnings.push(w) };
  const transcript = harness.codec.toCommon(parsed.records, ctx);
  return { transcript, warnings: [...parsed.warnings, ...codecWarnings] };
}

async function readStreamed(
  harness: Harness,
  input: { file: string } | { text: string },
  source = 'file' in input ? input.file : '<stdin>',
): Promise<{ transcript: Transcript; warnings: Warning[] }> {
  const codecWarnings: Warning[] = [];
  const read = await readSessionText(harness, input, source, {
    sessionId: 'fallback',
    source,
    onWarning: (w) => codecWarnings.push(w),
  });
  return { transcript: read.transcript, warnings: [...read.warnings, ...codecWarnings] };
}

describe('readSessionText', () => {
  it('reads a Claude Code file line by line, never through the whole-text parser', async () => {
    const file = join(dir, 's.jsonl');
    writeFileSync(file, `${POOL.join('\n')}\n`);
    const streamingOnly: Harness = {
      ...claudeCode,
      text: { ...claudeCode.text, parse: () => expect.unreachable('the text was parsed whole') },
    };
    const streamed = await readStreamed(streamingOnly, { file });
    expect(streamed).toEqual(readWhole(claudeCode, `${POOL.join('\n')}\n`, file));
    // The sidechain, its bad block and the lines after the first main entry are read as the split says.
    expect(streamed.transcript.meta.title).toBe('Renamed');
    expect(streamed.transcript.messages.map((m) => m.timestamp)).toEqual([
      '2026-03-01T10:00:04.000Z',
      '2026-03-01T10:00:02.000Z',
      // No time of its own: the earliest time of the main conversation (the sidechain's is not one).
      '2026-03-01T10:00:02.000Z',
      '2026-03-01T10:00:09.000Z',
      '2026-03-01T10:00:03.000Z',
      '2026-03-01T10:00:02.000Z',
      '2026-03-01T10:00:02.000Z',
    ]);
    // Only the main conversation's bad block is reported (line 6), not the sidechain's (line 4).
    expect(streamed.warnings.filter((w) => /thinking block/.test(w.message)).map((w) => w.line)).toEqual([6]);
  });

  it('leaves out sidechain lines read before the first main line, and their warnings', async () => {
    const text = `${[POOL[2], POOL[3], POOL[0], POOL[5]].join('\n')}\n`;
    const file = join(dir, 'late-main.jsonl');
    writeFileSync(file, text);
    const streamed = await readStreamed(claudeCode, { file });
    expect(streamed).toEqual(readWhole(claudeCode, text, file));
    expect(streamed.transcript.messages.map((m) => m.timestamp)).toEqual([
      '2026-03-01T10:00:04.000Z',
      '2026-03-01T10:00:09.000Z',
    ]);
    expect(streamed.warnings.map((w) => w.line)).toEqual([4]);
  });

  it('reads a file that is all sidechain as that conversation, with its warnings', async () => {
    const text = `${[POOL[2], POOL[3], POOL[10]].join('\n')}\n`;
    const file = join(dir, 'agent.jsonl');
    writeFileSync(file, text);
    const streamed = await readStreamed(claudeCode, { file });
    expect(streamed).toEqual(readWhole(claudeCode, text, file));
    expect(streamed.transcript.messages).toHaveLength(2);
    expect(streamed.warnings.map((w) => w.line)).toEqual([2]);
  });

  it('gives what the whole read gives for any mix of lines and terminators', async () => {
    const file = join(dir, 'mix.jsonl');
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom(...POOL), fc.constantFrom('\n', '\r\n')), { maxLength: 30 }),
        fc.boolean(),
        async (pairs, finalNewline) => {
          let text = pairs.map(([l, e]) => l + e).join('');
          if (!finalNewline) text = text.replace(/\r?\n$/, '');
          writeFileSync(file, text);
          expect(await readStreamed(claudeCode, { file })).toEqual(readWhole(claudeCode, text, file));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('reads text held whole (stdin) the same way', async () => {
    const text = `${POOL.join('\n')}\n`;
    expect(await readStreamed(claudeCode, { text })).toEqual(readWhole(claudeCode, text, '<stdin>'));
  });
});

const CODEX_PROTOCOL = [
  '{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\\"command\\":[\\"ls\\"]}"}}',
  '{"timestamp":"2026-04-01T09:00:00.000Z","type":"session_meta","payload":{"id":"aaaaaaaa-1111-4222-8333-444444444444","timestamp":"2026-04-01T08:59:00.000Z","cwd":"/w","cli_version":"0.50.0"}}',
  '{"timestamp":"2026-04-01T09:00:01.000Z","type":"turn_context","payload":{"model":"gpt-5"}}',
  '{"timestamp":"2026-04-01T09:00:02.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"List files"}]}}',
  '{"timestamp":"2026-04-01T09:00:03.000Z","type":"response_item","payload":{"type":"reasoning","summary":[],"encrypted_content":"xyz"}}',
  '{"timestamp":"2026-04-01T09:00:04.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\\"command\\":[\\"pwd\\"]}"}}',
  '{"timestamp":"2026-04-01T09:00:05.000Z","type":"response_item","payload":{"type":"function_call_output","output":"x"}}',
  '{"timestamp":"2026-04-01T09:00:06.000Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":10,"cached_input_tokens":4,"output_tokens":2}}}}',
  '{"type":"event_msg","payload":{"type":"user_message","message":"ignored here"}}',
];

const CODEX_DISPLAY = [
  '{"timestamp":"2026-04-01T09:00:00.000Z","type":"event_msg","payload":{"type":"user_message","message":"Hello there"}}',
  '{"type":"event_msg","payload":{"type":"agent_message","message":"Hi"}}',
  '{"timestamp":"2026-04-01T09:00:03.000Z","type":"turn_context","payload":{"model":"gpt-5-codex"}}',
  '{"timestamp":"2026-04-01T09:00:04.000Z","type":"event_msg","payload":{"type":"agent_reasoning","text":"think"}}',
  '{"timestamp":"2026-04-01T09:00:05.000Z","type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"input_tokens":3,"output_tokens":1}}}}',
  '{"timestamp":"2026-04-01T09:00:06.000Z","type":"response_item","payload":{"type":"web_search_call"}}',
];

describe('readSessionText of Codex rollouts', () => {
  it('reads a rollout line by line, filling in what only later lines tell (start, id) as a whole read does', async () => {
    const text = `${CODEX_PROTOCOL.join('\n')}\n`;
    const file = join(dir, 'rollout.jsonl');
    writeFileSync(file, text);
    const streamingOnly: Harness = {
      ...codex,
      text: { ...codex.text, parse: () => expect.unreachable('the text was parsed whole') },
    };
    const streamed = await readStreamed(streamingOnly, { file });
    expect(streamed).toEqual(readWhole(codex, text, file));
    const { meta, messages } = streamed.transcript;
    expect(meta).toMatchObject({
      id: 'aaaaaaaa-1111-4222-8333-444444444444',
      model: 'gpt-5',
      title: 'List files',
    });
    // A call before session_meta still takes its id from it; a line with no time takes the start.
    const ids = messages.flatMap((m) => m.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : [])));
    expect(ids).toEqual([
      uuidV5(SYNTHETIC_CALLS, 'aaaaaaaa-1111-4222-8333-444444444444:0'),
      uuidV5(SYNTHETIC_CALLS, 'aaaaaaaa-1111-4222-8333-444444444444:1'),
    ]);
    expect(messages.map((m) => m.timestamp)).toEqual([
      '2026-04-01T08:59:00.000Z',
      '2026-04-01T09:00:02.000Z',
      '2026-04-01T09:00:04.000Z',
    ]);
    expect(streamed.warnings.map((w) => [w.source, w.message])).toEqual([
      [file, 'function_call_output without call_id; skipped'],
    ]);
  });

  it('reads a rollout with no protocol items from its display log, and one that has them from its protocol log', async () => {
    const file = join(dir, 'events.jsonl');
    for (const lines of [CODEX_DISPLAY, [...CODEX_DISPLAY, CODEX_PROTOCOL[3]!]]) {
      const text = `${lines.join('\n')}\n`;
      writeFileSync(file, text);
      const streamed = await readStreamed(codex, { file });
      expect(streamed).toEqual(readWhole(codex, text, file));
      expect(streamed.transcript.messages.map((m) => m.content[0]!.type)).toEqual(
        lines === CODEX_DISPLAY ? ['text', 'text', 'thinking'] : ['text'],
      );
    }
  });

  it('gives what the whole read gives for any mix of rollout lines', async () => {
    const file = join(dir, 'mix.jsonl');
    const pool = [
      ...CODEX_PROTOCOL,
      ...CODEX_DISPLAY,
      '{broken',
      '',
      '{"type":"event_msg","payload":{"type":"us{"timestamp":"2026-04-01T09:00:00.000Z","type":"turn_context","payload":{}}',
    ];
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...pool), { maxLength: 25 }), async (lines) => {
        const text = lines.map((l) => `${l}\n`).join('');
        writeFileSync(file, text);
        expect(await readStreamed(codex, { file })).toEqual(readWhole(codex, text, file));
      }),
      { numRuns: 200 },
    );
  });
});

describe('renderSessionText', () => {
  const empty: Transcript = { meta: { id: SID, timestamp: '2026-03-01T10:00:00.000Z' }, messages: [] };

  it('writes Codex and Simple in pieces that join to the whole rendering', () => {
    for (const harness of [codex, simple] as Harness[]) {
      for (const t of [sampleConversation(), empty]) {
        const pieces = [...renderSessionText(harness, t)];
        if (t.messages.length > 0) expect(pieces.length).toBeGreaterThan(t.messages.length);
        expect(pieces.join('')).toBe(harness.text.render(harness.codec.fromCommon(t)));
      }
    }
  });

  it('renders a harness that cannot stream whole, as one piece', () => {
    const t = sampleConversation();
    expect([...renderSessionText(claudeCode, t)]).toEqual([
      claudeCode.text.render(claudeCode.codec.fromCommon(t)),
    ]);
  });
});
